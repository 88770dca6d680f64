"""How the table is partitioned, from the connector's partitioner (docs/iceberg.md, "Partitioning").

pyiceberg's ``add_files`` derives each data file's partition value from the file's column statistics (the
Parquet footer's min and max of the source column, through the transform), not from the object's path. So
a partition transform is used only where every object is certain to hold one value of it, which follows
from how the partitioner cuts objects:

* ``TimeBasedPartitioner`` (and Hourly/Daily) with ``timestamp.extractor=RecordField`` on a timestamp
  column, in a zone at UTC offset 0: an object holds the records of one encoded path. When ``path.format``
  names the year, month and day (or the day of the year) and the hour of the day, and
  ``partition.duration.ms`` divides an hour, an object's records lie in one UTC hour: ``hour(field)``. When
  it names the date and the duration divides a day: ``day(field)``.
* ``FieldPartitioner``: an object's records share each field's value: ``identity(field)`` per top-level
  field (pyiceberg keeps no statistics of nested columns, so nested fields cannot be sources).
* Anything else is unpartitioned: the Default partitioner's Kafka partition, and the Record and Wallclock
  extractors' times, are not columns of the files; a zone with another offset, or a path coarser than its
  buckets (a month), would give an object several values.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import DayTransform, HourTransform, IdentityTransform, Transform
from pyiceberg.types import TimestampType, TimestamptzType

from ..sink.config import SinkConfig
from ..sink.partitioner_config import FIELD_PARTITIONER, TIME_BASED_PARTITIONERS, setting, time_based_settings
from ..sink.timebased.calendar_math import MILLIS_PER_DAY, MILLIS_PER_HOUR
from ..sink.timebased.joda import tokenize
from ..sink.timebased.timestamps import BUILTIN_EXTRACTORS, RECORD_FIELD
from ..sink.timebased.zones import zone_for_id

HOUR, DAY, IDENTITY = "hour", "day", "identity"
_TRANSFORMS: dict[str, Transform] = {HOUR: HourTransform(), DAY: DayTransform(), IDENTITY: IdentityTransform()}
FIRST_PARTITION_FIELD_ID = 1000  # Iceberg numbers partition fields from 1000
# IANA ids of zones that are UTC at every instant (a fixed zone at offset 0, "+00:00", is UTC too).
UTC_ZONE_IDS = frozenset(
    {
        "UTC",
        "Etc/UTC",
        "UCT",
        "Etc/UCT",
        "Universal",
        "Etc/Universal",
        "Zulu",
        "Etc/Zulu",
        "GMT",
        "Etc/GMT",
        "GMT0",
        "Etc/GMT0",
        "GMT+0",
        "Etc/GMT+0",
        "GMT-0",
        "Etc/GMT-0",
        "Greenwich",
        "Etc/Greenwich",
    }
)


@dataclass(frozen=True)
class Partitioning:
    """``transform`` over ``fields`` (column paths, dotted for nested), or none (``transform`` None) and why."""

    transform: str | None
    fields: tuple[str, ...] = ()
    reason: str = ""

    def describe(self) -> str:
        if self.transform is None:
            return f"unpartitioned ({self.reason})"
        return ", ".join(f"{self.transform}({f})" for f in self.fields)


def _pattern_letters(path_format: str) -> set[str]:
    return {token[0] for token in tokenize(path_format) if not token.startswith("'")}


def partitioning_of(config: SinkConfig) -> Partitioning:
    """What the partitioner allows, from the config alone; the schema is checked by ``partition_spec``."""
    partitioner = setting(config, "partitioner.class")
    if partitioner == FIELD_PARTITIONER:
        return Partitioning(IDENTITY, tuple(setting(config, "partition.field.name")))
    if partitioner not in TIME_BASED_PARTITIONERS:
        return Partitioning(None, reason="the Default partitioner's Kafka partition is not a column of the files")
    if BUILTIN_EXTRACTORS.get(setting(config, "timestamp.extractor")) != RECORD_FIELD:
        return Partitioning(None, reason="the Record and Wallclock extractors' times are not columns of the files")
    settings = time_based_settings(config)
    zone = zone_for_id(settings.timezone)
    if not (settings.timezone in UTC_ZONE_IDS or (zone.is_fixed and zone.offset(0) == 0)):
        return Partitioning(
            None, reason=f"timezone {settings.timezone} is not UTC: an object's hours or days are not UTC ones"
        )
    field = setting(config, "timestamp.field")
    letters = _pattern_letters(settings.path_format)
    has_date = bool(letters & {"Y", "y", "x", "u"}) and ({"M", "d"} <= letters or "D" in letters)
    if has_date and letters & {"H", "k"} and MILLIS_PER_HOUR % settings.duration_ms == 0:
        return Partitioning(HOUR, (field,))
    if has_date and MILLIS_PER_DAY % settings.duration_ms == 0:
        return Partitioning(DAY, (field,))
    return Partitioning(
        None,
        reason=f"path.format {settings.path_format!r} with partition.duration.ms="
        f"{settings.duration_ms} does not keep each object within one UTC hour or day",
    )


def partition_spec(partitioning: Partitioning, schema: Schema) -> tuple[PartitionSpec, Partitioning]:
    """The spec for a new table of ``schema`` (with its field ids), and the partitioning it has.

    Only top-level columns are sources: pyiceberg records no min and max for nested columns, so a nested
    source's partition value would be null in every file, and a filter on it would prune files that
    match. A nested field of FieldPartitioner is left out (the others stay); a missing source column, or
    (for hour and day) one that is not a timestamp, leaves the table unpartitioned."""
    if partitioning.transform is None:
        return PartitionSpec(), partitioning
    top_level = tuple(name for name in partitioning.fields if "." not in name)
    if not top_level:
        return PartitionSpec(), Partitioning(
            None,
            reason=f"{', '.join(partitioning.fields)}: nested fields have no statistics to take partition values from",
        )
    fields = []
    for i, name in enumerate(top_level):
        try:
            source = schema.find_field(name)
        except ValueError:
            return PartitionSpec(), Partitioning(
                None, reason=f"the partition field {name} is not a column of the files"
            )
        if partitioning.transform in (HOUR, DAY) and not isinstance(
            source.field_type, (TimestampType, TimestamptzType)
        ):
            return PartitionSpec(), Partitioning(
                None, reason=f"the timestamp field {name} is a column of type {source.field_type}, not a timestamp"
            )
        fields.append(
            PartitionField(
                source_id=source.field_id,
                field_id=FIRST_PARTITION_FIELD_ID + i,
                transform=_TRANSFORMS[partitioning.transform],
                name=name if partitioning.transform == IDENTITY else f"{name}_{partitioning.transform}",
            )
        )
    left_out = [name for name in partitioning.fields if name not in top_level]
    reason = f"nested {', '.join(left_out)} left out: no statistics to take partition values from" if left_out else ""
    return PartitionSpec(*fields), Partitioning(partitioning.transform, top_level, reason)
