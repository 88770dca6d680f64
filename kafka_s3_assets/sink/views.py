"""Record views: which part of a record a file holds (value, key or headers).

Kafka Connect writes up to three files per object: the values (``x.avro``), the keys (``x.keys.avro``)
and the headers (``x.headers.json``), each in its own format. A view picks that part of the record
and checks it can be written, before anything is written, so the files never misalign.
"""

from __future__ import annotations

import json
from typing import Protocol

from .records import ConnectData, SinkRecord

# Kafka Connect renders a header value with Values.convertToString; for the SimpleHeaderConverter's
# usual inputs (text, numbers, booleans) that is the UTF-8 text itself.
HEADER_ITEM_AVRO = {
    "type": "record",
    "name": "Header",
    "namespace": "io.confluent.connect.s3",
    "fields": [{"name": "key", "type": "string"}, {"name": "value", "type": ["null", "string"]}],
}
HEADERS_AVRO = {"type": "array", "items": HEADER_ITEM_AVRO}


class ViewError(ValueError):
    """The record lacks the part this view writes (the reference's DataException)."""


def sink_record_text(record: SinkRecord) -> str:
    # The reference prints SinkRecord{kafkaOffset=N, topic='t', kafkaPartition=P} in these messages.
    return f"SinkRecord{{kafkaOffset={record.offset}, topic='{record.topic}', kafkaPartition={record.partition}}} "


class RecordView(Protocol):
    name: str  # "value" | "keys" | "headers": also the manifest's label for the file
    infix: str  # inserted before the format's extension

    def data(self, record: SinkRecord) -> ConnectData | None: ...


class ValueView:
    name = "value"
    infix = ""

    def data(self, record: SinkRecord) -> ConnectData | None:
        return record.value


class KeyView:
    name = "keys"
    infix = ".keys"

    def data(self, record: SinkRecord) -> ConnectData:
        if record.key is None:
            raise ViewError("Key cannot be null for " + sink_record_text(record))
        return record.key


class HeaderSchema:
    """Marks header data; formats render it as an array of {key, value} (JSON/Parquet: enveloped)."""

    avro_schema = HEADERS_AVRO
    header_schema_json = json.dumps(HEADERS_AVRO, separators=(",", ":"))


HEADER_SCHEMA = HeaderSchema()


class HeaderView:
    name = "headers"
    infix = ".headers"

    def data(self, record: SinkRecord) -> ConnectData:
        headers = record.headers
        if not headers:
            raise ViewError("Headers cannot be null for " + sink_record_text(record))
        items = [{"key": k, "value": None if v is None else v.decode("utf-8", errors="replace")} for k, v in headers]
        return ConnectData(schema=HEADER_SCHEMA, decoded=items, is_decoded=True)


VALUE_VIEW, KEY_VIEW, HEADER_VIEW = ValueView(), KeyView(), HeaderView()
