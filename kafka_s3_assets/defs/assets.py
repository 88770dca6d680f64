"""One partitioned asset per exported topic: materializing partition ``<topic>/<p>`` exports that
topic-partition's new records to S3 through a Spark job, and checks the result."""

from contextlib import contextmanager

import dagster as dg
from dagster_aws.s3 import S3Resource
from dagster_pyspark import LazyPySparkResource

from ..clients.s3 import S3ObjectStore
from ..export.completeness import check_partition
from ..export.partition_export import PartitionExportRequest, PartitionExportResult
from ..export.plan import plan_partitions
from ..export.retention_loss import LostRange, describe_lost, lost_before_log_start
from ..sink.manifest import ManifestLayout
from ..sink.naming import ObjectNaming
from ..sink.secrets import scrub
from ..spark.job import run_exports
from .connectors import ConnectorSpec, safe_name
from .partitions import parse_partition_key, topic_partitions_def
from .resources import KafkaResource, SchemaRegistryResource, export_settings

COMPLETENESS_CHECK = "manifests_contiguous"
MAX_KEYS_IN_METADATA = 50


def export_asset_key(connector: str, topic: str) -> dg.AssetKey:
    return dg.AssetKey(["kafka_s3", connector, topic])


def export_job_name(connector: str, topic: str) -> str:
    return f"export__{safe_name(connector)}__{safe_name(topic)}"


def materialization_metadata(result: PartitionExportResult, bucket: str) -> dict:
    records_per_s = result.records_exported / result.duration_s if result.duration_s else 0.0
    keys = result.object_keys
    return {
        "start_offset": dg.MetadataValue.int(result.start_offset if result.start_offset is not None else -1),
        "next_offset": dg.MetadataValue.int(result.next_offset if result.next_offset is not None else -1),
        "end_offset": dg.MetadataValue.int((result.next_offset or 0) - 1),
        "high_watermark": dg.MetadataValue.int(result.high_watermark if result.high_watermark is not None else -1),
        "lag": dg.MetadataValue.int(result.lag if result.lag is not None else -1),
        "records": dg.MetadataValue.int(result.records_exported),
        "dagster/row_count": dg.MetadataValue.int(result.records_exported),
        "records_read": dg.MetadataValue.int(result.records_read),
        "records_tolerated": dg.MetadataValue.int(result.records_tolerated),
        "dead_letters": dg.MetadataValue.int(result.dead_letters),
        "objects": dg.MetadataValue.int(len(keys)),
        "bytes": dg.MetadataValue.int(result.bytes_written),
        "duration_s": dg.MetadataValue.float(result.duration_s),
        "records_per_s": dg.MetadataValue.float(round(records_per_s, 1)),
        "object_keys": dg.MetadataValue.json({"count": len(keys), "keys": keys[:MAX_KEYS_IN_METADATA],
                                              "truncated": len(keys) > MAX_KEYS_IN_METADATA}),
        "manifests": dg.MetadataValue.json(result.manifest_keys),
        # Offsets the broker deleted (retention) before they were exported: [first, last] ranges.
        "lost_offsets": dg.MetadataValue.int(sum(last - first + 1 for first, last in result.lost_ranges)),
        "lost_ranges": dg.MetadataValue.json(result.lost_ranges),
        "s3_bucket": dg.MetadataValue.text(bucket),
        "status": dg.MetadataValue.text(result.status),
        # Recovery after a crashed earlier attempt: its inputs replayed, its unlisted objects removed.
        "replayed_dead_attempt": dg.MetadataValue.bool(result.replayed),
        "orphans_removed": dg.MetadataValue.int(result.orphans_removed),
    }


@contextmanager
def scrubbed_failures(secrets: list[str]):
    """Errors of the driver's own calls (broker probe, Spark, S3) become a Failure whose message has every
    secret scrubbed, without the original exception chained to it (its message could quote one)."""
    try:
        yield
    except dg.Failure:
        raise
    except Exception as exc:
        raise dg.Failure(description=scrub(f"{type(exc).__name__}: {exc}", secrets),
                         metadata={"error_type": type(exc).__name__}) from None


def build_export_asset(connector: ConnectorSpec, topic: str) -> dg.AssetsDefinition:
    key = export_asset_key(connector.name, topic)
    partitions_def = topic_partitions_def(connector.name, topic)

    @dg.asset(
        key=key,
        partitions_def=partitions_def,
        group_name=safe_name(connector.name),
        kinds={"kafka", "spark", "s3"},
        description=(f"Kafka topic `{topic}` exported to S3 by connector `{connector.name}` "
                     f"({connector.source}) with Kafka Connect S3 sink semantics."),
        check_specs=[dg.AssetCheckSpec(COMPLETENESS_CHECK, asset=key, partitions_def=partitions_def,
                                       description="Manifests contiguous from the first exported offset; every "
                                                   "listed object present with its recorded size; tolerated "
                                                   "offsets in no object; no offset deleted by retention before "
                                                   "it was exported")],
        metadata={"connector": connector.name, "topic": topic, "bucket": connector.config.bucket,
                  "topics_dir": connector.config.topics_dir},
    )
    def export(context: dg.AssetExecutionContext, pyspark: LazyPySparkResource, kafka: KafkaResource,
               s3: S3Resource, schema_registry: SchemaRegistryResource) -> dg.MaterializeResult:
        settings = export_settings(connector, kafka, s3, schema_registry)
        key_topic, partition = parse_partition_key(context.partition_key)
        if key_topic != topic:
            raise dg.Failure(f"Partition {context.partition_key} does not belong to topic {topic}")
        with scrubbed_failures(settings.secrets()):
            [plan] = plan_partitions(settings, [(topic, partition)])
        done = "nothing exported yet" if plan.next_offset is None else f"exported up to offset {plan.next_offset - 1}"
        context.log.info(f"{topic}/{partition}: {done}, broker high watermark {plan.high_watermark}, "
                         f"{plan.pending} record offset(s) waiting")
        request = PartitionExportRequest(settings, topic, partition, end_offset=plan.high_watermark,
                                         run_id=context.run.run_id)
        if plan.pending == 0:
            # Nothing new: no Spark session, no JVM start.
            result = PartitionExportResult(topic, partition, start_offset=plan.next_offset,
                                           next_offset=plan.next_offset, high_watermark=plan.high_watermark)
            if plan.next_offset is not None:  # nothing to read, but retention may have deleted unexported offsets
                lost = lost_before_log_start(plan.next_offset, plan.low_watermark)
                result.lost_ranges = [lost.to_json()] if lost else []
        else:
            with scrubbed_failures(settings.secrets()):
                [result] = run_exports(pyspark.spark_session, [request])
        if result.status == "failed":
            context.log.error(result.error_detail or result.error or "export failed")
            raise dg.Failure(
                description=f"Export of {topic}/{partition} failed: {result.error}",
                metadata={"error_type": result.error_type or "", "objects_committed": len(result.object_keys),
                          "next_offset": result.next_offset if result.next_offset is not None else -1},
            )
        if result.lost_ranges:
            context.log.warning(describe_lost(topic, partition, [LostRange(*r) for r in result.lost_ranges]))
        with scrubbed_failures(settings.secrets()):
            store = S3ObjectStore(settings.s3.client(), settings.s3)
            sink_config = settings.sink_config()
            report = check_partition(store, ManifestLayout.from_config(sink_config), topic, partition,
                                     low_watermark=plan.low_watermark, naming=ObjectNaming.from_config(sink_config))
        check = dg.AssetCheckResult(
            check_name=COMPLETENESS_CHECK, passed=report.passed, description=report.describe(),
            metadata={"manifests": report.contiguity.manifests, "objects": report.objects_listed,
                      "records": report.contiguity.records, "tolerated": report.contiguity.tolerated,
                      "first_offset": report.contiguity.first_offset if report.contiguity.first_offset is not None else -1,
                      "next_offset": report.contiguity.next_offset if report.contiguity.next_offset is not None else -1,
                      "lost_offsets": report.offsets_lost, "unlisted_objects": len(report.unlisted_objects),
                      "lost_ranges": dg.MetadataValue.json([r.to_json() for r in report.lost_ranges])},
        )
        return dg.MaterializeResult(metadata=materialization_metadata(result, settings.s3.bucket), check_results=[check])

    return export
