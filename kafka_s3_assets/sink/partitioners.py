"""Partitioners: which encoded partition (directory) a record's object goes to (spec §5)."""

from __future__ import annotations

from typing import Protocol

from .config_keys import DEFAULT_PARTITIONER
from .records import SinkRecord


class Partitioner(Protocol):
    def encode_partition(self, record: SinkRecord, now_ms: int) -> str: ...


class DefaultPartitioner:
    """``partition=<kafka partition>``: every record of a topic-partition goes to one directory."""

    def encode_partition(self, record: SinkRecord, now_ms: int) -> str:
        return f"partition={record.partition}"


def build_partitioner(config) -> Partitioner:
    name = config["partitioner.class"]
    if name == DEFAULT_PARTITIONER:
        return DefaultPartitioner()
    raise ValueError(f"partitioner.class {name} is not supported yet")
