"""The third-party ``com.canelmas.kafka.connect.FieldAndTimeBasedPartitioner``: directories of record fields,
then the time bucket of ``TimeBasedPartitioner``.

Configs of the S3 sink that installed canelmas' ``kafka-connect-field-and-time-partitioner`` jar run
unchanged. Its ``encodePartition`` is ``String.join(directory.delim, <fields>, <time>)``:

* ``<time>``: its superclass ``TimeBasedPartitioner`` (``partition.duration.ms``, ``path.format``, ``locale``,
  ``timezone``, ``timestamp.extractor``), computed first, so a record without a timestamp fails as there;
* ``<fields>``: per ``partition.field.name`` entry, ``name=value`` (``partition.field.format.path=true``,
  the default) or ``value`` (any other value: Java's ``Boolean.parseBoolean``), joined by ``/`` whatever
  ``directory.delim`` is (its ``StorageCommonConfig.DIRECTORY_DELIM_DEFAULT``), and only after a non-empty
  segment (a ``StringBuilder`` whose length is tested). The value is
  ``(String) DataUtils.getNestedFieldValue(value, name)``: a dotted path through structs and maps.

Failures, as there:

* a value that is neither a Struct nor a Map (null, a string, an array...): ``PartitionException("Error
  encoding partition.")``, the DLQ-able :class:`PartitionError`;
* a path segment that is not a field, a null value on the path, a map without the key, or a step into
  something that is neither a struct nor a map: ``DataException("The field '<path>' does not exist.")``, a
  :class:`PartitionDataError` (fatal, as it kills the reference's task);
* a value that is not a String (an int, a boolean, a struct...): the reference's ClassCastException, a
  :class:`PartitionDataError` naming the field.

One deliberate difference: the partitioner's last version reads ``partition.field.format.path`` with
``(String) config.getOrDefault(key, true)``, which throws a ClassCastException at task start when the key
is absent (its earlier versions, and its README's example, take the absent key as ``true``). Here an absent
key is ``true``.
"""

from __future__ import annotations

from typing import Any

from .config_keys import FIELD_AND_TIME_PARTITIONER
from .partition_errors import PartitionDataError, PartitionError
from .partitioners import TimeBasedPartitioner
from .records import SinkRecord
from .schema.connect_fields import ValueReader
from .schema.connect_schema import MAP, STRING, STRUCT, ConnectSchema
from .timebased.timestamps import TimestampExtractor
from .timebased.zones import JodaZone

FORMAT_PATH_KEY = "partition.field.format.path"
_ENCODING_ERROR = "Error encoding partition."
_FIELD_SEPARATOR = "/"  # StorageCommonConfig.DIRECTORY_DELIM_DEFAULT, not directory.delim
_ABSENT = object()


def format_path(raw: Any) -> bool:
    """``partition.field.format.path`` as the partitioner reads it: ``Boolean.parseBoolean`` of the string
    (``true`` in any case is true, anything else false); absent (None) is true."""
    if raw is None:
        return True
    if isinstance(raw, bool):
        return raw
    return str(raw).lower() == "true"


class FieldAndTimeBasedPartitioner(TimeBasedPartitioner):
    """``<field>=<value>/.../<time bucket>``: see the module docstring."""

    def __init__(
        self,
        field_names: list[str],
        formatted: bool,
        values: ValueReader,
        duration_ms: int,
        path_format: str,
        locale: str,
        zone: JodaZone,
        extractor: TimestampExtractor,
        delim: str,
    ):
        super().__init__(duration_ms, path_format, locale, zone, extractor, delim)
        self.field_names = list(field_names)
        self.formatted = formatted
        self._values = values

    def encode_partition(self, record: SinkRecord, now_ms: int) -> str:
        for_timestamp = super().encode_partition(record, now_ms)
        return f"{self.encode_fields(record)}{self.delim}{for_timestamp}"

    def encode_fields(self, record: SinkRecord) -> str:
        """PartitionFieldExtractor.extract."""
        data = record.value
        schema = self._values.schema(data)
        value = self._values.value(data)
        if schema is not None:
            container = schema.type == MAP or (schema.type == STRUCT and not schema.is_union)
        else:
            container = isinstance(value, dict)
        if value is None or not container:
            raise PartitionError(_ENCODING_ERROR)  # not a Struct or Map
        built = ""
        for name in self.field_names:
            if built:
                built += _FIELD_SEPARATOR
            text = _string_field(value, schema, name)
            built += f"{name}={text}" if self.formatted else text
        return built


def _string_field(value: Any, schema: ConnectSchema | None, path: str) -> str:
    """``(String) DataUtils.getNestedFieldValue(value, path)``."""
    for segment in path.split("."):
        value, schema = _step(value, schema, segment)
        if value is _ABSENT or value is None:
            raise PartitionDataError(f"The field '{path}' does not exist.")
    if schema is not None:
        if schema.type != STRING:
            kind = "union" if schema.is_union else schema.type
            raise PartitionDataError(
                f"Partition field '{path}' is of Connect type {kind}, not STRING: FieldAndTimeBasedPartitioner casts "
                "it to String (the reference fails with a ClassCastException)"
            )
        return str(value)
    if not isinstance(value, str):
        raise PartitionDataError(
            f"Partition field '{path}' is a JSON {_json_kind(value)}, not a string: FieldAndTimeBasedPartitioner "
            "casts it to String (the reference fails with a ClassCastException)"
        )
    return value


def _step(value: Any, schema: ConnectSchema | None, segment: str) -> tuple[Any, ConnectSchema | None]:
    """``DataUtils.getField``: a struct's field, a map's entry; _ABSENT where it throws (no such field, not
    a struct or a map). A union is a struct of its branches in Connect but its datum is the branch value,
    so a path does not go into one (as for FieldPartitioner)."""
    if schema is None:  # schemaless: JSON objects
        if isinstance(value, dict):
            return value.get(segment, _ABSENT), None
        return _ABSENT, None
    if schema.type == STRUCT and not schema.is_union and isinstance(value, dict):
        field = schema.field(segment)
        if field is None:
            return _ABSENT, None
        return value.get(segment), field
    if schema.type == MAP:
        if isinstance(value, dict):  # string keys: an Avro map
            return value.get(segment), schema.values
        if isinstance(value, list):  # other keys: Avro's key/value entries; only a string key can match
            for entry in value:
                if isinstance(entry, dict) and entry.get("key") == segment:
                    return entry.get("value"), schema.values
            return _ABSENT, None
    return _ABSENT, None


__all__ = ["FIELD_AND_TIME_PARTITIONER", "FORMAT_PATH_KEY", "FieldAndTimeBasedPartitioner", "format_path"]


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__
