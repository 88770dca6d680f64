"""Avro fast path vs decode-and-encode, per record, in the sink core (no servers).

Prints figures side by side with the limits measured on these machines (docs/environment.md):
copying an undecoded datum into a container block ~0.16 us; decode ~8 us + encode ~7 us. Also the
re-encoding from bytes used when AvroData's file schema reorders a union (here a ``["string","null"]``
field, written ``["null","string"]``), against decoding and encoding those records.

    .venv/bin/python bench/avro_fast_path.py [records]
"""

from __future__ import annotations

import io
import json
import struct
import sys
import time

import fastavro

from kafka_s3_assets.sink.converters import AvroConverter, AvroDecoder, RegisteredSchema
from kafka_s3_assets.sink.formats.avro_container import AvroContainerEncoder
from kafka_s3_assets.sink.formats.avro_transcode import datum_copier
from kafka_s3_assets.sink.records import KafkaRecord

SCHEMA = {
    "type": "record",
    "name": "event",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "user", "type": "string"},
        {"name": "amount", "type": "double"},
        {"name": "country", "type": "string"},
        {"name": "ts", "type": "long"},
    ],
}


# The same record with a nullable field whose null is not first: the file schema puts null first.
REORDERED = {
    **SCHEMA,
    "fields": SCHEMA["fields"][:3] + [{"name": "country", "type": ["string", "null"]}] + SCHEMA["fields"][4:],
}


class Registry:
    def __init__(self, schema=SCHEMA):
        self.schema = schema

    def schema_by_id(self, schema_id):
        return RegisteredSchema(schema_id, json.dumps(self.schema))

    def version_in_subject(self, schema_id, subject):
        return 1


def main(n: int) -> None:
    parsed = fastavro.parse_schema(SCHEMA)
    payloads = []
    for i in range(n):
        buf = io.BytesIO()
        fastavro.schemaless_writer(
            buf,
            parsed,
            {"id": i, "user": f"user-{i % 1000}", "amount": i * 0.5, "country": "NL", "ts": 1700000000000 + i},
        )
        payloads.append(b"\x00" + struct.pack(">I", 1) + buf.getvalue())
    converter = AvroConverter(Registry(), is_key=False)
    values = [converter.to_connect("t", KafkaRecord("t", 0, i, None, None, p).value) for i, p in enumerate(payloads)]
    avg = sum(len(p) for p in payloads) / n

    sink = io.BytesIO()
    encoder = AvroContainerEncoder(json.dumps(SCHEMA), "null", b"0" * 16, sink.write)
    t = time.perf_counter()
    for v in values:
        encoder.append(v.avro_datum)
    encoder.close()
    fast = (time.perf_counter() - t) / n * 1e6

    decoder = AvroDecoder()
    sink = io.BytesIO()
    encoder = AvroContainerEncoder(json.dumps(SCHEMA), "null", b"2" * 16, sink.write)
    t = time.perf_counter()
    for v in values:
        decoder.decode(v)  # kafka_s3_assets.avro.validate.datums=true (the default)
        encoder.append(v.avro_datum)
    encoder.close()
    validated = (time.perf_counter() - t) / n * 1e6

    sink = io.BytesIO()
    encoder = AvroContainerEncoder(json.dumps(SCHEMA), "null", b"1" * 16, sink.write)
    t = time.perf_counter()
    for v in values:
        out = io.BytesIO()
        fastavro.schemaless_writer(out, parsed, decoder.decode(v))
        encoder.append(out.getvalue())
    encoder.close()
    slow = (time.perf_counter() - t) / n * 1e6

    t = time.perf_counter()
    for p in payloads:
        converter.to_connect("t", p)
    convert = (time.perf_counter() - t) / n * 1e6

    reordered_parsed = fastavro.parse_schema(REORDERED)
    reordered = AvroConverter(Registry(REORDERED), is_key=False)
    reordered_values = []
    for i in range(n):
        buf = io.BytesIO()
        fastavro.schemaless_writer(
            buf,
            reordered_parsed,
            {
                "id": i,
                "user": f"user-{i % 1000}",
                "amount": i * 0.5,
                "country": None if i % 2 else "NL",
                "ts": 1700000000000 + i,
            },
        )
        reordered_values.append(reordered.to_connect("t", b"\x00" + struct.pack(">I", 2) + buf.getvalue()))
    file_schema = json.loads(reordered_values[0].schema.header_schema_json)
    copier = datum_copier(REORDERED, file_schema)
    assert copier is not None
    sink = io.BytesIO()
    encoder = AvroContainerEncoder(json.dumps(file_schema), "null", b"3" * 16, sink.write)
    t = time.perf_counter()
    for v in reordered_values:
        encoder.append(copier(v.avro_datum))
    encoder.close()
    transcoded = (time.perf_counter() - t) / n * 1e6

    parsed_file = fastavro.parse_schema(file_schema)
    sink = io.BytesIO()
    encoder = AvroContainerEncoder(json.dumps(file_schema), "null", b"4" * 16, sink.write)
    t = time.perf_counter()
    for v in reordered_values:
        out = io.BytesIO()
        fastavro.schemaless_writer(out, parsed_file, decoder.decode(v))
        encoder.append(out.getvalue())
    encoder.close()
    reencoded = (time.perf_counter() - t) / n * 1e6

    print(f"records: {n}, average datum {avg:.0f} bytes")
    print(f"{'path':<34}{'us/record':>10}{'limit, docs/environment.md':>26}")
    print(f"{'fast path: copy datum bytes':<34}{fast:>10.2f}{'~0.16 copy':>26}")
    print(f"{'fast path, datum validated':<34}{validated:>10.2f}{'~8 decode (upper bound)':>26}")
    print(f"{'decode + encode':<34}{slow:>10.2f}{'~15 (8 decode + 7 encode)':>26}")
    print(f"{'converter: split wire header':<34}{convert:>10.2f}{'(no limit measured)':>26}")
    print(f"{'union reordered: re-encode bytes':<34}{transcoded:>10.2f}{'(no limit measured)':>26}")
    print(f"{'union reordered: decode + encode':<34}{reencoded:>10.2f}{'~15 (8 decode + 7 encode)':>26}")
    print(f"speed-up of the fast path: {slow / fast:.0f}x")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200_000)
