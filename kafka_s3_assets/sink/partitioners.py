"""Partitioners: the encoded partition (directory) of each record's object: Default, Field,
TimeBased, Daily and Hourly (and the third-party FieldAndTimeBasedPartitioner, a TimeBasedPartitioner
of its own module, ``field_and_time_partitioner``).

The five Confluent partitioners (``io.confluent.connect.storage.partitioner.*``), optionally wrapped
by the S3 sink's SchemaPartitioner affix. They are pure: a record (and, for Wallclock, the writer's
``now``) in, a string out, so replaying a topic reproduces the same keys.

Failures follow the reference's split (see ``partition_errors``): ``PartitionError`` is the
DLQ-able PartitionException; ``PartitionDataError`` and ``TimestampFormatError`` are fatal there.
"""

from __future__ import annotations

from typing import Protocol

from .errors import ConfigError
from .partition_errors import PartitionDataError, PartitionError, TimestampFormatError
from .partitioner_config import (
    AFFIX_TYPES,
    DEFAULT_PARTITIONER,
    FIELD_AND_TIME_PARTITIONER,
    FIELD_PARTITIONER,
    TIME_BASED_PARTITIONERS,
    partitioner_problems,
    setting,
    time_based_settings,
)
from .records import SinkRecord
from .schema.connect_fields import ValueReader, is_missing, is_struct, nested_value
from .schema.connect_schema import BOOLEAN, DATE, INT8, INT16, INT32, INT64, STRING, TIME, TIMESTAMP, ConnectSchema
from .timebased.calendar_math import java_div
from .timebased.joda import JodaFormatter
from .timebased.timestamps import TimestampExtractor, build_timestamp_extractor
from .timebased.zones import JodaZone, zone_for_id

_ENCODING_ERROR = "Error encoding partition."
_INTEGER_TYPES = (INT8, INT16, INT32, INT64)


class Partitioner(Protocol):
    @property
    def timestamp_extractor(self) -> TimestampExtractor | None: ...  # only time-based partitioners have one

    def encode_partition(self, record: SinkRecord, now_ms: int) -> str: ...

    def partitioned_path(self, topic: str, encoded_partition: str) -> str: ...


class _Partitioner:
    timestamp_extractor: TimestampExtractor | None = None

    def __init__(self, delim: str):
        self.delim = delim

    def partitioned_path(self, topic: str, encoded_partition: str) -> str:
        """DefaultPartitioner.generatePartitionedPath: ``topic + directory.delim + encoded``."""
        return f"{topic}{self.delim}{encoded_partition}"


class DefaultPartitioner(_Partitioner):
    """``partition=<kafka partition>``: every record of a topic-partition goes to one directory."""

    def __init__(self, delim: str = "/"):
        super().__init__(delim)

    def encode_partition(self, record: SinkRecord, now_ms: int) -> str:
        return f"partition={record.partition}"


class FieldPartitioner(_Partitioner):
    """``name=value`` per ``partition.field.name`` entry, in config order, joined by the delimiter.

    Values are not escaped (a ``/`` in a string makes more directories, as in the reference). Beyond
    the reference, schemaless JSON objects are partitioned too, by the JSON type of each value.
    """

    def __init__(self, field_names: list[str], delim: str, values: ValueReader):
        super().__init__(delim)
        self.field_names = list(field_names)
        self._values = values

    def encode_partition(self, record: SinkRecord, now_ms: int) -> str:
        data = record.value
        schema = self._values.schema(data)
        if schema is not None:
            if is_struct(schema):
                struct = self._values.value(data)
                if isinstance(struct, dict):
                    return self.delim.join(self._struct_segment(struct, schema, name) for name in self.field_names)
        elif data is not None:
            value = self._values.value(data)
            if isinstance(value, dict):
                return self.delim.join(self._map_segment(value, name) for name in self.field_names)
        raise PartitionError(_ENCODING_ERROR)  # not a Struct (nor a JSON object)

    def _struct_segment(self, struct: dict, schema: ConnectSchema, name: str) -> str:
        field_type = self._values.field(schema, name)
        if field_type is None:
            raise PartitionDataError(f"Field '{name}' is not present in the schema.")
        value = nested_value(struct, name)
        if value is None or is_missing(value):  # a null field, or a null optional parent struct
            return f"{name}=null"
        if field_type.type in _INTEGER_TYPES:
            if field_type.logical in (DATE, TIME, TIMESTAMP):
                raise PartitionDataError(
                    f"Partition field '{name}' has Connect logical type {field_type.logical}, which FieldPartitioner "
                    "cannot encode (the reference fails with a ClassCastException)"
                )
            return f"{name}={value}"
        if field_type.type == STRING:
            return f"{name}={value}"
        if field_type.type == BOOLEAN:
            return f"{name}={'true' if value else 'false'}"
        raise PartitionError(_ENCODING_ERROR)  # FLOAT32/64, BYTES, ARRAY, MAP, STRUCT

    @staticmethod
    def _map_segment(container: dict, name: str) -> str:
        value = nested_value(container, name)
        if is_missing(value):
            raise PartitionDataError(f"Field '{name}' is not present in the schema.")
        if value is None:
            return f"{name}=null"
        if isinstance(value, bool):
            return f"{name}={'true' if value else 'false'}"
        if isinstance(value, (int, str)):
            return f"{name}={value}"
        raise PartitionError(_ENCODING_ERROR)  # JSON numbers with a fraction, arrays, objects


def describe_record(record: SinkRecord) -> str:
    """Where a record is, without its contents (for messages that end up in logs)."""
    timestamp = "null" if record.timestamp is None else record.timestamp
    return (
        f"SinkRecord{{topic='{record.topic}', kafkaPartition={record.partition}, "
        f"kafkaOffset={record.offset}, timestamp={timestamp}}}"
    )


class TimeBasedPartitioner(_Partitioner):
    """The time bucket of the extracted timestamp, printed with the Joda ``path.format``.

    Buckets are aligned on *local* time: ``trunc(local / duration) * duration`` with Java's truncating
    division (so a local time before 1970 rounds up), converted back with Joda's non-strict
    ``convertLocalToUTC`` (DST gaps and overlaps resolved as the reference does).
    """

    def __init__(
        self, duration_ms: int, path_format: str, locale: str, zone: JodaZone, extractor: TimestampExtractor, delim: str
    ):
        super().__init__(delim)
        if duration_ms <= 0:
            raise ValueError(f"partition duration must be positive, got {duration_ms}")
        self.duration_ms = duration_ms
        self.path_format = path_format
        self.zone = zone
        self.timestamp_extractor: TimestampExtractor = extractor
        self._formatter = JodaFormatter(path_format, zone, locale)
        self._last_bucket: tuple[int, str] | None = None  # (bucket start, its encoding)
        self._last_span: tuple[int, int, str] | None = None  # instants [low, high) known to print as this

    def encode_partition(self, record: SinkRecord, now_ms: int) -> str:
        timestamp = self.timestamp_extractor.extract(record, now_ms)
        if timestamp is None:
            raise PartitionError(
                f"Unable to determine timestamp using timestamp.extractor "
                f"{self.timestamp_extractor.java_class} for record: {describe_record(record)}"
            )
        return self.encode_timestamp(timestamp)

    def bucket_start(self, timestamp: int) -> int:
        """TimeBasedPartitioner.getPartition: the UTC instant where the timestamp's bucket starts."""
        local = self.zone.convert_utc_to_local(timestamp)
        return self.zone.convert_local_to_utc(java_div(local, self.duration_ms) * self.duration_ms, False)

    def encode_timestamp(self, timestamp: int) -> str:
        span = self._last_span
        if span is not None and span[0] <= timestamp < span[1]:
            return span[2]
        start = self.bucket_start(timestamp)
        if self._last_bucket is None or self._last_bucket[0] != start:
            self._last_bucket = (start, self._formatter.print(start))
        low, high = self._span_of_bucket(timestamp)
        self._last_span = (low, high, self._last_bucket[1])
        return self._last_bucket[1]

    def encoded_span(self, timestamp: int) -> tuple[str, int, int]:
        """``encode_timestamp(timestamp)``, and instants ``[low, high)`` around it certain to print alike
        (at least the timestamp itself), for printing a batch once per bucket."""
        text = self.encode_timestamp(timestamp)
        span = self._last_span
        if span is not None and span[0] <= timestamp < span[1]:
            return text, span[0], span[1]
        return text, timestamp, timestamp + 1

    def _span_of_bucket(self, timestamp: int) -> tuple[int, int]:
        """The UTC instants around ``timestamp`` certain to share its bucket (at least itself).

        With one UTC offset ``off`` over the span, local time is ``utc + off`` there, so the instants whose
        local time falls in the same ``duration``-long bucket share its start. Converting a zone's offsets
        costs ~6 us a record, so a run of records in one bucket pays it once. The span is used only where
        that reasoning holds: a local time not before 1970 (Java's division truncates toward zero, so
        buckets before 1970 are aligned differently) and a span with one offset throughout (checked at
        both ends, for buckets up to a day: like the zone arithmetic, this takes a zone to change its
        offset at most once a day)."""
        offset = self.zone.offset(timestamp)
        local = timestamp + offset
        if local < 0:
            return timestamp, timestamp + 1
        bucket_local = local - local % self.duration_ms
        low, high = bucket_local - offset, bucket_local + self.duration_ms - offset
        if not self.zone.is_fixed and (
            self.duration_ms > 86_400_000 or self.zone.offset(low) != offset or self.zone.offset(high - 1) != offset
        ):
            return timestamp, timestamp + 1
        return low, high


class SchemaAffixPartitioner:
    """The S3 sink's SchemaPartitioner: ``schema_name=<value schema name>`` before (PREFIX) or after
    (SUFFIX) the wrapped partitioner's encoding; ``schema_name=null`` without a schema or a name."""

    def __init__(self, inner: Partitioner, affix: str, delim: str, values: ValueReader):
        if affix not in AFFIX_TYPES:
            raise ValueError(f"s3.schema.partition.affix.type must be one of {AFFIX_TYPES} to wrap, got {affix}")
        self.inner = inner
        self.affix = affix
        self.delim = delim
        self._values = values

    @property
    def timestamp_extractor(self) -> TimestampExtractor | None:
        return self.inner.timestamp_extractor  # the reference unwraps DelegatingPartitioner for rotation

    def encode_partition(self, record: SinkRecord, now_ms: int) -> str:
        encoded = self.inner.encode_partition(record, now_ms)
        name = self._values.schema_name(record.value)
        schema_segment = f"schema_name={'null' if name is None else name}"
        if self.affix == "PREFIX":
            return f"{schema_segment}{self.delim}{encoded}"
        return f"{encoded}{self.delim}{schema_segment}"

    def partitioned_path(self, topic: str, encoded_partition: str) -> str:
        return self.inner.partitioned_path(topic, encoded_partition)


def build_partitioner(config, decoder=None) -> Partitioner:
    """The partitioner ``partitioner.class`` names, wrapped by the schema affix when configured.

    ``config`` is a SinkConfig or a mapping of parsed values (missing keys take their defaults);
    ``decoder`` decodes Avro values for Field/RecordField partitioning (a new AvroDecoder if None).
    """
    values = {
        key: setting(config, key)
        for key in (
            "partitioner.class",
            "partition.field.name",
            "partition.duration.ms",
            "path.format",
            "locale",
            "timezone",
            "timestamp.extractor",
            "timestamp.field",
            "directory.delim",
            "rotate.schedule.interval.ms",
            "s3.schema.partition.affix.type",
            "partition.field.format.path",
        )
    }
    problems = partitioner_problems(values)
    if problems:
        raise ConfigError(problems)
    if decoder is None:
        from .converters import AvroDecoder  # imported late: converters imports the config module

        decoder = AvroDecoder()
    reader = ValueReader(decoder)
    name, delim = values["partitioner.class"], values["directory.delim"]
    partitioner: Partitioner
    if name == DEFAULT_PARTITIONER:
        partitioner = DefaultPartitioner(delim)
    elif name == FIELD_PARTITIONER:
        partitioner = FieldPartitioner(values["partition.field.name"], delim, reader)
    elif name in TIME_BASED_PARTITIONERS:
        settings = time_based_settings(values)
        partitioner = TimeBasedPartitioner(
            settings.duration_ms,
            settings.path_format,
            settings.locale,
            zone_for_id(settings.timezone),
            build_timestamp_extractor(values, values=reader),
            delim,
        )
    elif name == FIELD_AND_TIME_PARTITIONER:
        from .field_and_time_partitioner import FieldAndTimeBasedPartitioner, format_path  # it subclasses ours

        settings = time_based_settings(values)
        partitioner = FieldAndTimeBasedPartitioner(
            values["partition.field.name"],
            format_path(values["partition.field.format.path"]),
            reader,
            settings.duration_ms,
            settings.path_format,
            settings.locale,
            zone_for_id(settings.timezone),
            build_timestamp_extractor(values, values=reader),
            delim,
        )
    else:
        raise ValueError(f"partitioner.class {name} is not supported by kafka_s3_assets")
    affix = values["s3.schema.partition.affix.type"]
    if affix in AFFIX_TYPES:
        partitioner = SchemaAffixPartitioner(partitioner, affix, delim, reader)
    return partitioner


__all__ = [
    "Partitioner",
    "PartitionError",
    "PartitionDataError",
    "TimestampFormatError",
    "DefaultPartitioner",
    "FieldPartitioner",
    "TimeBasedPartitioner",
    "SchemaAffixPartitioner",
    "build_partitioner",
    "describe_record",
]
