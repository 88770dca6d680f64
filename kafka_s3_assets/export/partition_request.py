"""What a Spark task is handed (``PartitionExportRequest``) and hands back (``PartitionExportResult``) for
one topic-partition export. The result is the one shape a partition's export has from the task to the
user: the driver adds its plan, check and table to it (``topic_export.ExportOutcome``), Dagster's events
and the command line's ``--json`` are written from that."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .settings import ExportSettings


@dataclass(frozen=True)
class PartitionExportRequest:
    settings: ExportSettings
    topic: str
    partition: int
    end_offset: int | None = None  # exclusive bound planned by the driver; None reads to end-of-partition
    run_id: str | None = None


@dataclass
class PartitionExportResult:
    topic: str
    partition: int
    status: str = "up_to_date"  # exported | up_to_date | failed
    start_offset: int | None = None  # where this run resumed
    next_offset: int | None = None  # first offset not yet exported after this run
    records_read: int = 0
    records_exported: int = 0
    records_tolerated: int = 0  # skipped under errors.tolerance=all, recorded in the manifests
    records_dropped: int = 0  # dropped by the connector's transforms (Filter, ...), counted in the manifests
    dead_letters: int = 0  # of those, produced to the dead letter queue (acknowledged)
    bytes_written: int = 0
    orphans_removed: int = 0  # objects a dead earlier attempt left without a manifest
    replayed: bool = False  # repeated a dead attempt's end offset and wall-clock time
    object_keys: list[str] = field(default_factory=list)
    manifest_keys: list[str] = field(default_factory=list)
    high_watermark: int | None = None
    # True when the read reached the end and held back no record past next_offset: the offsets up to the high
    # watermark hold none (transaction markers), so nothing waits however far the watermark is.
    read_to_end_without_waiting_records: bool = False
    lost_ranges: list[list[int]] = field(default_factory=list)  # [first, last] deleted by retention unexported
    # Registry id of the value schema of the last value object committed (None: none, or no registry
    # schema): what the Dagster surface shows as the asset's columns.
    value_schema_id: int | None = None
    # Without such an id, the Avro schema (AvroData's, as in the files) of the last value written when it has
    # one: a schema the connector's transforms made, or a JSON envelope's. The columns shown then.
    value_schema_json: str | None = None
    duration_s: float = 0.0
    error: str | None = None
    error_type: str | None = None
    error_detail: str | None = None

    @property
    def partition_key(self) -> str:
        return f"{self.topic}/{self.partition}"

    @property
    def lag(self) -> int | None:
        if self.high_watermark is None or self.next_offset is None:
            return None
        if self.read_to_end_without_waiting_records:
            return 0
        return max(0, self.high_watermark - self.next_offset)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> PartitionExportResult:
        return cls(**d)
