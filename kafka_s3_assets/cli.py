"""``kafka-s3-assets``: the command line."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import warnings
from pathlib import Path

from .sink.errors import ConfigError


def _cmd_export(args: argparse.Namespace) -> int:
    from rich.console import Console

    from .clients.errors import ExternalSystemError
    from .defs.connections import Connections
    from .defs.connectors import load_connector
    from .defs.materialize import cli_instance, materialize_partitions, resolve_partitions
    from .defs.progress_display import console_progress
    from .export.kafka_env import kafka_env_settings
    from .export.settings import resolve_settings
    from .sink.secrets import scrub

    connector = load_connector(args.config, args.worker_config)
    settings = resolve_settings(connector.raw, kafka_client_settings=kafka_env_settings())
    try:
        connections = Connections()  # where Spark runs: a bad choice fails here, before any run
        keys = resolve_partitions(connector, settings, args.partition or [])
    except (ValueError, ExternalSystemError) as exc:
        print(f"error: {scrub(str(exc), settings.secrets())}", file=sys.stderr)
        return 2
    # Progress goes to stderr (stdout carries the results): a live display on a terminal, else plain lines.
    with console_progress(Console(file=sys.stderr)):
        outcomes = materialize_partitions(
            connector,
            settings,
            keys,
            cli_instance(),
            connections=connections,
            log_level="DEBUG" if args.verbose else "WARNING",
        )
    entries = [o.to_json() for o in outcomes]
    if args.json:
        print(json.dumps({"connector": connector.name, "partitions": entries}, indent=2))
    else:
        for e in entries:
            if e["success"]:
                span = (
                    "nothing new"
                    if e["records"] == 0 and e["records_tolerated"] == 0 and e["records_dropped"] == 0
                    else f"offsets {e['start_offset']}..{e['end_offset']}"
                )
                tolerated = f", {e['records_tolerated']} tolerated" if e["records_tolerated"] else ""
                tolerated += f", {e['records_dropped']} dropped by transforms" if e["records_dropped"] else ""
                print(
                    f"{e['partition']}: {e['status']}, {span}, {e['records']} records{tolerated}, "
                    f"{len(e['object_keys'])} objects"
                )
                for key in e["object_keys"]:
                    print(f"  {key}")
                for first, last in e["lost_ranges"]:
                    print(
                        f"  warning: offsets {first}..{last} ({last - first + 1}) were deleted by retention "
                        f"before they were exported"
                    )
    failed = [e for e in entries if not e["success"]]
    for e in failed:
        print(f"error: export of {e['partition']} failed: {e['error']}", file=sys.stderr)
    return 1 if failed else 0


def _cmd_plan(args: argparse.Namespace) -> int:
    from .clients.errors import ExternalSystemError
    from .export.dry_run import dry_run, table
    from .export.kafka_env import kafka_env_settings
    from .export.partition_selection import select_partitions
    from .export.settings import resolve_settings
    from .sink.config import resolved_connector_config
    from .sink.secrets import scrub

    # No Dagster run, no Spark: only S3 and broker metadata are read, and nothing is written.
    settings = resolve_settings(
        resolved_connector_config(args.config, args.worker_config), kafka_client_settings=kafka_env_settings()
    )
    config = settings.sink_config()
    try:
        partitions = select_partitions(config, settings.kafka, args.partition or [])
    except (ValueError, ExternalSystemError) as exc:
        print(f"error: {scrub(str(exc), settings.secrets())}", file=sys.stderr)
        return 2
    try:
        entries = dry_run(settings, partitions)
    except ExternalSystemError as exc:
        print(f"error: {scrub(str(exc), settings.secrets())}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"connector": config.name, "partitions": [e.to_json() for e in entries]}, indent=2))
    else:
        print(table(entries))
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from .clients.errors import ExternalSystemError
    from .export.completeness_run import check_exported
    from .export.kafka_env import kafka_env_settings
    from .export.partition_selection import select_partitions
    from .export.settings import resolve_settings
    from .sink.config import resolved_connector_config
    from .sink.secrets import scrub

    settings = resolve_settings(
        resolved_connector_config(args.config, args.worker_config), kafka_client_settings=kafka_env_settings()
    )
    try:
        partitions = select_partitions(settings.sink_config(), settings.kafka, args.partition or [])
        reports = check_exported(settings, partitions, full=args.full)
    except (ValueError, ExternalSystemError) as exc:
        print(f"error: {scrub(str(exc), settings.secrets())}", file=sys.stderr)
        return 2
    for topic, partition, report in reports:
        print(f"{topic}/{partition}: {'passed' if report.passed else 'FAILED'}: {report.describe()}")
    return 0 if all(report.passed for _t, _p, report in reports) else 1


def _cmd_table_sync(args: argparse.Namespace) -> int:
    from .clients.errors import ExternalSystemError
    from .export.kafka_env import kafka_env_settings
    from .export.partition_selection import select_partitions
    from .export.settings import resolve_settings
    from .iceberg.sync import TableSyncError, sync_table
    from .sink.config import resolved_connector_config
    from .sink.config_keys import ICEBERG_CATALOG_URI
    from .sink.secrets import scrub

    # No export, no Spark, no Dagster run: the manifests in S3 not in the table yet are registered.
    settings = resolve_settings(
        resolved_connector_config(args.config, args.worker_config),
        kafka_client_settings=kafka_env_settings(),
        need_kafka=not args.partition,
    )
    config = settings.sink_config()
    if config[ICEBERG_CATALOG_URI] is None:
        print(
            f"error: the connector has no Iceberg table: set {ICEBERG_CATALOG_URI} (docs/iceberg.md)", file=sys.stderr
        )
        return 2
    try:
        partitions = select_partitions(config, settings.kafka, args.partition or [])
    except (ValueError, ExternalSystemError) as exc:
        print(f"error: {scrub(str(exc), settings.secrets())}", file=sys.stderr)
        return 2
    by_topic: dict[str, list[int]] = {}
    for topic, partition in partitions:
        by_topic.setdefault(topic, []).append(partition)
    log = logging.getLogger("kafka_s3_assets.table_sync")
    failed = False
    for topic, topic_partitions in by_topic.items():
        try:
            synced = sync_table(settings, topic, topic_partitions, log)
        except TableSyncError as exc:
            print(f"error: {topic}: {exc}", file=sys.stderr)
            failed = True
            continue
        assert synced is not None  # None only for a connector without a table (refused above)
        snapshot = f"snapshot {synced.snapshot_id}" if synced.snapshot_id is not None else "no snapshot yet"
        print(f"{synced.table_name}: {'committed' if synced.committed else 'nothing new to register'} ({snapshot})")
        for p in synced.partitions.values():
            where = (
                "nothing registered"
                if p.registered is None
                else f"registered up to offset {p.registered.next_offset - 1}"
            )
            print(
                f"  {topic}/{p.partition}: {where}; added {p.manifests_added} manifest(s), {p.files_added} "
                f"file(s), {p.records_added} record(s)"
            )
            if p.error:
                print(f"error: {topic}/{p.partition}: {p.error}", file=sys.stderr)
                failed = True
    return 1 if failed else 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from .export.topic_subscription import describe_topics, topics_regex
    from .sink.config import load_connector_config
    from .sink.config_keys import inert_converter_settings
    from .sink.converters.glue import GLUE_CONVERTER_SETTINGS

    config = load_connector_config(args.config, args.worker_config)  # raises ConfigError listing every problem
    # The broker is not asked: a topics.regex config's topics are resolved when a run plans.
    later = " (resolved from the broker when an export plans)" if topics_regex(config) is not None else ""
    print(f"{args.config}: valid connector '{config.name}' exporting {describe_topics(config)}{later}")
    for warning in config.warnings:  # accepted, as Connect accepts it, but worth a look
        print(f"warning: {warning}", file=sys.stderr)
    inert = inert_converter_settings(config.explicit_keys, GLUE_CONVERTER_SETTINGS)
    if inert:  # converter settings taken as written and ignored: a producer's, Java's
        print(
            "warning: converter settings accepted without effect: " + "; ".join(f"{key} ({why})" for key, why in inert),
            file=sys.stderr,
        )
    if config.transforms:
        print("transforms: " + ", ".join(f"{s.alias} ({s.class_name})" for s in config.transforms.stages))
    return 0


def _readable(value):
    """Values independent readers decode into richer types (Avro/Parquet logical types)."""
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def _cmd_read(args: argparse.Namespace) -> int:
    from .clients.s3 import S3ObjectStore
    from .export.read_back import read_from_offset
    from .export.settings import resolve_settings
    from .sink.config import resolved_connector_config
    from .sink.formats.json_format import to_json_compatible

    settings = resolve_settings(resolved_connector_config(args.config, args.worker_config), need_kafka=False)
    store = S3ObjectStore(settings.s3.client(), settings.s3)
    try:
        for record in read_from_offset(
            store, settings.sink_config(), args.topic, args.partition, args.offset, args.count
        ):
            print(
                json.dumps(
                    {"offset": record.offset, "value": to_json_compatible(record.value)},
                    ensure_ascii=False,
                    default=_readable,
                )
            )
    except LookupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def _cmd_config_reference(args: argparse.Namespace) -> int:
    from .config_reference import markdown, replace_in

    if args.update:
        replace_in(Path(args.update))
        print(f"updated the configuration reference in {args.update}")
    else:
        print(markdown())
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo
    from .devstack.errors import DevstackExtraMissing

    try:
        return run_demo(Path(args.dir))
    except DevstackExtraMissing as exc:
        print(f"demo failed: {exc}", file=sys.stderr)
        return 1


def add_worker_config_option(parser: argparse.ArgumentParser) -> None:
    """``--worker-config FILE``, for every command that reads a connector config."""
    from .defs.connectors import WORKER_CONFIG_ENV, worker_config_file

    parser.add_argument(
        "--worker-config",
        metavar="FILE",
        default=worker_config_file(),
        help="Kafka Connect worker properties, as connect-standalone takes them: its "
        "bootstrap.servers, consumer.*, converters and config.providers apply, below the "
        f"connector config's own (default: ${WORKER_CONFIG_ENV})",
    )


def add_partition_command_options(parser: argparse.ArgumentParser, verb: str) -> None:
    """``--config``, ``--partition TOPIC/P ...`` and ``--worker-config``: what every command on a connector's
    topic-partitions takes."""
    parser.add_argument("--config", required=True, help="Kafka Connect S3 sink config (.json or .properties)")
    parser.add_argument(
        "--partition",
        action="append",
        metavar="TOPIC/P",
        help=f"topic-partition to {verb} (repeatable; default: every partition of the topics)",
    )
    add_worker_config_option(parser)


def build_parser() -> argparse.ArgumentParser:
    from .devstack.cli import add_devstack_parser

    parser = argparse.ArgumentParser(
        prog="kafka-s3-assets",
        description="Kafka topics exported to S3 with Kafka Connect S3 sink semantics, "
        "as partitioned Dagster assets run by PySpark.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    sub = parser.add_subparsers(dest="command", required=True)

    export = sub.add_parser("export", help="export topic-partitions through Dagster")
    add_partition_command_options(export, "export")
    export.add_argument("--json", action="store_true", help="print one JSON document with the results")
    export.set_defaults(func=_cmd_export)

    plan = sub.add_parser("plan", help="show what the next export would do, writing nothing")
    add_partition_command_options(plan, "plan")
    plan.add_argument("--json", action="store_true", help="print one JSON document")
    plan.set_defaults(func=_cmd_plan)

    check = sub.add_parser(
        "check", help="run the completeness check of exported topic-partitions (exit 1 if one fails)"
    )
    add_partition_command_options(check, "check")
    check.add_argument(
        "--full",
        action="store_true",
        help="verify the whole history again, not only what is new since the last check that passed",
    )
    check.set_defaults(func=_cmd_check)

    table = sub.add_parser("table", help="the connector's Iceberg table (kafka_s3_assets.iceberg.*)")
    table_sub = table.add_subparsers(dest="table_command", required=True)
    table_sync = table_sub.add_parser(
        "sync",
        help="register in the Iceberg table every exported manifest it does not "
        "hold yet, without exporting (exit 1 if one cannot be)",
    )
    add_partition_command_options(table_sync, "register")
    table_sync.set_defaults(func=_cmd_table_sync)

    validate = sub.add_parser("validate", help="validate a connector config and exit")
    validate.add_argument("--config", required=True)
    add_worker_config_option(validate)
    validate.set_defaults(func=_cmd_validate)

    read = sub.add_parser("read", help="print exported records from S3, starting at a Kafka offset")
    read.add_argument("--config", required=True)
    read.add_argument("--topic", required=True)
    read.add_argument("--partition", type=int, required=True)
    read.add_argument("--offset", type=int, required=True)
    read.add_argument("--count", type=int, default=None, help="at most this many records (default: all)")
    add_worker_config_option(read)
    read.set_defaults(func=_cmd_read)

    reference = sub.add_parser("config-reference", help="print the configuration reference (Markdown)")
    reference.add_argument(
        "--update", metavar="FILE", help="rewrite the reference block in this file (docs/configuration.md) instead"
    )
    reference.set_defaults(func=_cmd_config_reference)

    demo = sub.add_parser("demo", help="run the end-to-end demo on the embedded local stack")
    demo.add_argument("--dir", default=".devstack", help="devstack state directory (default: ./.devstack)")
    demo.set_defaults(func=_cmd_demo)

    add_devstack_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Partitioned asset checks are a Dagster preview feature, used knowingly: its warning is not for our users.
    warnings.filterwarnings("ignore", message=".*partitions_def on an AssetCheckSpec.*")
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        return args.func(args)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
