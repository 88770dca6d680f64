"""The TopicPartitionWriter: the reference's rotation state machine for one Kafka topic-partition
(spec §3.2, §3.3).

Records arrive in offset order. Each goes to the open object of its encoded partition; objects are
committed together when a rotation fires. ``flush.size`` counts records across all open objects of
the topic-partition and the record that reaches it is included; the record that triggers a schema or
null-schema rotation is not, it starts the next object. Any rotation commits every open object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .errors import RecordError
from .formats.base import Format, RecordWriter
from .naming import ObjectNaming
from .partitioners import Partitioner
from .records import SinkRecord
from .storage import ObjectStore

NULL_VALUE_FAIL = "Null valued records are not writeable with current behavior.on.null.values 'settings."


@dataclass(frozen=True)
class CommittedObject:
    key: str
    encoded_partition: str
    start_offset: int
    end_offset: int
    record_count: int
    size: int
    sha256: str
    schema_ids: tuple[int, ...]

    def to_json(self) -> dict:
        return {
            "key": self.key,
            "encoded_partition": self.encoded_partition,
            "start_offset": self.start_offset,
            "end_offset": self.end_offset,
            "record_count": self.record_count,
            "size": self.size,
            "sha256": self.sha256,
            "schema_ids": list(self.schema_ids),
        }


@dataclass(frozen=True)
class CommittedBatch:
    """The objects one rotation committed; ``last_offset`` is the last record written before it."""

    objects: tuple[CommittedObject, ...]
    last_offset: int

    @property
    def record_count(self) -> int:
        return sum(o.record_count for o in self.objects)


@dataclass
class _OpenObject:
    key: str
    writer: RecordWriter
    start_offset: int
    end_offset: int = -1
    record_count: int = 0
    schema_ids: list[int] = field(default_factory=list)


_UNSET = object()


class TopicPartitionWriter:
    def __init__(self, topic: str, partition: int, *, flush_size: int, partitioner: Partitioner, fmt: Format,
                 naming: ObjectNaming, store: ObjectStore, clock: Callable[[], int],
                 behavior_on_null_values: str = "fail"):
        self.topic = topic
        self.partition = partition
        self._flush_size = max(flush_size, 1)
        self._partitioner = partitioner
        self._format = fmt
        self._naming = naming
        self._store = store
        self._clock = clock
        self._null_behavior = behavior_on_null_values.lower()
        self._open: dict[str, _OpenObject] = {}  # insertion-ordered: committed in the order opened
        self._current_schemas: dict[str, object] = {}
        self._record_count = 0
        self._last_written_offset: int | None = None

    @property
    def open_record_count(self) -> int:
        return self._record_count

    @property
    def first_open_offset(self) -> int | None:
        return min((o.start_offset for o in self._open.values()), default=None)

    def write(self, record: SinkRecord) -> list[CommittedBatch]:
        """Write one record; return the batches this record's processing committed (usually none)."""
        if record.value is None and self._null_behavior == "fail":
            raise RecordError(record.topic, record.partition, record.offset, NULL_VALUE_FAIL)
        now = self._clock()
        try:
            encoded = self._partitioner.encode_partition(record, now)
        except Exception as exc:  # a partitioner failure is a record failure
            raise RecordError(record.topic, record.partition, record.offset, f"Error encoding partition: {exc}") from exc
        committed = []
        if self._needs_rotation_before(encoded, record):
            committed.append(self._commit_all())
        self._append(encoded, record)
        if self._record_count >= self._flush_size:
            committed.append(self._commit_all())
        return committed

    def _needs_rotation_before(self, encoded: str, record: SinkRecord) -> bool:
        """Schema and null-schema switches rotate; the triggering record starts the next object."""
        schema = _schema_identity(record)
        current = self._current_schemas.get(encoded, _UNSET)
        if current is _UNSET or self._record_count == 0:
            return False
        if (current is None) != (schema is None):
            return True  # switch between schema-based and schema-less data
        return current != schema  # schema.compatibility=NONE: any difference rotates

    def _append(self, encoded: str, record: SinkRecord) -> None:
        self._current_schemas.setdefault(encoded, _schema_identity(record))
        obj = self._open.get(encoded)
        if obj is None:
            key = self._naming.object_key(self.topic, encoded, self.partition, record.offset, self._format.extension)
            obj = _OpenObject(key, self._format.new_writer(self._store.create(key)), record.offset)
            self._open[encoded] = obj
        try:
            obj.writer.write(record)
        except Exception as exc:
            raise RecordError(record.topic, record.partition, record.offset,
                              f"Failed to write record to {obj.key}: {exc}") from exc
        obj.end_offset = record.offset
        obj.record_count += 1
        schema_id = getattr(record.value.schema if record.value else None, "schema_id", None)
        if schema_id is not None and schema_id not in obj.schema_ids:
            obj.schema_ids.append(schema_id)
        self._record_count += 1
        self._last_written_offset = record.offset

    def _commit_all(self) -> CommittedBatch:
        objects = []
        for encoded, obj in self._open.items():
            [stored] = obj.writer.commit()
            objects.append(CommittedObject(stored.key, encoded, obj.start_offset, obj.end_offset, obj.record_count,
                                           stored.size, stored.sha256, tuple(obj.schema_ids)))
        self._open.clear()
        self._current_schemas.clear()
        self._record_count = 0
        assert self._last_written_offset is not None
        return CommittedBatch(tuple(objects), self._last_written_offset)

    def abort(self) -> None:
        """Discard every open object (the reference's close(): uncommitted data is re-read next time)."""
        for obj in self._open.values():
            try:
                obj.writer.abort()
            except Exception:  # best effort: an unfinished multipart upload is invisible anyway
                pass
        self._open.clear()
        self._current_schemas.clear()
        self._record_count = 0


def _schema_identity(record: SinkRecord):
    if record.value is None or record.value.schema is None:
        return None
    return (record.value.schema.schema_id, record.value.schema.version)
