"""Kafka Connect's AvroFormat: one Avro container file per object, written with the schema of the
object's first record (spec §6.1)."""

from __future__ import annotations

import io
import json

import fastavro

from ..converters import AvroDecoder
from ..records import SinkRecord
from ..storage import ObjectOutput, StoredObject
from .avro_container import AvroContainerEncoder, sync_marker_for


class AvroRecordWriter:
    def __init__(self, output: ObjectOutput, codec: str):
        self._output = output
        self._codec = codec
        self._encoder: AvroContainerEncoder | None = None
        self._schema_id: int | None = None
        self._parsed_header_schema = None
        self._decoder: AvroDecoder | None = None

    def write(self, record: SinkRecord) -> None:
        value = record.value
        if value is None or value.schema is None:
            raise ValueError("AvroFormat needs values with an Avro schema (value.converter=AvroConverter); "
                             "this record's value has no schema")
        if self._encoder is None:
            # Opened lazily on the first record, whose schema becomes the file's schema.
            self._schema_id = value.schema.schema_id
            self._encoder = AvroContainerEncoder(value.schema.header_schema_json, self._codec,
                                                 sync_marker_for(self._output.key), self._output.write)
        if value.avro_datum is not None and value.schema.schema_id == self._schema_id:
            self._encoder.append(value.avro_datum)  # the fast path: no decode, no encode
        else:
            self._encoder.append(self._encode(value))

    def _encode(self, value) -> bytes:
        if self._parsed_header_schema is None:
            self._parsed_header_schema = fastavro.parse_schema(json.loads(value.schema.header_schema_json))
            self._decoder = AvroDecoder()
        buffer = io.BytesIO()
        fastavro.schemaless_writer(buffer, self._parsed_header_schema, self._decoder.decode(value))
        return buffer.getvalue()

    def commit(self) -> StoredObject:
        if self._encoder is not None:
            self._encoder.close()
        return self._output.commit()

    def abort(self) -> None:
        self._output.abort()


class AvroFormat:
    extension = ".avro"  # the codec does not change the extension

    def __init__(self, codec: str = "null"):
        self.codec = codec

    def new_writer(self, output: ObjectOutput) -> AvroRecordWriter:
        return AvroRecordWriter(output, self.codec)
