"""The memory budget across a task's open files (sink/memory.py, docs/memory.md): buffers spilled to local
disk give back exactly the bytes they were given, so objects are the same bytes whatever the budget; the
count never passes the limit by more than the append that passed it; the spill file is emptied after a
commit and closed by an abort, on success and on failure; the default budget and the key."""

from __future__ import annotations

import os
import random
import zlib

import pytest

from kafka_s3_assets.clients.s3 import MultipartOutput, S3ObjectStore, S3Settings
from kafka_s3_assets.clients.s3_retry import Retrier, RetryPolicy
from kafka_s3_assets.export import task_memory
from kafka_s3_assets.export.conversion import RecordConverter
from kafka_s3_assets.export.errant_records import ErrantRecords
from kafka_s3_assets.export.record_loop import RecordLoop
from kafka_s3_assets.export.tolerance import ErrorPolicy
from kafka_s3_assets.sink.columnar import parquet_batch
from kafka_s3_assets.sink.columnar.parquet_batch import ParquetBatchFormat
from kafka_s3_assets.sink.config import validate_connector_config
from kafka_s3_assets.sink.config_keys import MEMORY_BUDGET_KEY
from kafka_s3_assets.sink.converters import AvroConverter
from kafka_s3_assets.sink.errors import ConfigError
from kafka_s3_assets.sink.formats import compression
from kafka_s3_assets.sink.formats.avro_container import AvroContainerEncoder
from kafka_s3_assets.sink.formats.parquet_format import ParquetFormat, ParquetRecordWriter, RowGroupPolicy
from kafka_s3_assets.sink.memory import MemoryBudget, SpillBuffer
from kafka_s3_assets.sink.records import KafkaRecord, RecordBatch, SinkRecord
from kafka_s3_assets.sink.storage import InMemoryObjectStore

from .s3_stub import StubClient, client_error
from .sink_helpers import FakeRegistry, base_config, framed, writer_for
from .test_batch_path import EVENT, NOW, event

pytestmark = [pytest.mark.unit]

PARTITIONER = "io.confluent.connect.storage.partitioner."
AVRO = "io.confluent.connect.s3.format.avro.AvroFormat"
PARQUET = "io.confluent.connect.s3.format.parquet.ParquetFormat"
JSON = "io.confluent.connect.s3.format.json.JsonFormat"
PART = 2048  # small parts: objects of a few KiB are multipart uploads


class WatchedBudget(MemoryBudget):
    """Records the count after every charge (once its spills are done) and the largest single charge."""

    def __init__(self, limit, directory=None):
        super().__init__(limit, directory)
        self.after_charges: list[int] = []
        self.largest_charge = 0

    def charge(self, n: int) -> None:
        super().charge(n)
        self.after_charges.append(self.held)
        self.largest_charge = max(self.largest_charge, n)

    def assert_held(self) -> None:
        """Never more than the limit once an append's spills are done; at most the limit and that append
        in between."""
        assert self.limit is not None
        assert max(self.after_charges, default=0) <= self.limit
        assert self.peak <= self.limit + self.largest_charge


# ---- SpillBuffer and MultipartOutput --------------------------------------------------------------------


@pytest.mark.parametrize("limit", [1, 100, 5000])
def test_a_spill_buffer_gives_back_the_bytes_it_was_given_in_order(limit, tmp_path):
    rng = random.Random(limit)
    budget = WatchedBudget(limit, str(tmp_path))
    buffers = [SpillBuffer(budget) for _ in range(5)]
    written = [bytearray() for _ in buffers]
    taken = [bytearray() for _ in buffers]
    for _ in range(400):
        i = rng.randrange(len(buffers))
        if rng.random() < 0.7:
            data = rng.randbytes(rng.randrange(0, 300))
            buffers[i].append(data)
            written[i] += data
        else:
            taken[i] += buffers[i].take(rng.randrange(0, 500))
        assert sum(b.in_memory() for b in buffers) == budget.held
    for i, buffer in enumerate(buffers):
        taken[i] += buffer.take_all()
        assert taken[i] == written[i] and buffer.size == 0
    budget.assert_held()
    assert budget.file.written > 0 and budget.held == 0
    assert budget.file.live == 0 and budget.file.size == 0  # emptied once nothing spilled is held
    assert os.listdir(tmp_path) == []  # the spill file has no name: nothing on disk, even while it is open
    budget.close()
    assert not budget.file.is_open


def test_clearing_spilled_buffers_frees_the_spill_file():
    budget = MemoryBudget(10)
    buffers = [SpillBuffer(budget) for _ in range(3)]
    for buffer in buffers:
        buffer.append(b"x" * 40)
    assert budget.file.size > 0
    for buffer in buffers:
        buffer.clear()
    assert budget.held == 0 and budget.file.size == 0 and buffer.take_all() == b""


def multipart(client: StubClient, key: str, memory: MemoryBudget | None) -> MultipartOutput:
    output = MultipartOutput(client, "b", key, part_size=PART, retrier=Retrier(RetryPolicy(1, 1), sleep=lambda s: 0))
    if memory is not None:
        output.use_memory(memory)
    return output


@pytest.mark.parametrize("limit", [None, 1, 3000])
def test_multipart_objects_are_the_same_bytes_and_parts_whatever_was_spilled(limit):
    rng = random.Random(7)
    chunks = {
        key: [rng.randbytes(rng.randrange(1, 900)) for _ in range(rng.randrange(1, 20))]
        for key in ("a", "b", "c", "small")
    }
    chunks["small"] = [b"tiny"]
    client, memory = StubClient(), (None if limit is None else WatchedBudget(limit))
    outputs = {key: multipart(client, key, memory) for key in chunks}
    for i in range(max(map(len, chunks.values()))):  # interleaved, as open files are written
        for key, pieces in chunks.items():
            if i < len(pieces):
                outputs[key].write(pieces[i])
    stored = {key: output.commit() for key, output in outputs.items()}
    assert client.objects == {key: b"".join(pieces) for key, pieces in chunks.items()}
    # The same parts: S3's ETags (MD5 of the parts' MD5s, then -<parts>) and the sizes of each part.
    expected = StubClient()
    for key, pieces in chunks.items():
        output = multipart(expected, key, None)
        output.write(b"".join(pieces))
        output.commit()
    assert client.etags == expected.etags
    assert all(stored[key].size == len(client.objects[key]) for key in chunks)
    if memory is not None:
        memory.assert_held()
        assert memory.held == 0 and memory.file.size == 0
        assert memory.file.written > 0 or limit > sum(len(b"".join(p)) for p in chunks.values())


def test_a_failed_upload_or_an_abort_leaves_nothing_held_or_spilled():
    memory = MemoryBudget(1)
    client = StubClient(upload_part=[client_error(500, "InternalError", operation="UploadPart")])
    failing, aborted = multipart(client, "failing", memory), multipart(client, "aborted", memory)
    aborted.write(b"x" * 1000)
    failing.write(b"y" * 1000)
    assert memory.file.size > 0
    with pytest.raises(Exception, match="UploadPart 1"):
        failing.write(b"y" * PART)
    aborted.abort()
    assert memory.held == 0 and memory.file.live == 0 and memory.file.size == 0


# ---- formats -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("codec", ["null", "deflate", "snappy"])
def test_avro_blocks_are_the_same_bytes_whatever_was_spilled(codec):
    rng = random.Random(3)
    datums = [rng.randbytes(rng.randrange(1, 3000)) for _ in range(300)]
    bodies = {}
    for limit in (None, 1, 20_000):
        memory = None if limit is None else WatchedBudget(limit)
        out = bytearray()
        encoders = [AvroContainerEncoder('"bytes"', codec, bytes(16), out.extend, memory=memory) for _ in range(2)]
        for i in range(0, len(datums), 7):
            encoders[0].append_many(datums[i : i + 5])
            encoders[1].append(datums[i + 5]) if i + 5 < len(datums) else None
        for encoder in encoders:
            encoder.close()
        bodies[limit] = bytes(out)
        if memory is not None:
            memory.assert_held()
            assert memory.held == 0 and memory.file.size == 0 and memory.file.written > 0
    assert bodies[1] == bodies[None] == bodies[20_000]


def parquet_object(records: list[bytes], memory, runs: list[int], policy: RowGroupPolicy) -> bytes:
    """``records`` written to one Parquet object, cut into runs each going one way: record by record
    (``write``), or by the columnar batch path (slices, or datums for short runs)."""
    converter = AvroConverter(FakeRegistry({1: EVENT}), is_key=False)
    schema = converter.to_connect("t", b"\0\0\0\0\1" + records[0]).schema
    fmt = ParquetFormat("snappy")
    store = InMemoryObjectStore()
    writer = ParquetRecordWriter(store.create("k.parquet"), fmt.codec, policy, memory=memory)
    batch = ParquetBatchFormat(fmt)
    assert batch.takes(schema)
    start = 0
    for n, run in enumerate(runs):
        datums, offsets = records[start : start + run], list(range(start, start + run))
        if n % 3 == 2:
            for offset, datum in zip(offsets, datums):
                raw = KafkaRecord("t", 0, offset, NOW, None, b"\0\0\0\0\1" + datum)
                writer.write(SinkRecord(raw, converter.to_connect("t", raw.value)))
        else:
            rows = batch.rows(schema, datums, offsets, lambda: True)
            rows.append(writer, range(run))
        start += run
    writer.commit()
    return store.objects["k.parquet"]


@pytest.mark.parametrize("small_run", [0, 64, 10**9], ids=["slices", "both", "datums"])
def test_parquet_objects_are_the_same_bytes_whatever_was_spilled(small_run, monkeypatch):
    monkeypatch.setattr(parquet_batch, "SMALL_RUN", small_run)
    records = [framed(EVENT, event(i), 1)[5:] for i in range(700)]
    runs = [1, 3, 100, 2, 70, 1, 200, 5, 90, 1, 127, 100]
    assert sum(runs) == len(records)
    policy = RowGroupPolicy(row_group_bytes=40_000, row_group_rows=250, chunk_rows=37, chunk_record_bytes=3000)
    bodies = {}
    for limit in (None, 1, 30_000):
        memory = None if limit is None else WatchedBudget(limit)
        bodies[limit] = parquet_object(records, memory, runs, policy)
        if memory is not None:
            memory.assert_held()
            assert memory.held == 0 and memory.file.size == 0 and memory.file.written > 0
    assert bodies[1] == bodies[None] == bodies[30_000]
    monkeypatch.setattr(parquet_batch, "SMALL_RUN", 64)
    assert parquet_object(records, None, runs, policy) == bodies[None]  # however the runs were kept


@pytest.mark.parametrize("kind,level", [("gzip", -1), ("gzip", 0), ("gzip", 9), ("zstd", -1), ("zstd", 19)])
@pytest.mark.parametrize("total", [5000, 3 * compression.DEFERRED_BYTES])
def test_a_compressor_created_late_writes_the_stream_of_one_created_at_once(kind, level, total):
    rng = random.Random(total)
    chunks, size = [], 0
    while size < total:
        chunk = rng.choice([b'{"i":%d}\n' % size, rng.randbytes(rng.randrange(1, 5000))])
        chunks.append(chunk)
        size += len(chunk)
    eager = zlib.compressobj(level, zlib.DEFLATED, 31) if kind == "gzip" else None
    if eager is None:
        from backports import zstd

        eager = zstd.ZstdCompressor(level=zstd.COMPRESSION_LEVEL_DEFAULT if level < 1 else level)
    expected = b"".join([eager.compress(chunk) for chunk in chunks] + [eager.flush()])
    for memory in (None, WatchedBudget(1)):
        late = compression.StreamCompressor(kind, level, memory)
        out = [late.compress(chunk) for chunk in chunks]
        assert (b"".join(out) == b"") == (total < compression.DEFERRED_BYTES)  # nothing out before it starts
        assert b"".join(out) + late.flush() == expected
        if memory is not None:
            memory.assert_held()
            assert memory.held == 0 and memory.file.size == 0 and memory.file.written > 0


# ---- the writer: the same objects whatever the budget ------------------------------------------------------


def records(count: int) -> list[KafkaRecord]:
    return [
        KafkaRecord(
            "s3_topic", 0, i, NOW + i, f"key{i % 3}".encode(), framed(EVENT, event(i), 1), (("h", str(i).encode()),)
        )
        for i in range(count)
    ]


def export_like(config: dict, memory: MemoryBudget | None, batch_path: bool = True, count: int = 300):
    """The records through the export's record loop into a stub S3 with small parts; the writer aborted at the
    end, as an export ends. What was stored and committed."""
    cfg = validate_connector_config(config)
    client = StubClient()
    store = S3ObjectStore(client, S3Settings(bucket="bucket", region="us-east-1", part_size=PART))
    errant = ErrantRecords(ErrorPolicy.from_config(cfg), None)
    writer, _ = writer_for(config, store=store, reporter=errant, memory=memory)
    errant.follow(writer.inner)
    committed = []
    loop = RecordLoop(
        RecordConverter(cfg, FakeRegistry({1: EVENT})),
        errant,
        writer.inner,
        NOW,
        lambda *batches: committed.extend(batches),
        batch_path=batch_path,
    )
    rows = records(count)
    for i in range(0, len(rows), 64):
        loop.write(RecordBatch.of(rows[i : i + 64]))
    writer.inner.abort()
    return {"objects": client.objects, "etags": client.etags, "committed": committed}


def config(**overrides) -> dict:
    return {
        **base_config(),
        "flush.size": "250",
        "value.converter": "io.confluent.connect.avro.AvroConverter",
        "value.converter.schema.registry.url": "http://registry",
        **overrides,
    }


FANNED_OUT = {"partitioner.class": PARTITIONER + "FieldPartitioner", "partition.field.name": "seq"}  # a file a record
FEW_FILES = {"partitioner.class": PARTITIONER + "FieldPartitioner", "partition.field.name": "kind"}
SIDECARS = {
    "store.kafka.keys": "true",
    "store.kafka.headers": "true",
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
}
CASES = {
    "avro fanned out": config(**FANNED_OUT),
    "avro few files, deflate": config(**FEW_FILES, **{"avro.codec": "deflate"}),
    "avro one file": config(**{"flush.size": "120"}),
    "parquet fanned out": config(**FANNED_OUT, **{"format.class": PARQUET}),
    "parquet few files": config(**FEW_FILES, **{"format.class": PARQUET}),
    "parquet one file, zstd": config(**{"format.class": PARQUET, "parquet.codec": "zstd"}),
    "json fanned out": config(**FANNED_OUT, **{"format.class": JSON}),
    "json gzip few files": config(**FEW_FILES, **{"format.class": JSON, "s3.compression.type": "gzip"}),
    "json zstd fanned out": config(**FANNED_OUT, **{"format.class": JSON, "s3.compression.type": "zstd"}),
    "bytearray gzip level 0": config(
        **{
            "format.class": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
            "s3.compression.type": "gzip",
            "s3.compression.level": "0",
            "flush.size": "120",
            "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        }
    ),
    "avro with keys and headers in parquet": config(
        **FEW_FILES, **SIDECARS, **{"keys.format.class": PARQUET, "headers.format.class": PARQUET}
    ),
    "parquet with keys and headers in avro": config(**FANNED_OUT, **SIDECARS, **{"format.class": PARQUET}),
    "max open files": config(**FANNED_OUT, **{"partitioner.max.open.files": "40"}),
    "parquet max open files": config(**FANNED_OUT, **{"format.class": PARQUET, "partitioner.max.open.files": "40"}),
}


@pytest.mark.parametrize("batch_path", [True, False], ids=["batch path", "record by record"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_tiny_budget_writes_the_same_objects(case, batch_path):
    unbounded = export_like(CASES[case], None, batch_path)
    assert unbounded["committed"] and unbounded["objects"]
    for limit in (1, 4096):
        memory = WatchedBudget(limit)
        bounded = export_like(CASES[case], memory, batch_path)
        assert bounded == unbounded
        memory.assert_held()
        assert memory.file.written > 0 or limit > 1  # a budget of one byte spills every append
        assert memory.held == 0 and not memory.file.is_open  # the abort at the end closed the spill file


def test_partitioner_max_open_files_rotates_as_without_a_budget():
    out = export_like(CASES["max open files"], WatchedBudget(1))
    # A commit before the record that would open a 41st file: 40 files of one record each per commit.
    assert [len(batch.objects) for batch in out["committed"]] == [40] * 7
    assert [batch.record_count for batch in out["committed"]] == [40] * 7


def test_the_spill_file_is_emptied_by_each_commit_and_closed_by_the_abort_after_a_failure():
    memory = MemoryBudget(1)
    client = StubClient(put_object=[None] * 30 + [client_error(500, "InternalError")] * 3)
    store = S3ObjectStore(
        client, S3Settings(bucket="bucket", region="us-east-1", part_size=PART, retry_backoff_ms=0, total_attempts=1)
    )
    writer, _ = writer_for(config(**FANNED_OUT, **{"flush.size": "50"}), store=store, memory=memory)
    converter = RecordConverter(validate_connector_config(config()), FakeRegistry({1: EVENT}))
    loop = RecordLoop(
        converter,
        ErrantRecords(ErrorPolicy.from_config(validate_connector_config(config())), None),
        writer.inner,
        NOW,
        lambda *b: None,
    )
    rows = records(100)
    loop.write(RecordBatch.of(rows[:30]))
    assert memory.file.size > 0
    with pytest.raises(Exception, match="PutObject"):
        loop.write(RecordBatch.of(rows[30:]))  # the commit at the 50th record meets the failing PutObject
    assert memory.file.is_open
    writer.inner.abort()  # what the export does on a failure
    assert memory.held == 0 and not memory.file.is_open


# ---- the key and the default budget -------------------------------------------------------------------------


def test_the_key_is_validated_naming_it():
    assert validate_connector_config(base_config())[MEMORY_BUDGET_KEY] == -1
    assert validate_connector_config({**base_config(), MEMORY_BUDGET_KEY: "1048576"})[MEMORY_BUDGET_KEY] == 1048576
    with pytest.raises(ConfigError) as info:
        validate_connector_config({**base_config(), MEMORY_BUDGET_KEY: "-2"})
    assert {p.key for p in info.value.problems} == {MEMORY_BUDGET_KEY}


def test_the_default_budget_is_a_quarter_of_a_task_slots_memory(monkeypatch):
    monkeypatch.setattr(task_memory, "physical_memory", lambda: 16 << 30)
    monkeypatch.setattr(task_memory, "available_cpus", lambda: 4)
    monkeypatch.setattr(task_memory, "cgroup_memory_limit", lambda: None)
    assert task_memory.default_budget({})[0] == 1 << 30  # 16 GiB / 4 CPUs / 4
    monkeypatch.setattr(task_memory, "cgroup_memory_limit", lambda: 8 << 30)  # a container's limit is less
    assert task_memory.default_budget({})[0] == 512 << 20
    # Spark's share of spark.executor.pyspark.memory per Python worker comes first.
    assert task_memory.default_budget({"PYSPARK_EXECUTOR_MEMORY_MB": "2048"})[0] == 512 << 20
    assert task_memory.default_budget({"PYSPARK_EXECUTOR_MEMORY_MB": "100"})[0] == 64 << 20  # at least 64 MiB


def test_the_budget_of_a_task(monkeypatch, tmp_path, caplog):
    monkeypatch.setattr(task_memory, "physical_memory", lambda: 8 << 30)
    monkeypatch.setattr(task_memory, "available_cpus", lambda: 2)
    monkeypatch.setattr(task_memory, "cgroup_memory_limit", lambda: None)
    caplog.set_level("INFO", logger=task_memory.__name__)

    def budget(value: str | None, environ: dict) -> MemoryBudget:
        extra = {} if value is None else {MEMORY_BUDGET_KEY: value}
        return task_memory.task_memory_budget(validate_connector_config({**base_config(), **extra}), "t", 0, environ)

    default = budget(None, {"SPARK_LOCAL_DIRS": f"{tmp_path},/elsewhere"})
    assert default.limit == 1 << 30 and default.file.directory == str(tmp_path)
    assert "t/0: the open files may hold 1.0 GiB in memory (default: 1/4 of 4.0 GiB" in caplog.text
    assert budget("0", {}).limit is None and budget("0", {}).file.directory is None
    assert budget("12345", {"SPARK_LOCAL_DIRS": "/does/not/exist"}).limit == 12345
