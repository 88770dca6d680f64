"""The rotation state machine of one topic-partition: the reference's ``TopicPartitionWriter.executeState``
reduced to its decisions, on plain values, for the writer's two ways in (``writer.TopicPartitionWriter``).

For each record, in offset order, it answers: does the record rotate the open files before it (commit
them all first)? Which file takes it (the open file of its encoded partition, or a new one)? Does a
commit follow it? It knows a record only by its encoded partition, its timestamp (the partitioner's
timestamp extractor; None without one), its arrival time (scheduled rotation) and its value schema
(compared by identity, judged under ``schema.compatibility`` by the writer's ``schema_rotates``). The
record-by-record path (``TopicPartitionWriter.write``) computes those from a ``SinkRecord`` and plans
that one record; the batch paths (``write_batch``: Avro, Parquet, schemaless JSON) have them as keys
(``batch_keys``) and plan the whole batch, in runs that end at each commit. Both go through ``plan``
and ``take``, so they rotate at the same records.

States (every encoded partition of the Kafka partition shares them, as the reference's writer does):

* EMPTY: no open file (``count == 0``), after a commit or an abort, and at the start. A record is
  always taken: it opens the file of its encoded partition. It sets the base timestamp (the first
  timestamp since the commit; kept only under ``rotate.interval.ms``, the one rule that reads it) and,
  under ``rotate.schedule.interval.ms``, the deadline: the first boundary after its arrival.
* OPEN: ``count`` records in the open files (``schemas``: encoded partition -> the schema of its file,
  in the order the files were opened). A record is checked against the rules, in the reference's order;
  the first that holds rotates:

  1. schema-less switch (``NULL_SCHEMA``): its partition's file holds records with a schema and it has
     none, or the other way round;
  2. ``rotate.interval.ms`` (``INTERVAL``), with a timestamp extractor only: its timestamp is at least
     the interval past the base timestamp;
  3. partition change (``PARTITION_CHANGE``), under ``rotate.interval.ms`` with
     ``rotate.file.on.partition.change``: its encoded partition differs from the last record's (not
     between a record and a tombstone when tombstones are written);
  4. ``rotate.schedule.interval.ms`` (``SCHEDULE``): it arrived at or after the deadline;
  5. ``schema.compatibility`` (``SCHEMA``): its schema differs from its partition's file's and the
     writer's ``schema_rotates`` says so (may raise ``SchemaCompatibilityError``: the writer names the
     record);
  6. ``partitioner.max.open.files`` (``MAX_OPEN``): it would open one file more than allowed.

  Rotation: every open file is committed (``reset``: EMPTY) and the triggering record is not in them;
  it is planned again, and taken, as the first record of the next files. Otherwise the record is taken
  into its partition's file (a new file takes the record's schema); when ``count`` reaches
  ``flush.size`` (``FLUSH_SIZE``) every open file is committed after it, the record included.
* A due schedule (``due``) commits a quiet partition's files once the deadline has passed, with no
  record; an abort (the run's end) discards them. Both reset to EMPTY. The last record's encoded
  partition stays across a reset, as in the reference (no rule reads it while EMPTY).

``plan`` decides and changes nothing: the record-by-record path takes a record (``take``) only once it
is written, so a record that fails leaves the state as it found it, or as the rotation it triggered
left it.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from .timebased.schedule import next_scheduled_rotation

# Why a run ends with a commit: the first is after its last record, the others before the next record.
FLUSH_SIZE = "flush.size"
NULL_SCHEMA = "schema-less switch"
INTERVAL = "rotate.interval.ms"
PARTITION_CHANGE = "partition change"
SCHEDULE = "rotate.schedule.interval.ms"
SCHEMA = "schema.compatibility"
MAX_OPEN = "partitioner.max.open.files"

_NO_FILE = object()


class Plan:
    """What ``Rotation.plan`` decided for records ``start`` to ``end`` (exclusive) of the planned ones: they go to
    the open files, ``files`` (encoded partition -> indexes of its records, ascending; files in the order
    first met, so a new file opens where its first record is); then every open file is committed when
    ``commit``, for ``reason``. ``end == start``: the record at ``start`` rotates the open files before
    it. The rest is the state ``take`` gives the machine."""

    __slots__ = ("start", "end", "commit", "reason", "files", "schema", "arrival", "count", "encoded", "base")

    def __init__(self, start: int, end: int, commit: bool, reason: str | None, files: Mapping[str, Sequence[int]],
                 schema: Any, arrival: int | None, count: int, encoded: str | None, base: int | None):
        self.start, self.end, self.commit, self.reason, self.files = start, end, commit, reason, files
        self.schema, self.arrival, self.count, self.encoded, self.base = schema, arrival, count, encoded, base


class Rotation:
    """The rotation state of one topic-partition's open files (see the module's docstring)."""

    def __init__(self, *, flush_size: int, rotate_interval_ms: int = -1, rotate_on_partition_change: bool = True,
                 rotate_schedule_interval_ms: int = -1, timezone: str = "", max_open_files: int = -1,
                 tombstone_partition: str | None = None,
                 schema_rotates: Callable[[Any, Any], bool] = lambda schema, current: True):
        """``rotate_interval_ms``: -1 when the partitioner has no timestamp extractor (the reference then
        ignores it); ``tombstone_partition``: None unless tombstones are written; ``schema_rotates(schema,
        current)``: whether a record of ``schema`` rotates a file of ``current`` (another object)."""
        self.flush_size = max(flush_size, 1)
        self._interval = rotate_interval_ms if rotate_interval_ms > 0 else 0
        self._on_partition_change = rotate_on_partition_change
        self._schedule = rotate_schedule_interval_ms if rotate_schedule_interval_ms > 0 else 0
        self._timezone = timezone
        self._max_open = max_open_files
        self._tombstone = tombstone_partition
        self._schema_rotates = schema_rotates
        self.count = 0                       # records in the open files
        self.schemas: dict[str, Any] = {}    # encoded partition of each open file -> its schema, as opened
        self.encoded: str | None = None      # the last record's encoded partition
        self.base: int | None = None         # the first timestamp since the commit (rotate.interval.ms)
        self.deadline: int | None = None     # the scheduled rotation of the open files

    def plan(self, encoded: str | Sequence[str], timestamps: Sequence[int | None] | None, schema: Any,
             start: int, stop: int, arrival: int | None = None) -> Plan:
        """The next run of records ``start`` to ``stop`` (exclusive): up to the first commit, else all.

        ``encoded``: each record's encoded partition, or one for all; ``timestamps``: each record's, or
        None without an extractor; ``schema``: their value schema (one object for all); ``arrival``:
        when they reached Kafka (one time for all: only the record path runs under a schedule)."""
        count, schemas, flush_size = self.count, self.schemas, self.flush_size
        single = encoded if isinstance(encoded, str) else None
        interval, limit = self._interval, self._max_open
        stale = {e: s for e, s in schemas.items() if s is not schema} if count else None
        due = count and self.deadline is not None and arrival is not None and arrival >= self.deadline
        if not (interval or stale or due or limit != -1):
            # Only flush.size can end the run: no rule to check record by record.
            end = min(stop, start + flush_size - count)
            files: Mapping[str, Sequence[int]]
            if single is not None:
                files = {single: range(start, end)}
            else:
                grouped: dict[str, list[int]] = {}
                for i in range(start, end):
                    e = encoded[i]
                    indexes = grouped.get(e)
                    if indexes is None:
                        grouped[e] = [i]
                    else:
                        indexes.append(i)
                files, single = grouped, encoded[end - 1]
            count += end - start
            full = count >= flush_size
            return Plan(start, end, full, FLUSH_SIZE if full else None, files, schema, arrival, count, single,
                        self.base)
        taken: dict[str, list[int]] = {}
        current, base = self.encoded, self.base
        on_change, tombstone = self._on_partition_change and interval, self._tombstone
        opened = len(schemas)
        for i in range(start, stop):
            e = single if single is not None else encoded[i]
            t = None if timestamps is None else timestamps[i]
            if count:
                file_schema = stale.get(e, _NO_FILE) if stale else _NO_FILE
                reason = None
                if file_schema is not _NO_FILE and (file_schema is None) != (schema is None):
                    reason = NULL_SCHEMA
                elif interval and base is not None and t is not None and t - base >= interval:
                    reason = INTERVAL
                elif (on_change and current is not None and e != current
                      and not (tombstone is not None and tombstone in (e, current))):
                    reason = PARTITION_CHANGE
                elif due:
                    reason = SCHEDULE
                elif file_schema is not _NO_FILE and self._schema_rotates(schema, file_schema):
                    reason = SCHEMA
                elif limit != -1 and opened >= limit and e not in schemas and e not in taken:
                    reason = MAX_OPEN
                if reason is not None:
                    return Plan(start, i, True, reason, taken, schema, arrival, count, current, base)
            indexes = taken.get(e)
            if indexes is None:
                taken[e] = [i]
                if e not in schemas:
                    opened += 1
            else:
                indexes.append(i)
            count += 1
            current = e
            if interval and base is None:
                base = t
            if count >= flush_size:
                return Plan(start, i + 1, True, FLUSH_SIZE, taken, schema, arrival, count, current, base)
        return Plan(start, stop, False, None, taken, schema, arrival, count, current, base)

    def take(self, plan: Plan) -> None:
        """The planned records are in the open files now (a new file has their schema)."""
        if plan.end == plan.start:
            return
        if not self.count and self._schedule:
            if plan.arrival is None:
                raise ValueError("a scheduled rotation needs the records' arrival time")
            self.deadline = next_scheduled_rotation(plan.arrival, self._schedule, self._timezone)
        self.count, self.encoded, self.base = plan.count, plan.encoded, plan.base
        schemas = self.schemas
        for encoded in plan.files:
            if encoded not in schemas:
                schemas[encoded] = plan.schema

    def due(self, now_ms: int) -> bool:
        """Whether the open files' scheduled rotation has passed (the reference's commitOnTimeIfNoData)."""
        return self.count > 0 and self.deadline is not None and now_ms >= self.deadline

    def reset(self) -> None:
        """Every open file was committed or discarded: EMPTY."""
        self.count = 0
        self.schemas.clear()
        self.base = None
        self.deadline = None
