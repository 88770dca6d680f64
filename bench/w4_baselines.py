"""The naive exporter of workload W4 (Protobuf values to Parquet), written only with public client
libraries (confluent-kafka, protobuf, pyarrow, boto3), as a competent user would write it in an
afternoon: one process consumes every partition, deserializes each record with confluent-kafka's
``ProtobufDeserializer`` (the generated ``Event`` class, as confluent-kafka's examples do), turns the
message into a row, groups the rows of a partition by the hour of their ``ts``, and turns each 100,000
rows of a group into one Parquet file (``pa.Table.from_pylist`` with the file's Arrow schema +
``pq.write_table(compression="snappy")``) PUT under the key Kafka Connect would use. Like Kafka Connect
it writes full objects only: the records after a group's last full object stay in Kafka.

The row: ``json_format.MessageToDict`` gives int64 as strings and the Timestamp as RFC 3339 text, which
a user writing typed Parquet would convert back field by field; the equivalent a user writes instead
reads the fields (``ts`` as ``Timestamp.ToMilliseconds()``, ``tags`` as a list). That is the faster of
the two (``row_of`` against ``MessageToDict`` plus the conversions), so the baseline is the harder one.

The raw drain is W1's (``w1_baselines.drain``): it does nothing with the records.
"""

from __future__ import annotations

import io
import time
from datetime import UTC, datetime

import boto3
import pyarrow as pa
import pyarrow.parquet as pq
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext
from w1_baselines import Measured, _batches, _consumer
from w4_data import w4_module

HOUR_MS = 3_600_000
# The columns a user declares for W4's Parquet files (W1's types: ts a UTC timestamp in milliseconds).
ARROW_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("user", pa.string()),
        ("seq", pa.int64()),
        ("amount", pa.float64()),
        ("ts", pa.timestamp("ms", tz="UTC")),
        ("kind", pa.string()),
        ("tags", pa.list_(pa.string())),
    ]
)


def object_key(topic: str, hour_ms: int, partition: int, start_offset: int) -> str:
    """Kafka Connect's key under W4's TimeBasedPartitioner path.format, topics.dir ``topics``."""
    hour = datetime.fromtimestamp(hour_ms / 1000, UTC)
    return (
        f"topics/{topic}/year={hour:%Y}/month={hour:%m}/day={hour:%d}/hour={hour:%H}/"
        f"{topic}+{partition}+{start_offset:010d}.snappy.parquet"
    )


def row_of(message) -> dict:
    """The Parquet row of one deserialized Event (an unset ``ts`` is null)."""
    return {
        "id": message.id,
        "user": message.user,
        "seq": message.seq,
        "amount": message.amount,
        "ts": message.ts.ToMilliseconds() if message.HasField("ts") else None,
        "kind": message.kind,
        "tags": list(message.tags),
    }


def naive_protobuf_parquet_export(
    bootstrap: str, topic: str, partitions: int, bucket: str, flush_size: int
) -> Measured:
    started = time.monotonic()
    deserializer = ProtobufDeserializer(w4_module().Event, {"use.deprecated.format": False})
    context = SerializationContext(topic, MessageField.VALUE)
    s3 = boto3.client("s3")
    groups: dict[tuple[int, int], tuple[int, list]] = {}  # (partition, hour) -> (first offset, rows)
    read = 0
    consumer = _consumer(bootstrap, topic, partitions)
    try:
        for batch in _batches(consumer, partitions):
            for message in batch:
                row = row_of(deserializer(message.value(), context))
                read += 1
                group = (message.partition(), row["ts"] - row["ts"] % HOUR_MS)
                first, rows = groups.setdefault(group, (message.offset(), []))
                rows.append(row)
                if len(rows) == flush_size:
                    body = io.BytesIO()
                    pq.write_table(pa.Table.from_pylist(rows, schema=ARROW_SCHEMA), body, compression="snappy")
                    s3.put_object(Bucket=bucket, Key=object_key(topic, group[1], group[0], first), Body=body.getvalue())
                    del groups[group]
    finally:
        consumer.close()
    return Measured(read, time.monotonic() - started)
