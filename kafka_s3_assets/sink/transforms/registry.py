"""The classes a ``type`` may name: Kafka's built-in transforms and predicates, and Debezium's
ExtractNewRecordState, by their Java class names (``Cast$Value``) and, for classes that are not nested,
by their simple names (``RegexRouter``), as Connect's plugin aliases resolve them."""

from __future__ import annotations

from typing import Any

from .base import KAFKA_PACKAGE, Transformation
from .cast import CastKey, CastValue
from .debezium import ExtractNewRecordState
from .extract import ExtractFieldKey, ExtractFieldValue, HoistFieldKey, HoistFieldValue, ValueToKey
from .filter import Filter
from .flatten import FlattenKey, FlattenValue
from .headers import DropHeaders, HeaderFromKey, HeaderFromValue
from .insert import InsertFieldKey, InsertFieldValue, InsertHeader
from .mask import MaskFieldKey, MaskFieldValue
from .predicates import PREDICATES, Predicate
from .replace import ReplaceFieldKey, ReplaceFieldValue
from .routing import RegexRouter
from .schema_metadata import SetSchemaMetadataKey, SetSchemaMetadataValue
from .timestamp import TimestampConverterKey, TimestampConverterValue, TimestampRouter

TRANSFORMS: tuple[type[Transformation], ...] = (
    CastKey,
    CastValue,
    DropHeaders,
    ExtractFieldKey,
    ExtractFieldValue,
    Filter,
    FlattenKey,
    FlattenValue,
    HeaderFromKey,
    HeaderFromValue,
    HoistFieldKey,
    HoistFieldValue,
    InsertFieldKey,
    InsertFieldValue,
    InsertHeader,
    MaskFieldKey,
    MaskFieldValue,
    RegexRouter,
    ReplaceFieldKey,
    ReplaceFieldValue,
    SetSchemaMetadataKey,
    SetSchemaMetadataValue,
    TimestampConverterKey,
    TimestampConverterValue,
    TimestampRouter,
    ValueToKey,
    ExtractNewRecordState,
)


def _by_name(classes: tuple[Any, ...]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for cls in classes:
        name = cls.class_name
        found[name] = cls
        if "$" not in name:
            found[name.rsplit(".", 1)[1]] = cls  # the simple-name alias
    return found


TRANSFORM_CLASSES: dict[str, type[Transformation]] = _by_name(TRANSFORMS)
PREDICATE_CLASSES: dict[str, type[Predicate]] = _by_name(PREDICATES)
# Outer classes of the $Key/$Value pairs: abstract in Java, so naming one is an error with a hint.
ABSTRACT_TRANSFORMS = sorted({cls.class_name.split("$")[0] for cls in TRANSFORMS if "$" in cls.class_name})
# Vendors whose other transforms exist but are not run here: a clearer message than "could not be found".
KNOWN_VENDOR_PACKAGES = ("io.debezium.", "io.confluent.")


def abstract_hint(class_name: str) -> str | None:
    """Connect's message for an abstract outer class (``...transforms.Cast``), else None."""
    if class_name not in ABSTRACT_TRANSFORMS:
        return None
    return f"This class is abstract and cannot be created. Did you mean {class_name}$Key, {class_name}$Value?"


def is_kafka_transform(class_name: str) -> bool:
    return class_name.startswith(KAFKA_PACKAGE)
