"""Compatibility levels and the pluggable compatibility checker of the local registry.

The store decides *which* earlier versions a new schema is compared with (the latest one,
or all of them for the ``*_TRANSITIVE`` levels) and in which direction; a
:class:`CompatibilityChecker` answers whether one pair of schemas is compatible in one
direction. Keeping the two apart lets each schema type bring its own rules, each as Confluent
Schema Registry applies them:

* AVRO: Avro's reader/writer resolution (:mod:`registry_avro_compat`);
* PROTOBUF: Confluent's Protobuf schema diff -- messages, fields by number, scalar kinds that
  share a wire type, oneofs, packages, imported types (:mod:`registry_protobuf_compat`);
* JSON: Confluent's JSON Schema diff -- types, open/closed content models, required
  properties, enums, numeric and string constraints, arrays, combined schemas, ``$ref``
  (:mod:`registry_json_compat`).

Each module's docstring lists the rules it follows and the few it does not.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

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
    """What the devstack registry enforces: Confluent's rules for AVRO, PROTOBUF and JSON."""
    # Imported here: the checkers use this module's direction constants.
    from kafka_s3_assets.devstack.registry_avro_compat import AvroCompatibilityChecker
    from kafka_s3_assets.devstack.registry_json_compat import JsonSchemaCompatibilityChecker
    from kafka_s3_assets.devstack.registry_protobuf_compat import ProtobufCompatibilityChecker

    return PerSchemaTypeChecker(
        {
            "AVRO": AvroCompatibilityChecker(),
            "PROTOBUF": ProtobufCompatibilityChecker(),
            "JSON": JsonSchemaCompatibilityChecker(),
        }
    )


K = TypeVar("K", bound=Hashable)


def java_hash_order(first: Sequence[K], second: Sequence[K] = ()) -> list[K]:
    """The union of two key lists in the order Java iterates ``new HashSet<>(first); addAll(second)``.

    Confluent's schema diffs walk names (and numbers) out of such sets, so this order is the order of
    their differences. Java's ``HashMap`` keeps keys in buckets indexed by the low bits of the spread
    hash, each bucket in insertion order; both key lists are given in insertion (declaration) order.
    Only ``str`` and ``int`` keys are supported (``String.hashCode``, ``Integer.hashCode``).
    """
    keys = list(dict.fromkeys([*first, *second]))
    capacity = 16
    while len(keys) > capacity * 3 // 4:
        capacity *= 2
    return sorted(keys, key=lambda key: _spread(_java_hash(key)) & (capacity - 1))


def _java_hash(key: object) -> int:
    if isinstance(key, int):
        return key & 0xFFFFFFFF
    if isinstance(key, str):
        h = 0
        for unit in key.encode("utf-16-be").hex(" ", 2).split():
            h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
        return h
    raise TypeError(f"no Java hash for {type(key).__name__}")


def _spread(h: int) -> int:
    return h ^ (h >> 16)
