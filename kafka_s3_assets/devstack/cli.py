"""``kafka-s3-assets devstack up|down|status|env``: the local stack from a shell.

Typical use::

    kafka-s3-assets devstack up            # prints KEY=VALUE lines, writes .devstack/env
    kafka-s3-assets devstack up --spark-connect   # also a Spark Connect server for export runs
    set -a; . .devstack/env; set +a        # point clients at the stack
    kafka-s3-assets devstack status
    kafka-s3-assets devstack down

Messages go to stderr so that stdout of ``up`` and ``env`` is exactly the env lines.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kafka_s3_assets.devstack import stack
from kafka_s3_assets.devstack.errors import DevstackError, DevstackExtraMissing
from kafka_s3_assets.devstack.s3_servers import BACKENDS

DEFAULT_DIR_NAME = ".devstack"


def add_devstack_parser(subparsers) -> None:
    """Register ``devstack up|down|status|env`` on an argparse subparsers object."""
    parser = subparsers.add_parser(
        "devstack",
        help="start/stop the local Kafka (Apache Kafka), S3 and schema registry (and Spark Connect)",
        description="Run a local Kafka broker (Apache Kafka), S3 server and schema registry (and, on "
        "request, a Spark Connect server) on loopback ports, recorded in a state directory.",
    )
    _add_dir_option(parser, default=None)
    commands = parser.add_subparsers(dest="devstack_command", metavar="COMMAND", required=True)

    up = commands.add_parser("up", help="start the stack (or what is missing of it)")
    _add_dir_option(up, default=argparse.SUPPRESS)
    up.add_argument(
        "--s3",
        choices=BACKENDS,
        default="moto",
        help="S3 server: moto (in memory, default) or seaweedfs (persisted in the state dir)",
    )
    up.add_argument(
        "--persistent-kafka",
        action="store_true",
        help="keep the broker's log directory (topics, offsets) across restarts and down/up instead of "
        "formatting it afresh at every start",
    )
    up.add_argument(
        "--spark-connect",
        action="store_true",
        help="also start a Spark Connect server (a long-lived Spark driver, from the pyspark wheel) "
        "and point export runs at it (KAFKA_S3_ASSETS_SPARK_REMOTE in the env lines)",
    )
    up.set_defaults(func=_up)

    down = commands.add_parser("down", help="stop the servers `up` started")
    _add_dir_option(down, default=argparse.SUPPRESS)
    down.set_defaults(func=_down)

    status = commands.add_parser("status", help="show each server; exit 1 if any is dead")
    _add_dir_option(status, default=argparse.SUPPRESS)
    status.set_defaults(func=_status)

    env = commands.add_parser("env", help="print the KEY=VALUE lines of the running stack")
    _add_dir_option(env, default=argparse.SUPPRESS)
    env.set_defaults(func=_env)


def _add_dir_option(parser: argparse.ArgumentParser, default) -> None:
    # Accepted before or after the command; SUPPRESS keeps the subcommand from resetting a
    # value given before it.
    parser.add_argument(
        "--dir",
        type=Path,
        default=default,
        help=f"state directory (default: ./{DEFAULT_DIR_NAME})",
    )


def state_dir(args: argparse.Namespace) -> Path:
    return args.dir if getattr(args, "dir", None) else Path.cwd() / DEFAULT_DIR_NAME


def _up(args: argparse.Namespace) -> int:
    directory = state_dir(args)
    try:
        report = stack.bring_up(
            directory,
            s3_backend=args.s3,
            persistent_kafka=args.persistent_kafka,
            spark_connect=args.spark_connect,
        )
    except DevstackExtraMissing as exc:  # nothing was started
        print(f"devstack up failed: {exc}", file=sys.stderr)
        return 1
    except DevstackError as exc:
        print(f"devstack up failed: {exc}", file=sys.stderr)
        print(
            f"(servers that did start are recorded; `devstack status --dir {directory}` "
            "shows them and `devstack down` stops them)",
            file=sys.stderr,
        )
        return 1
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)
    if report.started:
        print(f"started: {', '.join(report.started)}", file=sys.stderr)
    if report.already_running:
        print(f"already running: {', '.join(report.already_running)}", file=sys.stderr)
    print(f"env lines written to {directory / 'env'}", file=sys.stderr)
    for line in report.endpoints.env_lines():
        print(line)
    return 0


def _down(args: argparse.Namespace) -> int:
    directory = state_dir(args)
    try:
        stopped = stack.down(directory)
    except DevstackError as exc:
        print(f"devstack down failed: {exc}", file=sys.stderr)
        return 1
    if stopped:
        print(f"stopped: {', '.join(stopped)}")
    else:
        print(f"nothing to stop in {directory}")
    return 0


def _status(args: argparse.Namespace) -> int:
    directory = state_dir(args)
    try:
        statuses = stack.status(directory)
    except DevstackError as exc:
        print(f"devstack status failed: {exc}", file=sys.stderr)
        return 1
    if not statuses:
        print(f"no devstack recorded in {directory}; run `devstack up`", file=sys.stderr)
        return 1
    for server in statuses.values():
        state = "alive" if server.alive else "DEAD"
        first, *rest = server.detail.splitlines() or [""]
        print(f"{server.name:<16} pid={server.pid or '-':<8} port={server.port or '-':<6} {state:<5} {first}")
        for line in rest:
            print(f"    {line}")
    return 0 if all(s.alive for s in statuses.values()) else 1


def _env(args: argparse.Namespace) -> int:
    directory = state_dir(args)
    try:
        endpoints = stack.read_endpoints(directory)
    except DevstackError as exc:
        print(f"devstack env failed: {exc}", file=sys.stderr)
        return 1
    if endpoints is None:
        print(f"no devstack recorded in {directory}; run `devstack up` first", file=sys.stderr)
        return 1
    for line in endpoints.env_lines():
        print(line)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Standalone entry point: ``python -m kafka_s3_assets.devstack.cli up``."""
    parser = argparse.ArgumentParser(prog="kafka-s3-assets")
    add_devstack_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["devstack", *(sys.argv[1:] if argv is None else argv)])
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
