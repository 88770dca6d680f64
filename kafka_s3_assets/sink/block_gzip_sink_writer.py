"""The writer of a topic-partition under the Block-GZIP S3 sink's config (spredfast/kafka-connect-s3).

That sink writes one object per topic-partition per Connect flush: every record since the last flush, in
one Block-GZIP object named by the upload date and the first offset. Here an export run is that flush:
all the records of the run's range go to one object, committed at the end of the run (``end_of_run``),
with its ``.index.json``. The upload date is the UTC date of the attempt's one wall-clock time, which the
export records in its lease, so a rerun after a crash names the object exactly as the dead attempt did.

It offers the export loop what ``TopicPartitionWriter`` offers (``write``, ``flush_if_due``,
``end_of_run``, ``abort``, ``unsettled_from``, ``committed_before_failure``); there is no rotation.
"""

from __future__ import annotations

from datetime import UTC, datetime

from .block_gzip_sink_config import BlockGzipSinkSettings
from .formats.block_gzip_format import EXTENSION, index_key_for
from .formats.block_gzip_sink_records import encode_record
from .formats.java_block_gzip import JavaBlockGzipWriter
from .naming import ObjectNaming
from .records import SinkRecord
from .storage import ObjectStore
from .writer import Commit, CommittedObject


def upload_date(now_ms: int) -> str:
    """That sink's date directory: ``yyyy-MM-dd`` of the upload time, UTC."""
    return datetime.fromtimestamp(now_ms / 1000, tz=UTC).strftime("%Y-%m-%d")


class BlockGzipSinkWriter:
    def __init__(
        self, topic: str, partition: int, settings: BlockGzipSinkSettings, naming: ObjectNaming, store: ObjectStore
    ):
        self.topic = topic
        self.partition = partition
        self._settings = settings
        self._naming = naming
        self._store = store
        self._file: JavaBlockGzipWriter | None = None
        self._key = ""
        self._date = ""
        self._offset_ranges: list[list[int]] = []
        self._record_count = 0
        self.committed_before_failure: list[Commit] = []

    @property
    def open_record_count(self) -> int:
        return self._record_count

    @property
    def first_open_offset(self) -> int | None:
        return self._offset_ranges[0][0] if self._offset_ranges else None

    @property
    def unsettled_from(self) -> int | None:
        return self.first_open_offset

    def write(self, record: SinkRecord, now_ms: int) -> list[Commit]:
        payload = encode_record(self._settings, record.raw)
        if self._file is None:
            self._date = upload_date(now_ms)
            base = self._naming.object_key(self.topic, self._date, self.partition, record.offset, "")
            self._key = base + EXTENSION
            self._file = JavaBlockGzipWriter(
                self._store.create(self._key), index_key_for(self._key), self._settings.block_size, record.offset
            )
        self._file.write(payload, record.offset)
        if self._offset_ranges and self._offset_ranges[-1][1] == record.offset - 1:
            self._offset_ranges[-1][1] = record.offset
        else:
            self._offset_ranges.append([record.offset, record.offset])
        self._record_count += 1
        return []

    def flush_if_due(self, now_ms: int) -> list[Commit]:
        return []  # no scheduled rotation: the object is committed at the end of the run

    def end_of_run(self, now_ms: int) -> list[Commit]:
        """Commit the run's one object and its index (that sink's flush)."""
        if self._file is None:
            return []
        data, index = self._file.commit()
        first, last = self._offset_ranges[0][0], self._offset_ranges[-1][1]
        ranges = tuple((s, e) for s, e in self._offset_ranges)
        objects = tuple(
            CommittedObject(
                stored.key, self._date, first, last, self._record_count, stored.size, stored.sha256, (), view, ranges
            )
            for stored, view in ((data, "value"), (index, "index"))
        )
        commit = Commit(objects, last, self._record_count)
        self._reset()
        return [commit]

    def abort(self) -> None:
        if self._file is not None:
            try:
                self._file.abort()
            except Exception:  # best effort: an unfinished multipart upload is invisible anyway
                pass
        self._reset()

    def _reset(self) -> None:
        self._file = None
        self._offset_ranges = []
        self._record_count = 0
