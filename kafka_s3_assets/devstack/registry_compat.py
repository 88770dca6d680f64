"""Compatibility levels and the pluggable compatibility checker of the local registry.

The store decides *which* earlier versions a new schema is compared with (the latest one,
or all of them for the ``*_TRANSITIVE`` levels) and in which direction; a
:class:`CompatibilityChecker` answers whether one pair of schemas is compatible in one
direction. Keeping the two apart lets a real Avro checker replace the permissive stand-in
below without touching the store's bookkeeping.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from kafka_s3_assets.devstack.registry_schemas import ParsedSchema

COMPATIBILITY_LEVELS = (
    "NONE",
    "BACKWARD",
    "BACKWARD_TRANSITIVE",
    "FORWARD",
    "FORWARD_TRANSITIVE",
    "FULL",
    "FULL_TRANSITIVE",
)
DEFAULT_COMPATIBILITY = "BACKWARD"

# Directions a single pairwise check can be asked for.
BACKWARD = "BACKWARD"  # the new schema can read data written with the old one
FORWARD = "FORWARD"  # the old schema can read data written with the new one


@dataclass(frozen=True)
class CompatibilityRule:
    """What a compatibility level means: which directions, against which versions."""

    directions: tuple[str, ...]
    transitive: bool

    @classmethod
    def for_level(cls, level: str) -> CompatibilityRule:
        base, _, suffix = level.partition("_")
        transitive = suffix == "TRANSITIVE"
        directions = {
            "NONE": (),
            "BACKWARD": (BACKWARD,),
            "FORWARD": (FORWARD,),
            "FULL": (BACKWARD, FORWARD),
        }[base]
        return cls(directions=directions, transitive=transitive)


class CompatibilityChecker(Protocol):
    """Compares two schemas of the same type in one direction."""

    def incompatibilities(
        self, new: ParsedSchema, existing: ParsedSchema, direction: str
    ) -> list[str]:
        """Human-readable reasons why ``new`` is not compatible with ``existing``.

        An empty list means compatible. ``direction`` is :data:`BACKWARD` or :data:`FORWARD`.
        """
        ...


class AcceptEverythingChecker:
    """Stand-in that reports every pair as compatible.

    Real Avro schema-resolution checks are a separate piece of work; until they land, every
    level behaves like NONE for registration and for the compatibility endpoint.
    """

    def incompatibilities(
        self, new: ParsedSchema, existing: ParsedSchema, direction: str
    ) -> list[str]:
        return []
