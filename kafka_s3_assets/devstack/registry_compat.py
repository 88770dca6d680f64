"""Compatibility levels and the pluggable compatibility checker of the local registry.

The store decides *which* earlier versions a new schema is compared with (the latest one,
or all of them for the ``*_TRANSITIVE`` levels) and in which direction; a
:class:`CompatibilityChecker` answers whether one pair of schemas is compatible in one
direction. Keeping the two apart lets each schema type bring its own rules: AVRO schemas are
checked with Avro's reader/writer resolution (:mod:`registry_avro_compat`).

JSON and PROTOBUF schemas have no checker here: every change is accepted, as a registry with
those subjects at NONE would accept it, and the compatibility endpoint answers
``is_compatible: true`` for them. This is a decision, not a gap to fill piecemeal: Confluent's
rules for these types are long lists of special cases (for Protobuf: scalar kinds that share a
wire type, fields moved into or out of a oneof, renamed packages, ...; for JSON Schema: open and
closed content models, combined schemas, numeric ranges, ...). A partial copy would refuse some
changes Confluent accepts and accept others it refuses, which is worse for a test registry than
a rule that is plainly stated. Nothing in this project depends on the registry refusing a
Protobuf or JSON Schema change: the sink's ``schema.compatibility`` compares Connect schemas,
not registry answers.
"""

from __future__ import annotations

from collections.abc import Mapping
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

    def incompatibilities(self, new: ParsedSchema, existing: ParsedSchema, direction: str) -> list[str]:
        """Human-readable reasons why ``new`` is not compatible with ``existing``.

        An empty list means compatible. ``direction`` is :data:`BACKWARD` or :data:`FORWARD`.
        """
        ...


class AcceptEverythingChecker:
    """Reports every pair as compatible: the rule for schema types without a real checker, and
    for tests of the store's bookkeeping."""

    def incompatibilities(self, new: ParsedSchema, existing: ParsedSchema, direction: str) -> list[str]:
        return []


class PerSchemaTypeChecker:
    """Sends each pair to the checker of its schema type; other types go to ``fallback``."""

    def __init__(
        self,
        checkers: Mapping[str, CompatibilityChecker],
        fallback: CompatibilityChecker | None = None,
    ) -> None:
        self.checkers = dict(checkers)
        self.fallback = fallback or AcceptEverythingChecker()

    def incompatibilities(self, new: ParsedSchema, existing: ParsedSchema, direction: str) -> list[str]:
        checker = self.checkers.get(new.schema_type, self.fallback)
        return checker.incompatibilities(new, existing, direction)


def default_checker() -> CompatibilityChecker:
    """What the devstack registry enforces: Avro resolution rules for AVRO, nothing for JSON and PROTOBUF."""
    # Imported here: registry_avro_compat uses this module's direction constants.
    from kafka_s3_assets.devstack.registry_avro_compat import AvroCompatibilityChecker

    return PerSchemaTypeChecker({"AVRO": AvroCompatibilityChecker()})
