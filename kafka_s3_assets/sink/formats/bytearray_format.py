"""Kafka Connect's ByteArrayFormat: each record's raw bytes followed by a separator
(``format.bytearray.separator``, default the line separator).

The separator follows **every** record, the last one included, so an object is a plain concatenation
of ``bytes + separator`` pairs. Values that contain the separator are indistinguishable from record
boundaries; that is the reference's behaviour, not ours to fix. With ``s3.compression.type=gzip`` the
whole object is one gzip stream (``zstd``, our extension: one zstd frame).
"""

from __future__ import annotations

from ..converters import AvroDecoder
from ..errors import RecordDataError
from ..records import ConnectData, SinkRecord
from ..schema.compatibility import schema_of
from ..schema.connect_schema import BYTES, DECIMAL
from ..storage import ObjectOutput, StoredObject
from ..views import VALUE_VIEW, RecordView
from .compression import StreamCompressor
from .compression import extension as compression_extension

DEFAULT_SEPARATOR = "\n"  # System.lineSeparator() on Linux, used when format.bytearray.separator is unset
DEFAULT_EXTENSION = ".bin"

# The Java classes Kafka's JsonConverter (schemaless) produces, named in the reference's error message.
_JAVA_CLASS = {
    dict: "java.util.HashMap",
    list: "java.util.ArrayList",
    str: "java.lang.String",
    bool: "java.lang.Boolean",
    int: "java.lang.Long",
    float: "java.lang.Double",
}


class ByteArrayDataError(RecordDataError):
    """Data that is not bytes: the reference's DataException from ByteArrayConverter.fromConnectData."""


def raw_bytes(data: ConnectData | None, decoder: AvroDecoder, view_name: str) -> bytes:
    """The bytes ByteArrayConverter.fromConnectData would return, or its DataException.

    The schema checked is the Connect schema the worker's converter gave the data: it must be BYTES,
    and a Decimal (BYTES too) holds a BigDecimal, not bytes."""
    if data is None:
        raise ByteArrayDataError(f"ByteArrayFormat cannot write a null {view_name}")
    schema = None if data.schema is None else schema_of(data.schema)
    if schema is not None and schema.type != BYTES:
        raise ByteArrayDataError(
            f"Invalid schema type for ByteArrayConverter: {schema.type} "
            f"(ByteArrayFormat writes {view_name} with a bytes schema or none)"
        )
    try:
        value = decoder.decode(data)
    except Exception as exc:  # a corrupt datum: this record's fault
        raise RecordDataError(str(exc) or type(exc).__name__) from exc
    if value is None:
        raise ByteArrayDataError(f"ByteArrayFormat cannot write a null {view_name}")
    if schema is not None and schema.logical == DECIMAL:
        java_class = "java.math.BigDecimal"
    elif isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    else:
        java_class = _JAVA_CLASS.get(type(value), type(value).__name__)
    raise ByteArrayDataError(
        f"ByteArrayConverter is not compatible with objects of type class {java_class} "
        f"(ByteArrayFormat writes {view_name} that are bytes)"
    )


class ByteArrayRecordWriter:
    def __init__(
        self,
        output: ObjectOutput,
        separator: bytes,
        compression: str,
        level: int,
        decoder: AvroDecoder,
        view: RecordView = VALUE_VIEW,
        memory=None,
    ):
        self._output = output
        self._separator = separator
        self._decoder = decoder
        self._view = view
        self._compressor = StreamCompressor(compression, level, memory)

    def write(self, record: SinkRecord) -> None:
        payload = raw_bytes(self._view.data(record), self._decoder, self._view.name)
        self._emit(payload + self._separator)

    def _emit(self, data: bytes) -> None:
        data = self._compressor.compress(data)
        if data:
            self._output.write(data)

    def commit(self) -> list[StoredObject]:
        tail = self._compressor.flush()
        if tail:
            self._output.write(tail)
        return [self._output.commit()]

    def abort(self) -> None:
        self._compressor.discard()
        self._output.abort()


class ByteArrayFormat:
    """``separator`` is ``format.bytearray.separator`` as given (None: a newline); it is not unescaped,
    so ``\\n`` typed in a properties file arrives as a real newline only if the file format made it one."""

    def __init__(
        self,
        extension: str = DEFAULT_EXTENSION,
        separator: str | None = None,
        compression: str = "none",
        level: int = -1,
    ):
        self.separator = (DEFAULT_SEPARATOR if separator is None else separator).encode("utf-8")
        self.compression = compression
        self.level = level
        self.extension = extension + compression_extension(compression)
        self._decoder = AvroDecoder()

    def new_writer(self, output: ObjectOutput, view: RecordView = VALUE_VIEW, memory=None) -> ByteArrayRecordWriter:
        """(``memory``: charged with the input waiting for the object's compressor, ``compression``; the
        output charges its own bytes.)"""
        return ByteArrayRecordWriter(output, self.separator, self.compression, self.level, self._decoder, view, memory)
