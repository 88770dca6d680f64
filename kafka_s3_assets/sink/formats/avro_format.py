"""Kafka Connect's AvroFormat: one Avro container file per object, written with the schema of the
object's first record (later records are projected or start a new object): the Avro schema the sink's
AvroData builds from its Connect schema.

Records of that first record's registry schema are copied as datum bytes when the file schema encodes
them alike (decided once per schema, :mod:`avro_transcode`), re-encoded from the bytes otherwise;
other records (projected, envelope, Connect-equal schemas with another id) are encoded from their
decoded value."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence

import fastavro

from ..converters import AvroDecoder, strip_logical_types
from ..errors import RecordDataError
from ..memory import MemoryBudget
from ..records import AvroSchemaRef, PrimitiveSchema, SinkRecord
from ..storage import ObjectOutput, StoredObject
from ..views import VALUE_VIEW, HeaderSchema, RecordView
from .avro_container import AvroContainerEncoder, sync_marker_for
from .avro_transcode import datum_copier

_COPY = object()  # the datum bytes go into the file as they are


def _copier_for(copiers: dict, schema: AvroSchemaRef):
    """_COPY, or the function re-encoding datums of ``schema`` for its file schema (decided once per id)."""
    copier = copiers.get(schema.schema_id)
    if copier is None:
        copier = datum_copier(schema.writer_schema, json.loads(schema.header_schema_json)) or _COPY
        copiers[schema.schema_id] = copier
    return copier


class AvroRecordWriter:
    def __init__(
        self,
        output: ObjectOutput,
        codec: str,
        view: RecordView = VALUE_VIEW,
        decoder: AvroDecoder | None = None,
        validate_datums: bool = True,
        copiers: dict | None = None,
        memory: MemoryBudget | None = None,
    ):
        self._output = output
        self._memory = memory
        self._copiers = {} if copiers is None else copiers  # schema id -> _COPY or a re-encoding function
        self._validate = validate_datums
        self._codec = codec
        self._view = view
        self._decoder = decoder or AvroDecoder()
        self._encoder: AvroContainerEncoder | None = None
        self._file_schema: AvroSchemaRef | PrimitiveSchema | HeaderSchema | None = None  # the first record's
        self._parsed_file_schema: str | list | dict | None = None

    def write(self, record: SinkRecord) -> None:
        datum = self._datum(self._view.data(record))
        self._opened_encoder().append(datum)

    def write_datums(self, schema: AvroSchemaRef, datums: Sequence[bytes]) -> None:
        """``write`` of records of ``schema`` whose datums are copied as they are (the batch record path
        checked ``AvroFormat.copies_as_is`` and validated them). A failed block write raises
        ``BlockWriteError`` naming the datum whose append wrote the block."""
        if self._file_schema is None:
            self._file_schema = schema
        self._opened_encoder().append_many(datums)

    def _opened_encoder(self) -> AvroContainerEncoder:
        # Opened lazily on the first record, whose schema becomes the file's schema.
        if self._encoder is None:
            assert self._file_schema is not None  # set from the first record, before its datum is written
            self._encoder = AvroContainerEncoder(
                self._file_schema.header_schema_json,
                self._codec,
                sync_marker_for(self._output.key),
                self._output.write,
                memory=self._memory,
            )
        return self._encoder

    def _datum(self, data) -> bytes:
        """The record's datum in the file's schema; fails (RecordDataError) before anything is kept."""
        if data is None or data.schema is None:
            raise RecordDataError(
                f"AvroFormat needs {self._view.name} with a schema (e.g. AvroConverter, "
                f"StringConverter); this record's {self._view.name} has none"
            )
        if self._file_schema is None:
            self._file_schema = data.schema
        try:
            if (
                data.avro_datum is not None
                and isinstance(data.schema, AvroSchemaRef)
                and isinstance(self._file_schema, AvroSchemaRef)
                and data.schema.schema_id == self._file_schema.schema_id
            ):
                copier = self._copier(data.schema)
                if copier is not _COPY:
                    return copier(data.avro_datum)  # reads the whole datum: validates it too
                if self._validate:
                    # Parse (without re-encoding) so a truncated or corrupt datum fails here, naming its
                    # record, instead of producing an unreadable file.
                    self._decoder.decode(data)
                return data.avro_datum  # the fast path: no re-encoding
            return self._encode(data)
        except Exception as exc:  # a datum or value that does not fit the schema: this record's fault
            raise RecordDataError(str(exc) or type(exc).__name__) from exc

    def _copier(self, schema: AvroSchemaRef):
        return _copier_for(self._copiers, schema)

    def _encode(self, data) -> bytes:
        if self._parsed_file_schema is None:
            assert self._file_schema is not None  # set by _datum before it encodes
            # Values are decoded with logical types left underlying, so they are encoded the same way.
            self._parsed_file_schema = fastavro.parse_schema(
                strip_logical_types(json.loads(self._file_schema.header_schema_json))
            )
        parsed_file_schema = self._parsed_file_schema
        buffer = io.BytesIO()
        try:
            fastavro.schemaless_writer(buffer, parsed_file_schema, self._decoder.decode(data))
        except Exception:
            # A value whose shape the file schema changed (allow.optional.map.keys makes key/value records a
            # map): its datum is re-encoded from its own writer schema instead, as the file's own records are.
            if not (isinstance(data.schema, AvroSchemaRef) and data.avro_datum is not None):
                raise
            assert self._file_schema is not None  # set by _datum before it encodes
            copier = datum_copier(data.schema.writer_schema, json.loads(self._file_schema.header_schema_json))
            return data.avro_datum if copier is None else copier(data.avro_datum)
        return buffer.getvalue()

    def commit(self) -> list[StoredObject]:
        if self._encoder is not None:
            self._encoder.close()
        return [self._output.commit()]

    def abort(self) -> None:
        if self._encoder is not None:
            self._encoder.discard()
        self._output.abort()


class AvroFormat:
    extension = ".avro"  # the codec does not change the extension

    def __init__(self, codec: str = "null", validate_datums: bool = True):
        self.codec = codec
        self.validate_datums = validate_datums
        self._decoder = AvroDecoder()
        self._copiers: dict = {}  # per registry schema id, shared by the writers of this format

    def copies_as_is(self, schema: AvroSchemaRef) -> bool:
        """Whether datums of ``schema`` go into a file of that schema as they are (no re-encoding)."""
        return _copier_for(self._copiers, schema) is _COPY

    def new_writer(
        self, output: ObjectOutput, view: RecordView = VALUE_VIEW, memory: MemoryBudget | None = None
    ) -> AvroRecordWriter:
        return AvroRecordWriter(output, self.codec, view, self._decoder, self.validate_datums, self._copiers, memory)
