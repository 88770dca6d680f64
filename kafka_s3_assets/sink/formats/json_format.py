"""Kafka Connect's JsonFormat: newline-delimited JSON, one value per line, optionally one gzip stream
per object. Not a JSON array, whatever old docs said (issue #330)."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from ..converters import AvroDecoder
from ..errors import RecordDataError
from ..records import AvroSchemaRef, SinkRecord
from ..storage import ObjectOutput, StoredObject
from ..views import VALUE_VIEW, HeaderSchema, RecordView
from .compression import StreamCompressor
from .compression import extension as compression_extension
from .jackson_writer import write_json
from .json_decimals import mark_decimals
from .json_maps import connect_json_maps

LINE_SEPARATOR = b"\n"  # System.lineSeparator() on Linux


def to_json_compatible(value: Any) -> Any:
    """Bytes become base64 strings, as Jackson and Kafka's JsonConverter write them (for showing values)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dict):
        return {str(k): to_json_compatible(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json_compatible(v) for v in value]
    return value


def encode_json_value(value: Any) -> bytes:
    """A value as Kafka Connect's JsonFormat writes it: Jackson's compact output (``jackson_writer``)."""
    return write_json(value)


def record_line(record: SinkRecord, view: RecordView, decoder: AvroDecoder, numeric_decimals: bool) -> bytes:
    """The record's line (its ``view``: value, key or header envelope); fails (RecordDataError) before
    anything is written."""
    try:
        data = view.data(record)
        value = None if data is None else decoder.decode(data)
        if data is not None and isinstance(data.schema, HeaderSchema):
            value = {"headers": value}  # the reference's header envelope
        schema = None if data is None else data.schema
        if numeric_decimals and isinstance(schema, AvroSchemaRef):
            value = mark_decimals(value, schema.writer_schema)
        if isinstance(schema, AvroSchemaRef):
            value = connect_json_maps(value, schema.connect_schema)
        return write_json(value) + LINE_SEPARATOR
    except RecordDataError:
        raise
    except Exception as exc:  # a datum that does not decode, a value JSON cannot hold: this record's fault
        raise RecordDataError(str(exc) or type(exc).__name__) from exc


class JsonRecordWriter:
    def __init__(
        self,
        output: ObjectOutput,
        compression: str,
        level: int,
        decoder: AvroDecoder,
        view: RecordView = VALUE_VIEW,
        numeric_decimals: bool = False,
        memory=None,
    ):
        self._output = output
        self._decoder = decoder
        self._view = view
        self._compressor = StreamCompressor(compression, level, memory)
        self._numeric_decimals = numeric_decimals

    def write(self, record: SinkRecord) -> None:
        self._emit(self._line(record))

    def _line(self, record: SinkRecord) -> bytes:
        return record_line(record, self._view, self._decoder, self._numeric_decimals)

    def write_lines(self, text: bytes, bounds: Sequence[int]) -> None:
        """Appends the lines ``text[bounds[k]:bounds[k + 1]]`` (each a record's line, separator included),
        as ``write`` of those records would: the object's bytes are the same, but a compressor whose
        stream does not depend on how its input is cut takes the whole run in one call."""
        if self._compressor.cut_independent:
            self._emit(text[bounds[0] : bounds[-1]])
        else:
            for k in range(len(bounds) - 1):
                self._emit(text[bounds[k] : bounds[k + 1]])

    def _emit(self, data: bytes) -> None:
        data = self._compressor.compress(data)
        if data:
            self._output.write(data)

    def commit(self) -> list[StoredObject]:
        self._output.write(self._compressor.flush())
        return [self._output.commit()]

    def abort(self) -> None:
        self._compressor.discard()
        self._output.abort()


class JsonFormat:
    def __init__(self, compression: str = "none", level: int = -1, decimal_format: str = "BASE64"):
        self.compression = compression
        self.level = level
        self.numeric_decimals = decimal_format.upper() == "NUMERIC"
        self.extension = ".json" + compression_extension(compression)
        self._decoder = AvroDecoder()

    def new_writer(self, output: ObjectOutput, view: RecordView = VALUE_VIEW, memory=None) -> JsonRecordWriter:
        """(``memory``: charged with the input waiting for the object's compressor, ``compression``; the
        output charges its own bytes.)"""
        return JsonRecordWriter(
            output, self.compression, self.level, self._decoder, view, self.numeric_decimals, memory
        )

    def line(self, record: SinkRecord, view: RecordView = VALUE_VIEW) -> bytes:
        """The record's line as this format's objects hold it (before compression)."""
        return record_line(record, view, self._decoder, self.numeric_decimals)
