"""How far behind a topic-partition's export is, and whether that is within the connector's limits.

Read from a ``PartitionPlan`` (S3 manifests and one watermark probe, nothing consumed): the lag is
the number of offsets between where the next export resumes and the broker's high watermark; the age
is how old, by its Kafka timestamp, the first record waiting there is. The limits are ours:
``kafka_s3_assets.lag.max.records`` and ``kafka_s3_assets.lag.max.age.ms`` (0: no limit; both 0: no
lag check at all).
"""

from __future__ import annotations

from dataclasses import dataclass

from .plan import PartitionPlan

MAX_RECORDS_KEY = "kafka_s3_assets.lag.max.records"
MAX_AGE_KEY = "kafka_s3_assets.lag.max.age.ms"


@dataclass(frozen=True)
class LagLimits:
    max_records: int = 0  # 0: no limit
    max_age_ms: int = 0  # 0: no limit

    @property
    def enabled(self) -> bool:
        return self.max_records > 0 or self.max_age_ms > 0

    @classmethod
    def from_config(cls, config) -> LagLimits:
        return cls(config[MAX_RECORDS_KEY], config[MAX_AGE_KEY])


@dataclass(frozen=True)
class PartitionLag:
    topic: str
    partition: int
    resume_offset: int  # where the next export starts reading
    high_watermark: int
    lag: int  # offsets waiting to be exported
    oldest_age_ms: int | None  # age of the first waiting record; 0 when none waits; None when unknown

    @classmethod
    def of(cls, plan: PartitionPlan, now_ms: int) -> PartitionLag:
        resume = max(plan.next_offset if plan.next_offset is not None else plan.low_watermark, plan.low_watermark)
        if plan.pending == 0:
            age = 0
        elif plan.oldest_waiting_ms is None:
            age = None
        else:
            age = max(0, now_ms - plan.oldest_waiting_ms)  # a producer's clock may run ahead of ours
        return cls(plan.topic, plan.partition, resume, plan.high_watermark, plan.pending, age)


@dataclass(frozen=True)
class LagVerdict:
    passed: bool
    description: str


def judge(lag: PartitionLag, limits: LagLimits) -> LagVerdict:
    """Fails when the lag or the oldest waiting record's age passes its limit; an unknown age passes
    (the records limit, if any, still applies)."""
    problems = []
    if limits.max_records > 0 and lag.lag > limits.max_records:
        problems.append(f"{lag.lag} records waiting, more than {MAX_RECORDS_KEY}={limits.max_records}")
    if limits.max_age_ms > 0 and lag.oldest_age_ms is not None and lag.oldest_age_ms > limits.max_age_ms:
        problems.append(
            f"the oldest record waiting (offset {lag.resume_offset}) is {lag.oldest_age_ms} ms old, "
            f"more than {MAX_AGE_KEY}={limits.max_age_ms}"
        )
    age = "unknown" if lag.oldest_age_ms is None else f"{lag.oldest_age_ms} ms"
    if problems:
        return LagVerdict(False, f"{lag.topic}/{lag.partition}: " + "; ".join(problems))
    return LagVerdict(
        True, f"{lag.topic}/{lag.partition}: {lag.lag} records waiting, oldest {age} old: within the limits"
    )
