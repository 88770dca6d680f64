"""Timestamp extractors of the time-based partitioners (``timestamp.extractor``: Wallclock, Record, RecordField).

``Wallclock`` is the writer's ``now``; ``Record`` the Kafka record timestamp (None when absent: the
partitioner then raises a PartitionError); ``RecordField`` a field of the value, read like the
reference's ``RecordFieldTimestampExtractor``:

* Avro record values: the field's Connect type decides. Timestamp -> its millis; INT32/INT64 -> the
  number; STRING -> ``^-?[0-9]{1,19}$`` as a long, else an ISO-8601 date-time; anything else ->
  PartitionError "Error extracting timestamp from record field: <f>".
* Maps (schemaless JSON objects, Avro maps): by the Java type of the value: numbers -> ``longValue()``
  (doubles truncated), strings as above, anything else -> the same PartitionError.
* Any other value -> PartitionError "Error encoding partition.".

A missing or null field is the reference's DataException "The field '<f>' does not exist." and an
unparseable string its IllegalArgumentException ``Invalid format: ...``: neither is a PartitionError.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from ..partition_errors import PartitionDataError, PartitionError
from ..records import SinkRecord
from ..schema.connect_fields import ValueReader, is_missing, is_struct, nested_value
from ..schema.connect_schema import INT32, INT64, MAP, STRING, TIMESTAMP, ConnectSchema
from .calendar_math import double_to_long, wrap_long
from .iso_datetime import parse_iso_millis

_EXTRACTOR_PREFIX = "io.confluent.connect.storage.partitioner.TimeBasedPartitioner$"
WALLCLOCK, RECORD, RECORD_FIELD = "Wallclock", "Record", "RecordField"
# timestamp.extractor values the reference resolves to its built-in extractors.
BUILTIN_EXTRACTORS = {name: name for name in (WALLCLOCK, RECORD, RECORD_FIELD)}
BUILTIN_EXTRACTORS.update(
    {f"{_EXTRACTOR_PREFIX}{name}TimestampExtractor": name for name in (WALLCLOCK, RECORD, RECORD_FIELD)}
)

_NUMERIC_TIMESTAMP = re.compile(r"-?[0-9]{1,19}")


class TimestampExtractor(Protocol):
    java_class: str

    def extract(self, record: SinkRecord, now_ms: int) -> int | None: ...


class WallclockTimestampExtractor:
    """The processing time the writer passes: one ``now`` per write batch, as the reference."""

    java_class = f"{_EXTRACTOR_PREFIX}WallclockTimestampExtractor"

    def extract(self, record: SinkRecord, now_ms: int) -> int | None:
        return now_ms


class RecordTimestampExtractor:
    """The Kafka record timestamp (CreateTime or LogAppendTime); None when the record has none."""

    java_class = f"{_EXTRACTOR_PREFIX}RecordTimestampExtractor"

    def extract(self, record: SinkRecord, now_ms: int) -> int | None:
        return record.timestamp


def timestamp_from_string(text: str) -> int:
    """Epoch millis as numeric text (``Long.valueOf``) or ISO-8601 (Joda ``dateTimeParser``)."""
    if _NUMERIC_TIMESTAMP.fullmatch(text):
        number = int(text)
        if -(2**63) <= number < 2**63:
            return number
        # Long.valueOf overflows (NumberFormatException): the reference falls through to ISO parsing.
    return parse_iso_millis(text)


class RecordFieldTimestampExtractor:
    """The timestamp in value field ``timestamp.field`` (a dotted path reaches nested fields)."""

    java_class = f"{_EXTRACTOR_PREFIX}RecordFieldTimestampExtractor"

    def __init__(self, field_name: str, values: ValueReader):
        self.field_name = field_name
        self._values = values

    def extract(self, record: SinkRecord, now_ms: int) -> int | None:
        data = record.value
        schema = self._values.schema(data)
        if schema is not None and is_struct(schema):
            struct = self._values.value(data)
            if isinstance(struct, dict):
                return self._from_struct(struct, schema)
        elif (schema is not None and schema.type == MAP) or (schema is None and data is not None):
            value = self._values.value(data)
            if isinstance(value, dict):
                return self._from_map(value)
        raise PartitionError("Error encoding partition.")

    def _field_value(self, container: dict) -> Any:
        value = nested_value(container, self.field_name)
        if value is None or is_missing(value):
            raise PartitionDataError(f"The field '{self.field_name}' does not exist.")
        return value

    def _from_struct(self, struct: dict, schema: ConnectSchema) -> int:
        value = self._field_value(struct)
        field_type = self._values.field(schema, self.field_name)
        if field_type is None:  # unreachable for decoded Avro records (they hold every schema field)
            raise PartitionDataError(f"Field '{self.field_name}' is not present in the schema.")
        if field_type.logical == TIMESTAMP:
            return value
        if field_type.type in (INT32, INT64):
            if field_type.logical is not None:  # Date / Time hold a java.util.Date: ClassCastException
                raise PartitionDataError(
                    f"Timestamp field '{self.field_name}' has Connect logical type {field_type.logical}, which "
                    "RecordFieldTimestampExtractor cannot read (the reference fails with a ClassCastException)"
                )
            return value
        if field_type.type == STRING:
            return timestamp_from_string(value)
        raise PartitionError(f"Error extracting timestamp from record field: {self.field_name}")

    def _from_map(self, container: dict) -> int:
        value = self._field_value(container)
        if isinstance(value, bool):
            raise PartitionError(f"Error extracting timestamp from record field: {self.field_name}")
        if isinstance(value, int):
            return wrap_long(value)
        if isinstance(value, float):
            return double_to_long(value)
        if isinstance(value, str):
            return timestamp_from_string(value)
        raise PartitionError(f"Error extracting timestamp from record field: {self.field_name}")


def build_timestamp_extractor(config, decoder=None, values: ValueReader | None = None) -> TimestampExtractor:
    """The extractor named by ``timestamp.extractor`` (short or fully-qualified reference name)."""
    name = config["timestamp.extractor"]
    kind = BUILTIN_EXTRACTORS.get(name)
    if kind == WALLCLOCK:
        return WallclockTimestampExtractor()
    if kind == RECORD:
        return RecordTimestampExtractor()
    if kind == RECORD_FIELD:
        if values is None:
            if decoder is None:
                from ..converters import AvroDecoder  # imported late: converters imports the config module

                decoder = AvroDecoder()
            values = ValueReader(decoder)
        return RecordFieldTimestampExtractor(config["timestamp.field"], values)
    raise ValueError(f"Invalid timestamp extractor: {name}")
