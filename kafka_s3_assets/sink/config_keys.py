"""The connector's configuration keys: Kafka Connect's S3 sink keys with the reference's defaults and
validation messages, the Connect framework keys a connector config may carry, and our own
extension keys under the ``kafka_s3_assets.`` prefix.

Each key says how far we support it:

* ``FULL``    -- any valid value works.
* ``DEFAULT`` -- recognised, but only the reference default is implemented so far; another value is
                 reported as "not supported yet" naming the key, never silently ignored.
* ``INERT``   -- accepted and has no effect on the export (e.g. ``tasks.max``: Spark decides parallelism).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from .credentials_provider import (
    AWS_MAX_DURATION_SECONDS,
    DEFAULT_CLASS_V2,
    DEFAULT_DURATION_SECONDS,
    DURATION_KEY,
    known_provider_class,
)
from .data_rules import inert_reason
from .s3_proxy import proxy_url_problem

Validator = Callable[[str, Any], "str | None"]


class Support(Enum):
    FULL = "full"
    DEFAULT = "default-only"
    INERT = "inert"


class Type(Enum):
    STRING = "STRING"
    INT = "INT"
    LONG = "LONG"
    BOOLEAN = "BOOLEAN"
    LIST = "LIST"
    CLASS = "CLASS"
    PASSWORD = "PASSWORD"


REQUIRED = object()  # marks a key without a default
INT_MAX = 2**31 - 1
LONG_MAX = 2**63 - 1

EXTENSION_PREFIX = "kafka_s3_assets."
ICEBERG_CATALOG_URI = "kafka_s3_assets.iceberg.catalog.uri"
# kafka_s3_assets.iceberg.catalog.<property>: any other key under this prefix is passed to the catalog.
ICEBERG_CATALOG_PREFIX = "kafka_s3_assets.iceberg.catalog."
# What a task's open files may hold in memory before spilling to local disk (docs/memory.md).
MEMORY_BUDGET_KEY = "kafka_s3_assets.task.memory.budget.bytes"

FORMAT_PACKAGE = "io.confluent.connect.s3.format."
AVRO_FORMAT = FORMAT_PACKAGE + "avro.AvroFormat"
JSON_FORMAT = FORMAT_PACKAGE + "json.JsonFormat"
BYTEARRAY_FORMAT = FORMAT_PACKAGE + "bytearray.ByteArrayFormat"
PARQUET_FORMAT = FORMAT_PACKAGE + "parquet.ParquetFormat"
# Our extension: the spredfast sink's Block-GZIP layout (gzip members plus a byte-range index).
BLOCK_GZIP_FORMAT = "kafka_s3_assets.format.BlockGzipFormat"
FORMAT_CLASSES = (AVRO_FORMAT, JSON_FORMAT, BYTEARRAY_FORMAT, PARQUET_FORMAT, BLOCK_GZIP_FORMAT)

PARTITIONER_PACKAGE = "io.confluent.connect.storage.partitioner."
DEFAULT_PARTITIONER = PARTITIONER_PACKAGE + "DefaultPartitioner"
# canelmas' kafka-connect-field-and-time-partitioner: fields, then TimeBasedPartitioner's time bucket.
FIELD_AND_TIME_PARTITIONER = "com.canelmas.kafka.connect.FieldAndTimeBasedPartitioner"
PARTITIONER_CLASSES = tuple(
    PARTITIONER_PACKAGE + n
    for n in ("DefaultPartitioner", "HourlyPartitioner", "DailyPartitioner", "TimeBasedPartitioner", "FieldPartitioner")
) + (FIELD_AND_TIME_PARTITIONER,)

S3_STORAGE = "io.confluent.connect.s3.storage.S3Storage"
S3_CONNECTOR = "io.confluent.connect.s3.S3SinkConnector"
DEFAULT_SCHEMA_GENERATOR = "io.confluent.connect.storage.hive.schema.DefaultSchemaGenerator"

AVRO_CONVERTER = "io.confluent.connect.avro.AvroConverter"
JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
STRING_CONVERTER = "org.apache.kafka.connect.storage.StringConverter"
BYTEARRAY_CONVERTER = "org.apache.kafka.connect.converters.ByteArrayConverter"
PROTOBUF_CONVERTER = "io.confluent.connect.protobuf.ProtobufConverter"
JSON_SCHEMA_CONVERTER = "io.confluent.connect.json.JsonSchemaConverter"
# AWS Glue Schema Registry's converters (Amazon MSK Connect), read by sink.converters.glue.
GLUE_AVRO_CONVERTER = "com.amazonaws.services.schemaregistry.kafkaconnect.AWSKafkaAvroConverter"
GLUE_JSON_SCHEMA_CONVERTER = "com.amazonaws.services.schemaregistry.kafkaconnect.jsonschema.JsonSchemaConverter"
GLUE_PROTOBUF_CONVERTER = "com.amazonaws.services.schemaregistry.kafkaconnect.protobuf.ProtobufSchemaConverter"
GLUE_CONVERTERS = (GLUE_AVRO_CONVERTER, GLUE_JSON_SCHEMA_CONVERTER, GLUE_PROTOBUF_CONVERTER)
CONVERTER_CLASSES = (
    AVRO_CONVERTER,
    PROTOBUF_CONVERTER,
    JSON_SCHEMA_CONVERTER,
    JSON_CONVERTER,
    STRING_CONVERTER,
    BYTEARRAY_CONVERTER,
    *GLUE_CONVERTERS,
)
# The converters whose data is framed with a schema registry id (Confluent's wire format).
REGISTRY_CONVERTERS = (AVRO_CONVERTER, PROTOBUF_CONVERTER, JSON_SCHEMA_CONVERTER)
SIMPLE_HEADER_CONVERTER = "org.apache.kafka.connect.storage.SimpleHeaderConverter"


def one_of(*allowed: str, case_sensitive: bool = True) -> Validator:
    def check(_key: str, value: Any) -> str | None:
        if value is None:
            return None
        if case_sensitive:
            ok = value in allowed
        else:
            ok = str(value).lower() in {a.lower() for a in allowed}
        return None if ok else "String must be one of: " + ", ".join(allowed)

    return check


def at_least(minimum: int, message: str | None = None) -> Validator:
    def check(_key: str, value: Any) -> str | None:
        if value is None or value >= minimum:
            return None
        return message or f"Value must be at least {minimum}"

    return check


def between(low: int, high: int) -> Validator:
    def check(_key: str, value: Any) -> str | None:
        if value is None or low <= value <= high:
            return None
        if value < low:
            return f"Value must be at least {low}"
        return f"Value must be no more than {high}"

    return check


def known_class(*classes: str) -> Validator:
    def check(_key: str, value: Any) -> str | None:
        if value is None or value in classes:
            return None
        return f"Class {value} could not be found."

    return check


def java_class_refused(supported: str, why: str) -> Validator:
    """A CLASS setting whose only value that works is ``supported``: another names a Java class, refused with
    ``why`` (the class is named by the message's ``Invalid value <class> for configuration <key>:``)."""

    def check(_key: str, value: Any) -> str | None:
        return None if value is None or value == supported else why

    return check


def parse_metadata_spec(spec: str) -> dict[str, str]:
    """``use.latest.with.metadata`` as Confluent's ``MapPropertyParser`` reads it: comma-separated
    ``key=value`` entries (CSV with ``'`` as the quote character), each split at its first ``=``. Raises
    ValueError where Confluent's converter would not start (an entry without ``=``, a key given twice) and
    for an empty spec (Confluent then fails every record on a null latest version)."""
    entries: list[str] = []
    current: list[str] = []
    quoted = started = False
    i = 0
    while i < len(spec):
        char = spec[i]
        if quoted:
            if char == "'" and i + 1 < len(spec) and spec[i + 1] == "'":
                current.append("'")
                i += 1
            elif char == "'":
                quoted = False
            else:
                current.append(char)
        elif char == "'" and not current:
            quoted = started = True
        elif char == ",":
            entries.append("".join(current))
            current, started = [], False
        else:
            current.append(char)
        i += 1
    if current or started or entries:
        entries.append("".join(current))
    if not entries:
        raise ValueError("no key=value entry (Confluent would fail every record: no latest version to read into)")
    found: dict[str, str] = {}
    for entry in entries:
        if "=" not in entry:
            raise ValueError(f"the entry '{entry}' is not key=value")
        key, _, value = entry.partition("=")
        if key in found:
            raise ValueError(f"the key '{key}' is given twice")
        found[key] = value
    return found


def metadata_spec(_key: str, value: Any) -> str | None:
    if value is None:
        return None
    try:
        parse_metadata_spec(str(value))
    except ValueError as exc:
        return str(exc)
    return None


def known_converter(key: str, value: Any) -> str | None:
    return known_class(*CONVERTER_CLASSES)(key, value)


def java_regex(key: str, value: Any) -> str | None:
    """Connect's ``RegexValidator``: the value compiles as a Java regex (``Invalid regex: ...``)."""
    # Imported here: the transforms import the config module, which imports these keys.
    from .transforms.settings import valid_regex

    return valid_regex(key, value)


def no_empty_segments(_key: str, value: Any) -> str | None:
    for name in value or []:
        if not name.strip():
            return "Field name cannot be null or empty"
        if any(not seg.strip() for seg in name.split(".")):
            return "Field name cannot contain an empty or whitespace-only path segment"
    return None


@dataclass(frozen=True)
class KeyDef:
    name: str
    type: Type
    default: Any
    support: Support
    validator: Validator | None = None
    doc: str = ""


def _k(name, type_, default, support, validator=None, doc=""):
    return KeyDef(name, type_, default, support, validator, doc)


F, D, I = Support.FULL, Support.DEFAULT, Support.INERT  # noqa: E741  # one-letter marks of the key tables below

# Connect framework keys that a connector config carries.
FRAMEWORK_KEYS = [
    _k("name", Type.STRING, REQUIRED, F, doc="Connector name; the consumer group is connect-<name>"),
    _k("connector.class", Type.STRING, S3_CONNECTOR, I, doc="Accepted as written by Kafka Connect"),
    _k("tasks.max", Type.INT, 1, I, at_least(1), "Ignored: Spark decides the parallelism"),
    # Connect's defaults: neither is required, and exactly one of the two must be set (config._cross_checks).
    _k("topics", Type.LIST, [], F, doc="Topics to export (comma separated); set this or topics.regex"),
    _k(
        "topics.regex",
        Type.STRING,
        "",
        F,
        java_regex,
        "Java regex matched against the whole name of each topic on the broker (internal topics excluded); the "
        "topics are resolved when a run plans, a sensor ticks and the Dagster definitions load",
    ),
    _k("key.converter", Type.CLASS, AVRO_CONVERTER, F, known_converter),
    _k("value.converter", Type.CLASS, AVRO_CONVERTER, F, known_converter),
    _k("header.converter", Type.CLASS, SIMPLE_HEADER_CONVERTER, I),
    _k(
        "transforms",
        Type.LIST,
        [],
        F,
        doc="Aliases of the Single Message Transforms applied, in order, between the converters and the writer "
        "(docs/transforms.md)",
    ),
    _k("predicates", Type.LIST, [], F, doc="Aliases of the predicates that transforms name (docs/transforms.md)"),
    _k("config.action.reload", Type.STRING, "restart", I),
    _k(
        "errors.tolerance",
        Type.STRING,
        "none",
        F,
        one_of("none", "all"),
        "none: a bad record fails the export naming topic, partition and offset; all: bad records are skipped, "
        "recorded in the manifest, and sent to the dead letter queue if one is set (never S3, registry or broker "
        "failures)",
    ),
    _k(
        "errors.log.enable", Type.BOOLEAN, False, F, doc="Log each bad record's error with its topic, partition, offset"
    ),
    _k(
        "errors.log.include.messages",
        Type.BOOLEAN,
        False,
        F,
        doc="Also log the record's coordinates in Connect's form, with its timestamp (never key, value or headers)",
    ),
    _k(
        "errors.deadletterqueue.topic.name",
        Type.STRING,
        "",
        F,
        doc="Topic that receives skipped records (original key, value, headers, timestamp); created if missing",
    ),
    # ConfigDef type SHORT in Connect; the cap to the broker count is ours (Connect fails to create the topic).
    _k(
        "errors.deadletterqueue.topic.replication.factor",
        Type.INT,
        3,
        F,
        between(-1, 32767),
        "Replication factor of a created DLQ topic, capped to the broker count (with a warning); -1: broker default",
    ),
    _k(
        "errors.deadletterqueue.context.headers.enable",
        Type.BOOLEAN,
        False,
        F,
        doc="Add Connect's __connect.errors.* headers (topic, partition, offset, stage, exception, ...) to DLQ records",
    ),
    # Connect retries RetriableExceptions of converters and transforms for this long. Here only a record's own
    # faults are tolerated (never retriable), and system failures fail the run, which the next run retries.
    _k(
        "errors.retry.timeout",
        Type.LONG,
        0,
        I,
        doc="No effect: S3 and registry clients retry by their own settings; a run that still fails is retried by "
        "the next run",
    ),
    _k("errors.retry.delay.max.ms", Type.LONG, 60000, I, doc="No effect (see errors.retry.timeout)"),
    # A worker key, accepted in the connector config so one file can say where Kafka is.
    _k("bootstrap.servers", Type.STRING, None, F, doc="Kafka bootstrap servers; else $KAFKA_BOOTSTRAP_SERVERS"),
    # A worker key (usually from a worker config): how often Connect commits a sink's offsets.
    _k(
        "offset.flush.interval.ms",
        Type.LONG,
        60000,
        I,
        doc="Worker key, no effect: an export commits offsets after each batch of objects is in S3",
    ),
]

# StorageSinkConnectorConfig, StorageCommonConfig, PartitionerConfig, S3SinkConnectorConfig: the reference's ConfigDefs.
SINK_KEYS = [
    _k("format.class", Type.CLASS, REQUIRED, F, known_class(*FORMAT_CLASSES)),
    _k("flush.size", Type.INT, REQUIRED, F, doc="Records per object (counted across a topic-partition's open objects)"),
    _k("rotate.interval.ms", Type.LONG, -1, F),
    _k("rotate.schedule.interval.ms", Type.LONG, -1, F),
    _k("schemas.cache.config", Type.INT, 1000, I),
    _k("enhanced.avro.schema.support", Type.BOOLEAN, True, F),
    _k("connect.meta.data", Type.BOOLEAN, True, F),
    _k("retry.backoff.ms", Type.LONG, 5000, I),
    _k("shutdown.timeout.ms", Type.LONG, 3000, I),
    _k("filename.offset.zero.pad.width", Type.INT, 10, F, at_least(0)),
    # zstandard and xz are our extension (Avro's own codec names); the reference stops at bzip2.
    _k("avro.codec", Type.STRING, "null", F, one_of("null", "deflate", "snappy", "bzip2", "zstandard", "xz")),
    _k(
        "allow.optional.map.keys",
        Type.BOOLEAN,
        False,
        F,
        doc="AvroFormat: a map whose keys are optional strings is an Avro map (false: an array of key/value "
        "records); ParquetFormat: a Parquet map (required string keys); a null key fails its record",
    ),
    # No validator, as the reference: an unknown value (even "backward") silently behaves as NONE.
    _k(
        "schema.compatibility",
        Type.STRING,
        "NONE",
        F,
        doc="NONE, BACKWARD, FORWARD or FULL: when a new schema rotates and when records are projected",
    ),
    _k(
        "parquet.codec",
        Type.STRING,
        "snappy",
        F,
        one_of("none", "snappy", "gzip", "lzo", "brotli", "lz4", "zstd", "lz4_raw"),
    ),
    _k("storage.class", Type.CLASS, REQUIRED, F, known_class(S3_STORAGE)),
    _k("topics.dir", Type.STRING, "topics", F),
    _k("store.url", Type.STRING, None, F, doc="S3 endpoint; else $AWS_ENDPOINT_URL_S3 / $AWS_ENDPOINT_URL"),
    _k("directory.delim", Type.STRING, "/", F),
    _k("file.delim", Type.STRING, "+", F),
    _k("partitioner.class", Type.CLASS, DEFAULT_PARTITIONER, F, known_class(*PARTITIONER_CLASSES)),
    _k("partition.field.name", Type.LIST, [], F, no_empty_segments),
    # FieldAndTimeBasedPartitioner's own key, read with Boolean.parseBoolean (so not a BOOLEAN key).
    _k(
        "partition.field.format.path",
        Type.STRING,
        "true",
        F,
        doc="FieldAndTimeBasedPartitioner: true: <field>=<value> directories; anything else: <value> only",
    ),
    _k("partition.duration.ms", Type.LONG, -1, F),
    _k("path.format", Type.STRING, "", F),
    _k("locale", Type.STRING, "", F),
    _k("timezone", Type.STRING, "", F),
    _k("timestamp.extractor", Type.STRING, "Wallclock", F),
    _k("timestamp.field", Type.STRING, "timestamp", F),
    _k("schema.generator.class", Type.CLASS, DEFAULT_SCHEMA_GENERATOR, I),
    _k("s3.bucket.name", Type.STRING, REQUIRED, F),
    _k("s3.object.tagging", Type.BOOLEAN, False, F),
    _k("s3.object.tagging.key.value.pairs", Type.LIST, [], F),
    _k("s3.object.behavior.on.tagging.error", Type.STRING, "ignore", F, one_of("ignore", "fail", case_sensitive=False)),
    _k("s3.region", Type.STRING, "us-west-2", F),
    _k("s3.part.size", Type.INT, 26214400, F, at_least(5242880, "Part size must be at least: 5242880 bytes (5MB)")),
    _k("s3.credentials.provider.class", Type.CLASS, DEFAULT_CLASS_V2, F, known_provider_class),
    _k("aws.access.key.id", Type.STRING, "", F),
    _k("aws.secret.access.key", Type.PASSWORD, None, F),
    _k("s3.ssea.name", Type.STRING, "", F, one_of("", "AES256", "aws:kms", "aws:kms:dsse")),
    _k("s3.sse.customer.key", Type.PASSWORD, None, F),
    _k("s3.sse.kms.key.id", Type.STRING, "", F),
    _k(
        "s3.acl.canned",
        Type.STRING,
        None,
        F,
        one_of(
            "private",
            "public-read",
            "public-read-write",
            "authenticated-read",
            "aws-exec-read",
            "bucket-owner-read",
            "bucket-owner-full-control",
        ),
    ),
    _k(
        "s3.wan.mode",
        Type.BOOLEAN,
        False,
        F,
        doc="S3 Transfer Acceleration: requests go to <bucket>.s3-accelerate.amazonaws.com; needs "
        "s3.path.style.access.enabled=false (as the reference), a DNS-style bucket name without dots, and no "
        "custom endpoint (store.url, $AWS_ENDPOINT_URL_S3); see S3 proxy, acceleration and digests below",
    ),
    # zstd is our extension (JSON and ByteArray, ".zst"), as asked in the reference's issue #727.
    _k("s3.compression.type", Type.STRING, "none", F, one_of("none", "gzip", "zstd")),
    _k("s3.compression.level", Type.INT, -1, F, between(-1, 9)),
    _k(
        "json.decimal.format",
        Type.STRING,
        "BASE64",
        F,
        one_of("BASE64", "NUMERIC", case_sensitive=False),
        "Decimals in JSON: BASE64 of the unscaled bytes, or NUMERIC (an exact JSON number)",
    ),
    _k("s3.part.retries", Type.INT, 3, F, at_least(0)),
    _k(
        "s3.retry.backoff.ms",
        Type.LONG,
        200,
        F,
        at_least(0),
        "Base of the S3 retry backoff: before attempt n (n >= 2) wait uniformly in [0, min(24 h, base * 2^(n-2))) "
        "(full jitter); retried: throttling, 5xx, connection errors, timeouts",
    ),
    _k("format.bytearray.extension", Type.STRING, ".bin", F),
    _k("format.bytearray.separator", Type.STRING, None, F),
    _k(
        "s3.proxy.url",
        Type.STRING,
        "",
        F,
        proxy_url_problem,
        "HTTP proxy of every S3 request: http(s)://host[:port] (default port 80 / 443); credentials in the URL "
        "are used where s3.proxy.user / s3.proxy.password are blank (prefer those keys: never printed); see S3 "
        "proxy, acceleration and digests below",
    ),
    _k(
        "s3.proxy.user",
        Type.STRING,
        None,
        F,
        doc="Proxy user, sent (Proxy-Authorization: Basic) together with s3.proxy.password",
    ),
    _k("s3.proxy.password", Type.PASSWORD, None, F, doc="Proxy password (never printed)"),
    _k("s3.http.send.expect.continue", Type.BOOLEAN, True, I),
    _k("behavior.on.null.values", Type.STRING, "fail", F, one_of("ignore", "fail", "write", case_sensitive=False)),
    _k(
        "report.null.values.to.dlq",
        Type.BOOLEAN,
        True,
        F,
        doc="With behavior.on.null.values=ignore and a DLQ or the error log: report skipped null values as errors",
    ),
    _k("max.write.duration.ms", Type.LONG, LONG_MAX, I),
    _k("rotate.file.on.partition.change", Type.BOOLEAN, True, F),
    _k("tombstone.encoded.partition", Type.STRING, "tombstone", F),
    _k("s3.schema.partition.affix.type", Type.STRING, "NONE", F, one_of("NONE", "PREFIX", "SUFFIX")),
    _k(
        "s3.send.digest",
        Type.BOOLEAN,
        False,
        F,
        doc="Send Content-MD5 (the body's MD5) with every PutObject and UploadPart, so S3 refuses an altered body",
    ),
    _k("enable.conditional.writes", Type.BOOLEAN, True, I),
    _k("max.files.scan.limit", Type.INT, 100, I),
    _k("store.kafka.keys", Type.BOOLEAN, False, F),
    _k("store.kafka.headers", Type.BOOLEAN, False, F),
    _k("keys.format.class", Type.CLASS, AVRO_FORMAT, F, known_class(*FORMAT_CLASSES)),
    _k("headers.format.class", Type.CLASS, AVRO_FORMAT, F, known_class(*FORMAT_CLASSES)),
    _k("s3.path.style.access.enabled", Type.BOOLEAN, True, F),
    _k("s3.elastic.buffer.enable", Type.BOOLEAN, False, I),
    _k("s3.elastic.buffer.init.capacity", Type.INT, 131072, I, at_least(4096)),
    _k("partitioner.max.open.files", Type.INT, -1, F),
]

# Our own keys: behaviour the reference has no key for.
EXTENSION_KEYS = [
    _k(
        "kafka_s3_assets.manifests.prefix",
        Type.STRING,
        "_kafka_s3_assets/manifests",
        F,
        doc="Key prefix under which progress manifests are written (outside topics.dir)",
    ),
    _k(
        "kafka_s3_assets.manifest.max.objects",
        Type.INT,
        500,
        F,
        at_least(1),
        "Commit a manifest at least every this many objects within a run "
        "(and at least every 200,000 offset ranges, which records of many files interleaved make one per record)",
    ),
    _k(
        "kafka_s3_assets.export.lease.ms",
        Type.LONG,
        60000,
        F,
        at_least(1000),
        "An export's lease on its topic-partition lasts this long and is renewed every third of it; a crashed "
        "export on another host can be taken over once its lease has expired (on the same host, at once)",
    ),
    _k(
        "kafka_s3_assets.progress.interval.ms",
        Type.LONG,
        5000,
        F,
        at_least(1),
        "A running export reports its progress (offset reached, records/s, objects, time left) this often, to "
        "the Dagster run log and the command line",
    ),
    _k(
        "kafka_s3_assets.lag.max.records",
        Type.LONG,
        0,
        F,
        at_least(0),
        "The lag check fails for a topic-partition with more records than this waiting to be exported (0: no limit)",
    ),
    _k(
        "kafka_s3_assets.lag.max.age.ms",
        Type.LONG,
        0,
        F,
        at_least(0),
        "The lag check fails for a topic-partition whose oldest record waiting to be exported is older than "
        "this, by its Kafka timestamp (0: no limit)",
    ),
    _k(
        "kafka_s3_assets.kafka.timeout.ms",
        Type.LONG,
        30000,
        F,
        at_least(1),
        "How long to wait for the broker before reporting it unreachable",
    ),
    _k(
        "kafka_s3_assets.registry.timeout.ms",
        Type.LONG,
        10000,
        F,
        at_least(1),
        "HTTP timeout for schema registry requests",
    ),
    _k(
        "kafka_s3_assets.block.gzip.compressed.block.size",
        Type.INT,
        67108864,
        F,
        at_least(1),
        doc="Block-GZIP: uncompressed bytes per gzip member (spredfast's compressed_block_size)",
    ),
    _k(
        "kafka_s3_assets.avro.validate.datums",
        Type.BOOLEAN,
        True,
        F,
        doc="Parse each Avro datum as AvroConverter does, so a corrupt or truncated record fails (or is tolerated) "
        "naming its offset; false copies bytes unchecked on the fast path (several times faster, for trusted "
        "producers)",
    ),
    _k(
        DURATION_KEY,
        Type.INT,
        DEFAULT_DURATION_SECONDS,
        F,
        between(1, AWS_MAX_DURATION_SECONDS),
        "With AwsAssumeRoleCredentialsProvider: DurationSeconds of each AssumeRole call; the credentials refresh "
        "themselves before they expire (AWS accepts 900 to the role's maximum session duration)",
    ),
    _k(
        "kafka_s3_assets.commit.consumer.offsets",
        Type.BOOLEAN,
        True,
        F,
        doc="After each manifest, also commit the offset to the consumer group connect-<name>",
    ),
    _k(
        MEMORY_BUDGET_KEY,
        Type.LONG,
        -1,
        F,
        at_least(-1),
        "Bytes a task's open files may buffer in memory together; past it the largest buffers spill to local "
        "disk (objects unchanged). -1: a quarter of the memory of one task slot (spark.executor.pyspark.memory's "
        "share, else the host's or container's memory / its CPUs), at least 64 MiB; 0: no budget (docs/memory.md)",
    ),
    # The Iceberg table over the exported Parquet objects (docs/iceberg.md).
    _k(
        ICEBERG_CATALOG_URI,
        Type.STRING,
        None,
        F,
        doc="Turns the Iceberg table on (ParquetFormat only): a SQLAlchemy URL (sqlite:///path/catalog.db, "
        "postgresql://...) is a SQL catalog, an http(s):// URL an Iceberg REST catalog",
    ),
    _k(
        "kafka_s3_assets.iceberg.catalog.name",
        Type.STRING,
        "default",
        F,
        doc="Name of the Iceberg catalog (a SQL catalog keeps it with each table)",
    ),
    _k("kafka_s3_assets.iceberg.namespace", Type.STRING, "kafka", F, doc="Iceberg namespace of the tables"),
    _k(
        "kafka_s3_assets.iceberg.table",
        Type.STRING,
        None,
        F,
        doc="Iceberg table name (default: the topic, characters outside [A-Za-z0-9_] as _)",
    ),
    _k(
        "kafka_s3_assets.iceberg.warehouse",
        Type.STRING,
        None,
        F,
        doc="Where new tables' metadata goes (default: s3://<bucket>/_kafka_s3_assets/iceberg); "
        "kafka_s3_assets.iceberg.catalog.<property> keys are passed to the catalog",
    ),
]

# One line per key for the configuration reference of docs/configuration.md (generated: kafka-s3-assets
# config-reference).
DOCS = {
    "key.converter": "Converter of record keys (used when store.kafka.keys): Avro, JSON, String, ByteArray",
    "value.converter": "Converter of record values: AvroConverter, JsonConverter (with or without the "
    "schema/payload envelope), StringConverter, ByteArrayConverter",
    "format.class": "AvroFormat, JsonFormat, ByteArrayFormat, ParquetFormat, or kafka_s3_assets.format.BlockGzipFormat",
    "rotate.interval.ms": "Rotate when a record's timestamp is this far past the file's first (time-based "
    "partitioners)",
    "rotate.schedule.interval.ms": "Rotate on wall-clock boundaries from local midnight, taking a record's Kafka "
    "timestamp as its arrival; quiet partitions are flushed too (needs timezone)",
    "enhanced.avro.schema.support": "Avro file schemas: Connect strings that came from Avro enums are enums again "
    "(false: strings)",
    "connect.meta.data": "Avro file schemas carry AvroData's connect.* properties (connect.name, connect.version, "
    "connect.parameters, connect.doc, connect.default, connect.type) at every level",
    "filename.offset.zero.pad.width": "Digits of the start offset in file names; longer offsets are not truncated",
    "avro.codec": "Avro container codec: null, deflate, snappy, bzip2 (zstandard, xz: our extension)",
    "parquet.codec": "Parquet codec: none, snappy, gzip, brotli, zstd, lz4_raw (lzo and Hadoop lz4 cannot be "
    "written by pyarrow)",
    "storage.class": "io.confluent.connect.s3.storage.S3Storage",
    "topics.dir": "First key segment; blank for none",
    "directory.delim": "Separator between key segments and partition fields",
    "file.delim": "Separator inside file names",
    "partitioner.class": "Default, Field, TimeBased, Daily or Hourly partitioner (Confluent class names), or "
    "com.canelmas.kafka.connect.FieldAndTimeBasedPartitioner (fields, then the time bucket)",
    "partition.field.name": "FieldPartitioner (and FieldAndTimeBasedPartitioner) fields, comma separated; dotted "
    "paths are nested",
    "partition.duration.ms": "TimeBasedPartitioner bucket width",
    "path.format": "TimeBasedPartitioner directory pattern (Joda-Time syntax)",
    "locale": "Locale of month and day names in path.format",
    "timezone": "Time zone of time buckets and scheduled rotation (IANA / Joda id)",
    "timestamp.extractor": "Wallclock, Record (Kafka timestamp) or RecordField",
    "timestamp.field": "RecordField: the field holding the timestamp; dotted path for nested",
    "s3.bucket.name": "Bucket to write to; checked first (Non-existent S3 bucket: <name>)",
    "s3.object.tagging": "Tag each object with startOffset, endOffset and recordCount",
    "s3.object.tagging.key.value.pairs": "Extra tags, as key:value,key:value",
    "s3.object.behavior.on.tagging.error": "ignore or fail when tagging fails",
    "s3.region": "AWS region",
    "s3.part.size": "Multipart part size, and the most an object being written holds before a part is uploaded "
    "(>= 5 MiB; in memory, or spilled to local disk past the memory budget)",
    "s3.credentials.provider.class": "AWS SDK v1/v2 credentials provider class, or Confluent's "
    "AwsAssumeRoleCredentialsProvider (s3.credentials.provider.sts.*); see "
    "docs/credentials.md",
    "aws.access.key.id": "Static credentials (with a non-configurable provider), or the base credentials of "
    "AwsAssumeRoleCredentialsProvider",
    "aws.secret.access.key": "Static credentials (never printed)",
    "s3.ssea.name": "Server-side encryption: AES256 (SSE-S3, or SSE-C with s3.sse.customer.key), aws:kms, aws:kms:dsse",
    "s3.sse.customer.key": "SSE-C key, base64 (with s3.ssea.name=AES256; never printed)",
    "s3.sse.kms.key.id": "KMS key for aws:kms / aws:kms:dsse",
    "s3.acl.canned": "Canned ACL of each object",
    "s3.compression.type": "none or gzip for JSON and ByteArray (zstd: our extension)",
    "s3.compression.level": "gzip level, -1 (default) to 9",
    "s3.part.retries": "Total attempts of each S3 request",
    "format.bytearray.extension": "ByteArrayFormat file extension",
    "format.bytearray.separator": "ByteArrayFormat bytes after every record, as written (default: newline)",
    "behavior.on.null.values": "Null values: fail, ignore, or write (to tombstone.encoded.partition; needs keys)",
    "rotate.file.on.partition.change": "With rotate.interval.ms, rotate when the encoded partition changes",
    "tombstone.encoded.partition": "Directory of tombstones with behavior.on.null.values=write",
    "s3.schema.partition.affix.type": "NONE, PREFIX or SUFFIX: add schema_name=<name> to the partition path",
    "store.kafka.keys": "Also write keys to <file>.keys<ext>",
    "store.kafka.headers": "Also write headers to <file>.headers<ext>",
    "keys.format.class": "Format of key files",
    "headers.format.class": "Format of header files",
    "s3.path.style.access.enabled": "Path-style S3 addressing (needed by most S3-compatible servers)",
    "partitioner.max.open.files": "Commit all open files before one more would be opened (-1: no limit)",
    "s3.elastic.buffer.enable": "No effect: an object's buffer always grows with what is written, up to one part, "
    "within the task's memory budget (docs/memory.md)",
    "s3.elastic.buffer.init.capacity": "No effect (see s3.elastic.buffer.enable)",
}


def _documented(key: KeyDef) -> KeyDef:
    from dataclasses import replace

    return key if key.doc else replace(key, doc=DOCS.get(key.name, ""))


ALL_KEYS: dict[str, KeyDef] = {k.name: _documented(k) for k in FRAMEWORK_KEYS + SINK_KEYS + EXTENSION_KEYS}

NULL_CONTEXT_NAME_STRATEGY = "io.confluent.kafka.serializers.context.NullContextNameStrategy"
_PRODUCER_ONLY = "A serializer's setting: records are only read here"
_JAVA_CLASSES = "Maps records to Java classes: records are read as generic data here"
_OAUTH_ONLY = "Only with bearer.auth.credentials.source OAUTHBEARER or CUSTOM, not supported yet"
_JVM_TLS = "Java TLS tuning: Python's ssl negotiates TLS 1.2 or 1.3 with its default ciphers"
_DUAL_ID = "io.confluent.kafka.serializers.schema.id.DualSchemaIdDeserializer"
_PREFIX_ID = "io.confluent.kafka.serializers.schema.id.PrefixSchemaIdDeserializer"

# Settings under key.converter. / value.converter. (prefix stripped) that the converters understand.
CONVERTER_SETTINGS: dict[str, KeyDef] = {
    k.name: k
    for k in [
        _k("schema.registry.url", Type.STRING, None, F),
        _k("schemas.enable", Type.BOOLEAN, True, F),
        _k("schemas.cache.size", Type.INT, 1000, I, doc="JsonConverter: a cache size (schemas are cached per process)"),
        _k("auto.register.schemas", Type.BOOLEAN, True, I, doc=_PRODUCER_ONLY),
        # Since Confluent 7.4 the deserializers of the converters read records into the subject's latest
        # schema (their "reader schema") when this is true: not only a producer setting.
        _k(
            "use.latest.version",
            Type.BOOLEAN,
            False,
            F,
            doc="Registry converters: records are read into the latest version of their subject (AvroConverter: "
            "Avro schema resolution, connect.version the writer's; Protobuf / JSON Schema: the latest schema's "
            "Connect schema and version)",
        ),
        _k(
            "latest.compatibility.strict",
            Type.BOOLEAN,
            True,
            I,
            doc="A serializer's check: the deserializers look the latest version up without it",
        ),
        _k(
            "enhanced.avro.schema.support",
            Type.BOOLEAN,
            False,
            F,
            doc="AvroConverter: union branches of named types are named by full name in the Connect schema",
        ),
        _k(
            "connect.meta.data",
            Type.BOOLEAN,
            True,
            F,
            doc="AvroConverter: record, field and enum docs, the field-default flag, connect.doc and "
            "connect.parameters become Connect schema attributes (so file schemas and schema.compatibility "
            "see them)",
        ),
        # The subject whose version of the schema becomes connect.version (sink.schema.subject_names).
        _k(
            "value.subject.name.strategy",
            Type.CLASS,
            "io.confluent.kafka.serializers.subject.TopicNameStrategy",
            F,
            known_class(
                *(
                    "io.confluent.kafka.serializers.subject." + n
                    for n in ("TopicNameStrategy", "RecordNameStrategy", "TopicRecordNameStrategy")
                )
            ),
            "AvroConverter (values): TopicNameStrategy (<topic>-value), RecordNameStrategy (<record full name>) or "
            "TopicRecordNameStrategy (<topic>-<record full name>), io.confluent.kafka.serializers.subject.*",
        ),
        _k(
            "key.subject.name.strategy",
            Type.CLASS,
            "io.confluent.kafka.serializers.subject.TopicNameStrategy",
            F,
            known_class(
                *(
                    "io.confluent.kafka.serializers.subject." + n
                    for n in ("TopicNameStrategy", "RecordNameStrategy", "TopicRecordNameStrategy")
                )
            ),
            "AvroConverter (keys): as value.subject.name.strategy, with <topic>-key for TopicNameStrategy",
        ),
        # Schema registry client (AvroConverter). Secrets are PASSWORD keys: never printed.
        _k(
            "basic.auth.credentials.source",
            Type.STRING,
            "URL",
            F,
            one_of("URL", "USER_INFO"),
            "Registry basic auth: URL (user:password@ in schema.registry.url) or USER_INFO (basic.auth.user.info)",
        ),
        _k("basic.auth.user.info", Type.PASSWORD, None, F, doc="Registry basic auth user:password (USER_INFO)"),
        _k(
            "bearer.auth.credentials.source",
            Type.STRING,
            None,
            F,
            one_of("STATIC_TOKEN"),
            "Registry bearer auth: STATIC_TOKEN (bearer.auth.token); excludes basic.auth.credentials.source",
        ),
        _k("bearer.auth.token", Type.PASSWORD, None, F, doc="Registry bearer token (STATIC_TOKEN)"),
        _k(
            "bearer.auth.logical.cluster",
            Type.STRING,
            None,
            F,
            doc="With bearer auth: sent as the target-sr-cluster header (Confluent Cloud)",
        ),
        _k(
            "bearer.auth.identity.pool.id",
            Type.STRING,
            None,
            F,
            doc="With bearer auth: sent as the Confluent-Identity-Pool-Id header (Confluent Cloud)",
        ),
        # PEM files, as Python's ssl and confluent-kafka-python take them; Java's JKS/PKCS12 truststore and
        # keystore settings (schema.registry.ssl.truststore.location, ...) are not read.
        _k(
            "schema.registry.ssl.ca.location",
            Type.STRING,
            None,
            F,
            doc="PEM CA bundle that signs the registry's certificate (else the system CAs)",
        ),
        _k(
            "schema.registry.ssl.certificate.location",
            Type.STRING,
            None,
            F,
            doc="PEM client certificate for mutual TLS (may also hold the key)",
        ),
        _k(
            "schema.registry.ssl.key.location",
            Type.STRING,
            None,
            F,
            doc="PEM private key of the client certificate (unencrypted)",
        ),
        _k(
            "max.retries",
            Type.INT,
            3,
            F,
            at_least(0),
            "Registry request retries per URL on connection errors, 408, 429, 500, 502, 503, 504",
        ),
        _k("retries.wait.ms", Type.INT, 1000, F, at_least(0), "First retry backoff; doubles per retry, full jitter"),
        _k("retries.max.wait.ms", Type.INT, 20000, F, at_least(0), "Longest retry backoff"),
        _k(
            "decimal.format",
            Type.STRING,
            "BASE64",
            F,
            one_of("BASE64", "NUMERIC", case_sensitive=False),
            "JsonConverter: how Kafka writes decimals; reading accepts base64 and numbers either way, as Kafka does",
        ),
        # ProtobufConverter's ProtobufData settings (read path; defaults as Confluent's ProtobufDataConfig).
        _k(
            "enhanced.protobuf.schema.support",
            Type.BOOLEAN,
            False,
            F,
            doc="ProtobufConverter: messages, enums, maps and oneofs named by full name (package.Outer.Inner)",
        ),
        _k("int.for.enums", Type.BOOLEAN, False, F, doc="ProtobufConverter: enums as their numbers (INT32)"),
        _k(
            "optional.for.nullables",
            Type.BOOLEAN,
            False,
            F,
            doc="ProtobufConverter: only fields declared optional are optional in the Connect schema",
        ),
        _k(
            "optional.for.proto2",
            Type.BOOLEAN,
            True,
            F,
            doc="ProtobufConverter: an unset proto2 optional field is null (false: its default value)",
        ),
        _k(
            "wrapper.for.nullables",
            Type.BOOLEAN,
            False,
            F,
            doc="ProtobufConverter: google.protobuf.*Value wrappers are optional primitives, other scalars required",
        ),
        _k(
            "wrapper.for.raw.primitives",
            Type.BOOLEAN,
            True,
            F,
            doc="ProtobufConverter: a top-level wrapper message is its bare primitive",
        ),
        _k(
            "generate.struct.for.nulls",
            Type.BOOLEAN,
            False,
            F,
            doc="ProtobufConverter: unset messages and optional fields get their default instead of null",
        ),
        _k(
            "generate.index.for.unions",
            Type.BOOLEAN,
            True,
            F,
            doc="ProtobufConverter: a oneof is the field <oneof>_<index> (false: <oneof>)",
        ),
        _k(
            "flatten.unions",
            Type.BOOLEAN,
            False,
            F,
            doc="ProtobufConverter: oneof members are plain optional fields of their message",
        ),
        _k(
            "generalized.sum.type.support",
            Type.BOOLEAN,
            False,
            F,
            doc="ProtobufConverter, JsonSchemaConverter: oneofs and enums as Connect's generalized Union and Enum",
        ),
        _k(
            "kafka_s3_assets.protobuf.unique.names",
            Type.BOOLEAN,
            False,
            F,
            doc="ProtobufConverter (ours, off as Confluent): types whose simple names clash in one schema (equal "
            "oneof or message names in different scopes) get their full names, where Confluent's AvroData fails",
        ),
        _k("scrub.invalid.names", Type.BOOLEAN, False, I, doc="Protobuf/JSON Schema converters: write path only"),
        _k("ignore.default.for.nullables", Type.BOOLEAN, False, I, doc="Schema registry converters: write path only"),
        _k("schemas.cache.config", Type.INT, 1000, I, at_least(0), "Schema registry converters: schema cache size"),
        # JsonSchemaConverter's JsonSchemaData settings.
        _k(
            "use.optional.for.nonrequired",
            Type.BOOLEAN,
            False,
            F,
            doc="JsonSchemaConverter: properties not listed in required are optional",
        ),
        _k(
            "flatten.singleton.unions",
            Type.BOOLEAN,
            True,
            F,
            doc="JsonSchemaConverter: a oneOf/anyOf of one schema is that schema",
        ),
        _k(
            "ignore.modern.dialects",
            Type.BOOLEAN,
            False,
            F,
            doc="JsonSchemaConverter: 2019-09 and 2020-12 schemas read as draft 7 (what this project does either way)",
        ),
        _k("object.additional.properties", Type.BOOLEAN, True, I, doc="JsonSchemaConverter: write path only"),
        _k(
            "kafka_s3_assets.json.schema.avro.safe.union.names",
            Type.BOOLEAN,
            False,
            F,
            doc="JsonSchemaConverter (ours, off as Confluent): oneOf/anyOf structs get field names Avro accepts "
            "(io_confluent_connect_json_OneOf_field_<i>), where Confluent's AvroData fails on the dotted names",
        ),
        _k("json.fail.invalid.schema", Type.BOOLEAN, False, I, doc="JsonSchemaConverter: payloads are not validated"),
        _k("json.fail.unknown.properties", Type.BOOLEAN, True, I, doc="JsonSchemaConverter: no effect on this path"),
        _k("converter.type", Type.STRING, None, I, doc="Set by Connect for the converter; nothing to choose"),
        _k("encoding", Type.STRING, "UTF8", D),
        # -- The rest of Confluent's serializer/deserializer configs (AbstractKafkaSchemaSerDeConfig and the
        # Avro, Protobuf and JSON Schema serializer and deserializer configs, AvroDataConfig and
        # JsonSchemaDataConfig), with their ConfigDef types and defaults. Settings of a producer, of Java
        # classes or of the JVM's TLS are INERT (`kafka-s3-assets validate` lists the ones a config sets); ones
        # that would change what is read, and are not implemented, accept only their default.
        _k(
            "schema.registry.url.randomize",
            Type.BOOLEAN,
            False,
            F,
            doc="Registry client: start from a random URL of schema.registry.url (then fail over in order)",
        ),
        _k("max.schemas.per.subject", Type.INT, 1000, I, doc="A cache size (schemas are cached per process)"),
        _k("normalize.schemas", Type.BOOLEAN, False, I, doc=_PRODUCER_ONLY),
        _k("propagate.schema.tags", Type.BOOLEAN, False, I, doc=_PRODUCER_ONLY),
        _k("use.schema.id", Type.INT, -1, I, doc=_PRODUCER_ONLY),
        _k("use.schema.guid", Type.STRING, None, I, doc=_PRODUCER_ONLY),
        _k("id.compatibility.strict", Type.BOOLEAN, True, I, doc=_PRODUCER_ONLY),
        _k(
            "use.latest.with.metadata",
            Type.STRING,
            None,
            F,
            metadata_spec,
            doc="Registry converters: as use.latest.version (which it overrides), with the subject's latest "
            "version whose metadata properties hold these key=value pairs (comma separated)",
        ),
        _k("latest.cache.size", Type.INT, 1000, I, doc="A cache size (latest versions are cached per converter)"),
        _k(
            "latest.cache.ttl.sec",
            Type.INT,
            -1,
            F,
            doc="With use.latest.*: seconds a looked-up latest version is kept before it is asked again "
            "(-1: for the whole run)",
        ),
        _k("schema.format", Type.STRING, None, I, doc="The text format of schemas a serializer registers"),
        _k(
            "execution.environment",
            Type.STRING,
            None,
            F,
            one_of("ALL", "CLIENT", "GATEWAY", "SERVER", "NONE"),
            "Data contract rules: a rule set's enableAt other than ALL applies only in this environment",
        ),
        # Data contract rules (docs/configuration.md, sink.data_rules): executors and actions are Java classes.
        _k(
            "rule.executors",
            Type.LIST,
            [],
            F,
            doc="Data contract rule executors: one named with rule.executors.<name>.class is a Java class, refused; "
            "rule.executors.<rule>.disabled / .onFailure are read",
        ),
        _k(
            "rule.actions",
            Type.LIST,
            [],
            F,
            doc="Data contract rule actions: one named with rule.actions.<name>.class is a Java class, refused",
        ),
        _k(
            "rule.service.loader.enable",
            Type.BOOLEAN,
            True,
            F,
            doc="Data contract rules: true, a rule a reader runs (READ/WRITEREAD) stops the export, as its executor "
            "cannot run here; false, no executor: its onFailure action decides (ERROR fails the record, NONE not)",
        ),
        _k("rule.metrics.enable", Type.BOOLEAN, True, I, doc="Metrics of rule executors: none runs here"),
        _k(
            "validation.rules.executor.class",
            Type.STRING,
            "io.confluent.kafka.schemaregistry.rules.cel.CelValidator",
            I,
            doc="Inline validation rules: a serializer's",
        ),
        _k("validation.rules.fail.fast", Type.BOOLEAN, False, I, doc="Inline validation rules: a serializer's"),
        _k("validation.rules.execution", Type.STRING, "DISABLED", I, doc="Inline validation rules: a serializer's"),
        # Bearer sources other than STATIC_TOKEN are refused (bearer.auth.credentials.source), so these, which
        # only they read, have no effect, as in Confluent's client with STATIC_TOKEN.
        _k("bearer.auth.issuer.endpoint.url", Type.STRING, None, I, doc=_OAUTH_ONLY),
        _k("bearer.auth.client.id", Type.STRING, None, I, doc=_OAUTH_ONLY),
        _k("bearer.auth.client.secret", Type.PASSWORD, None, I, doc=_OAUTH_ONLY),
        _k("bearer.auth.scope", Type.STRING, None, I, doc=_OAUTH_ONLY),
        _k("bearer.auth.scope.claim.name", Type.STRING, "scope", I, doc=_OAUTH_ONLY),
        _k("bearer.auth.sub.claim.name", Type.STRING, "sub", I, doc=_OAUTH_ONLY),
        # ConfigDef type SHORT with Range.between(0, 3600).
        _k("bearer.auth.cache.expiry.buffer.seconds", Type.INT, 300, I, between(0, 3600), doc=_OAUTH_ONLY),
        _k("bearer.auth.custom.provider.class", Type.STRING, None, I, doc=_OAUTH_ONLY),
        # Another strategy is a Java class (Confluent ships only NullContextNameStrategy).
        _k(
            "context.name.strategy",
            Type.CLASS,
            NULL_CONTEXT_NAME_STRATEGY,
            F,
            java_class_refused(
                NULL_CONTEXT_NAME_STRATEGY,
                "a context name strategy is a Java class that kafka_s3_assets cannot run; only Confluent's "
                "NullContextNameStrategy (the default: subjects in the default context) is built in",
            ),
            "Registry converters: NullContextNameStrategy (the default context) only; another class is refused",
        ),
        _k(
            "key.schema.id.serializer",
            Type.CLASS,
            "io.confluent.kafka.serializers.schema.id.PrefixSchemaIdSerializer",
            I,
            doc=_PRODUCER_ONLY,
        ),
        _k(
            "value.schema.id.serializer",
            Type.CLASS,
            "io.confluent.kafka.serializers.schema.id.PrefixSchemaIdSerializer",
            I,
            doc=_PRODUCER_ONLY,
        ),
        _k(
            "key.schema.id.deserializer",
            Type.CLASS,
            _DUAL_ID,
            F,
            known_class(_DUAL_ID, _PREFIX_ID),
            "Registry converters: the schema id from the magic byte and 4-byte prefix (ids in headers are not read)",
        ),
        _k(
            "value.schema.id.deserializer",
            Type.CLASS,
            _DUAL_ID,
            F,
            known_class(_DUAL_ID, _PREFIX_ID),
            "Registry converters: the schema id from the magic byte and 4-byte prefix (ids in headers are not read)",
        ),
        _k("schema.reflection", Type.BOOLEAN, False, I, doc=_JAVA_CLASSES),
        _k("proxy.host", Type.STRING, "", F, doc="Registry client: HTTP proxy host (with proxy.port > 0)"),
        _k("proxy.port", Type.INT, -1, F, doc="Registry client: HTTP proxy port"),
        _k(
            "http.connect.timeout.ms",
            Type.INT,
            60000,
            F,
            doc="Registry client: connect timeout (when not set: kafka_s3_assets.registry.timeout.ms)",
        ),
        _k(
            "http.read.timeout.ms",
            Type.INT,
            60000,
            F,
            doc="Registry client: read timeout (when not set: kafka_s3_assets.registry.timeout.ms)",
        ),
        # schema.registry.ssl.*: Kafka's client SSL configs (SslConfigs), for the registry client.
        _k("schema.registry.ssl.protocol", Type.STRING, "TLSv1.3", I, doc=_JVM_TLS),
        _k("schema.registry.ssl.provider", Type.STRING, None, I, doc=_JVM_TLS),
        _k("schema.registry.ssl.cipher.suites", Type.LIST, None, I, doc=_JVM_TLS),
        _k("schema.registry.ssl.enabled.protocols", Type.LIST, ["TLSv1.2", "TLSv1.3"], I, doc=_JVM_TLS),
        _k("schema.registry.ssl.keymanager.algorithm", Type.STRING, "SunX509", I, doc=_JVM_TLS),
        _k("schema.registry.ssl.trustmanager.algorithm", Type.STRING, "PKIX", I, doc=_JVM_TLS),
        _k("schema.registry.ssl.secure.random.implementation", Type.STRING, None, I, doc=_JVM_TLS),
        _k(
            "schema.registry.ssl.engine.factory.class",
            Type.CLASS,
            None,
            I,
            doc="Confluent's registry client does not read it: its SslFactory builds the SSL context from the "
            "truststore and keystore settings",
        ),
        _k(
            "schema.registry.ssl.endpoint.identification.algorithm",
            Type.STRING,
            "https",
            F,
            doc="Registry client: empty or none turns off the check of the registry's host name against its "
            "certificate (the certificate chain is still verified); any other value keeps it",
        ),
        _k(
            "schema.registry.ssl.truststore.type",
            Type.STRING,
            "JKS",
            F,
            doc="Registry client: JKS, PKCS12 or PEM (file or schema.registry.ssl.truststore.certificates)",
        ),
        _k(
            "schema.registry.ssl.truststore.location",
            Type.STRING,
            None,
            F,
            doc="Registry client: the truststore of the registry's CA (JKS and PKCS12 read where the config is read)",
        ),
        _k("schema.registry.ssl.truststore.password", Type.PASSWORD, None, F, doc="Registry client: its password"),
        _k(
            "schema.registry.ssl.truststore.certificates",
            Type.PASSWORD,
            None,
            F,
            doc="Registry client: the CA certificates as PEM text (truststore type PEM)",
        ),
        _k(
            "schema.registry.ssl.keystore.type",
            Type.STRING,
            "JKS",
            F,
            doc="Registry client: PKCS12 or PEM for mutual TLS (a JKS keystore cannot be read)",
        ),
        _k(
            "schema.registry.ssl.keystore.location",
            Type.STRING,
            None,
            F,
            doc="Registry client: the client key and certificate (PKCS12 read where the config is read; PEM: one "
            "file with both)",
        ),
        _k("schema.registry.ssl.keystore.password", Type.PASSWORD, None, F, doc="Registry client: its password"),
        _k(
            "schema.registry.ssl.key.password",
            Type.PASSWORD,
            None,
            F,
            doc="Registry client: the password of an encrypted private key (PEM keystore or key.location)",
        ),
        _k(
            "schema.registry.ssl.keystore.key",
            Type.PASSWORD,
            None,
            F,
            doc="Registry client: the private key as PEM text (keystore type PEM)",
        ),
        _k(
            "schema.registry.ssl.keystore.certificate.chain",
            Type.PASSWORD,
            None,
            F,
            doc="Registry client: the client certificate chain as PEM text (keystore type PEM)",
        ),
        # KafkaAvroSerializerConfig / KafkaAvroDeserializerConfig.
        _k("avro.reflection.allow.null", Type.BOOLEAN, False, I, doc=_JAVA_CLASSES),
        _k("avro.use.logical.type.converters", Type.BOOLEAN, False, I, doc=_JAVA_CLASSES),
        _k("avro.remove.java.properties", Type.BOOLEAN, False, I, doc=_PRODUCER_ONLY),
        _k("specific.avro.reader", Type.BOOLEAN, False, I, doc=_JAVA_CLASSES),
        _k("specific.avro.key.type", Type.CLASS, None, I, doc=_JAVA_CLASSES),
        _k("specific.avro.value.type", Type.CLASS, None, I, doc=_JAVA_CLASSES),
        _k(
            "avro.fail.on.trailing.data",
            Type.BOOLEAN,
            False,
            F,
            doc="AvroConverter (Confluent 8.0+): a record with bytes after its datum fails, even with "
            "kafka_s3_assets.avro.validate.datums=false (which otherwise copies datums unchecked)",
        ),
        # KafkaProtobufSerializerConfig / KafkaProtobufDeserializerConfig.
        _k("reference.lookup.only", Type.BOOLEAN, False, I, doc=_PRODUCER_ONLY),
        _k("skip.known.types", Type.BOOLEAN, True, I, doc=_PRODUCER_ONLY),
        _k(
            "reference.subject.name.strategy",
            Type.CLASS,
            "io.confluent.kafka.serializers.subject.DefaultReferenceSubjectNameStrategy",
            I,
            doc=_PRODUCER_ONLY,
        ),
        _k("specific.protobuf.key.type", Type.CLASS, "java.lang.Object", I, doc=_JAVA_CLASSES),
        _k("specific.protobuf.value.type", Type.CLASS, "java.lang.Object", I, doc=_JAVA_CLASSES),
        _k("derive.type", Type.BOOLEAN, False, I, doc=_JAVA_CLASSES),
        # KafkaJsonSchemaSerializerConfig / KafkaJsonSchemaDeserializerConfig.
        _k("json.validate.before.domain.rules", Type.BOOLEAN, False, I, doc="Data contract rules: none are run"),
        _k("json.write.dates.iso8601", Type.BOOLEAN, False, I, doc=_PRODUCER_ONLY),
        _k("json.schema.spec.version", Type.STRING, "draft_7", I, doc=_PRODUCER_ONLY),
        _k("json.schema.scan.packages", Type.LIST, [], I, doc=_PRODUCER_ONLY),
        _k("json.envelope.detection", Type.BOOLEAN, True, I, doc=_PRODUCER_ONLY),
        _k("json.oneof.for.nullables", Type.BOOLEAN, True, I, doc=_PRODUCER_ONLY),
        _k("json.default.property.inclusion", Type.STRING, None, I, doc=_PRODUCER_ONLY),
        _k("json.indent.output", Type.BOOLEAN, False, I, doc=_PRODUCER_ONLY),
        _k("json.key.type", Type.CLASS, "java.lang.Object", I, doc=_JAVA_CLASSES),
        _k("json.value.type", Type.CLASS, "java.lang.Object", I, doc=_JAVA_CLASSES),
        _k("type.property", Type.STRING, "javaType", I, doc=_JAVA_CLASSES),
        _k("json.type.allowed.packages", Type.LIST, ["*"], I, doc=_JAVA_CLASSES),
        # AvroDataConfig / JsonSchemaDataConfig settings not above.
        _k(
            "allow.optional.map.keys",
            Type.BOOLEAN,
            False,
            I,
            doc="AvroConverter: Connect -> Avro only (the sink's own allow.optional.map.keys shapes its files)",
        ),
        _k(
            "discard.type.doc.default",
            Type.BOOLEAN,
            False,
            F,
            doc="AvroConverter (deprecated in Confluent): only field docs and defaults are kept: a field's doc (else "
            "its type's) becomes its Connect schema's doc, record / field / enum doc and enum default parameters "
            "and the field-default flag are not made, a type's doc becomes connect.record.doc (connect.enum.doc)",
        ),
        _k(
            "preserve.additional.properties",
            Type.BOOLEAN,
            False,
            D,
            doc="JsonSchemaConverter (Confluent 8.3+): true keeps undeclared properties in a map of Connect "
            "Variant values, a type this project's converters and formats do not have",
        ),
    ]
}

# Other names of settings above (alias -> setting), with the same types and checks. Confluent's registry client
# strips ``schema.registry.`` from the names it is given (CachedSchemaRegistryClient), so each of its settings
# works with that prefix too; ``schema.registry.basic.auth.user.info`` is ConfigDef's own (deprecated) name,
# and ``url.randomize`` the client's name of ``schema.registry.url.randomize``. Where both names are set, the
# prefixed one wins, as UserInfoCredentialProvider reads the deprecated user info first.
_REGISTRY_CLIENT_SETTINGS = (
    "basic.auth.credentials.source",
    "basic.auth.user.info",
    "bearer.auth.credentials.source",
    "bearer.auth.token",
    "bearer.auth.logical.cluster",
    "bearer.auth.identity.pool.id",
    "bearer.auth.issuer.endpoint.url",
    "bearer.auth.client.id",
    "bearer.auth.client.secret",
    "bearer.auth.scope",
    "bearer.auth.scope.claim.name",
    "bearer.auth.sub.claim.name",
    "bearer.auth.cache.expiry.buffer.seconds",
    "bearer.auth.custom.provider.class",
    "max.retries",
    "retries.wait.ms",
    "retries.max.wait.ms",
    "http.connect.timeout.ms",
    "http.read.timeout.ms",
    "proxy.host",
    "proxy.port",
)
CONVERTER_ALIASES: dict[str, str] = {
    **{"schema.registry." + name: name for name in _REGISTRY_CLIENT_SETTINGS},
    "url.randomize": "schema.registry.url.randomize",
}
CONVERTER_SETTINGS.update(
    {
        alias: replace(CONVERTER_SETTINGS[name], name=alias, doc=f"Another name of {name}")
        for alias, name in CONVERTER_ALIASES.items()
    }
)


def converter_setting_value(settings: Mapping[str, Any], name: str) -> Any:
    """A converter's setting by its name in CONVERTER_SETTINGS, an alias taking precedence when set (not None
    nor empty)."""
    for alias, target in CONVERTER_ALIASES.items():
        if target == name and settings.get(alias) not in (None, ""):
            return settings[alias]
    return settings.get(name)


def inert_converter_settings(keys: Iterable[str], extra: Mapping[str, KeyDef] | None = None) -> list[tuple[str, str]]:
    """The converter settings among ``keys`` (prefixed, as a config has them) that are accepted and have no
    effect, each with why: what ``kafka-s3-assets validate`` lists. ``extra``: another converter's table."""
    found = []
    for key in sorted(keys):
        prefix = next((p for p in CONVERTER_PREFIXES if key.startswith(p)), None)
        if prefix is None:
            continue
        setting = key[len(prefix) :]
        definition = CONVERTER_SETTINGS.get(setting) or (extra or {}).get(setting)
        if definition is not None and definition.support == Support.INERT:
            found.append((key, definition.doc))
        elif definition is None:  # rule.executors.<name>.param.*, ...: no table entry
            reason = inert_reason(setting)
            if reason is not None:
                found.append((key, reason))
    return found


CONVERTER_PREFIXES = ("key.converter.", "value.converter.", "header.converter.")
# Connect passes these prefixes to other components; accepted and passed through or ignored.
PASSTHROUGH_PREFIXES = ("consumer.override.", "producer.override.", "admin.override.", "transforms.", "predicates.")
