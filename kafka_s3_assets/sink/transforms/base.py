"""What every transform and predicate shares: settings parsed at construction, the ``$Key``/``$Value``
operand, and Connect's ``Requirements`` checks with their messages."""

from __future__ import annotations

import datetime
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from ..config_keys import KeyDef
from ..schema.connect_schema import (
    ARRAY,
    BOOLEAN,
    BYTES,
    DATE,
    DECIMAL,
    FLOAT32,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    MAP,
    STRING,
    STRUCT,
    TIME,
    TIMESTAMP,
    ConnectSchema,
)
from .errors import DataError
from .record import TransformRecord
from .settings import parse_settings

KAFKA_PACKAGE = "org.apache.kafka.connect.transforms."


class Operand:
    """Which half of the record a ``$Key`` or ``$Value`` variant reads and replaces."""

    def __init__(self, name: str, is_key: bool):
        self.name, self.is_key = name, is_key

    def schema(self, record: TransformRecord) -> ConnectSchema | None:
        return record.key_schema if self.is_key else record.value_schema

    def value(self, record: TransformRecord) -> Any:
        return record.key if self.is_key else record.value

    def updated(self, record: TransformRecord, schema: ConnectSchema | None, value: Any) -> TransformRecord:
        return record.with_key(schema, value) if self.is_key else record.with_value(schema, value)


KEY, VALUE = Operand("Key", True), Operand("Value", False)


class Configurable:
    """Settings declared as ``KeyDef``s, parsed from the raw strings Connect hands ``configure()``."""

    class_name: ClassVar[str]
    settings: ClassVar[tuple[KeyDef, ...]] = ()
    # Kafka's classes read their settings with ConfigDef, which trims strings; Debezium's read them raw.
    trims_strings: ClassVar[bool] = True

    def __init__(self, config: Mapping[str, Any]):
        self._given = dict(config)  # as handed over: what a copy in another process is built from
        self.warnings: list[str] = []
        self.config = parse_settings(self.settings, config, self.warnings, trim_strings=self.trims_strings)
        self.configure(self.config, config)

    def configure(self, settings: dict[str, Any], raw: Mapping[str, Any]) -> None:
        """Checks beyond ``ConfigDef`` (raise ``TransformConfigError``) and derived state."""

    def __reduce__(self):
        # Pickled (to Spark tasks) as its settings, and configured again there: its per-schema caches hold
        # closures, and are rebuilt as records come.
        return (type(self), (self._given,))


class Transformation(Configurable, ABC):
    @abstractmethod
    def apply(self, record: TransformRecord) -> TransformRecord | None:
        """The record the transform makes of ``record``; None drops it."""


class KeyOrValueTransformation(Transformation):
    """A transform with ``$Key`` and ``$Value`` variants; ``operand`` is set by :func:`variants`."""

    operand: ClassVar[Operand]
    purpose: ClassVar[str] = ""


def variants(base: type[KeyOrValueTransformation], java_name: str) -> tuple[type, type]:
    """The ``$Key`` and ``$Value`` classes of ``base``, named as Connect names them."""
    made = []
    for operand in (KEY, VALUE):
        made.append(
            type(
                f"{base.__name__}{operand.name}",
                (base,),
                {
                    "operand": operand,
                    "class_name": f"{KAFKA_PACKAGE}{java_name}${operand.name}",
                    # Where pickle finds the class (a chain travels to Spark tasks with its config): the base's
                    # module, which binds the variants under these names.
                    "__module__": base.__module__,
                    "__qualname__": f"{base.__name__}{operand.name}",
                },
            )
        )
    return made[0], made[1]


# The Java class Connect holds a value of each schema type (logical types by name) in.
SCHEMA_JAVA_CLASSES = {
    BOOLEAN: "java.lang.Boolean",
    INT8: "java.lang.Byte",
    INT16: "java.lang.Short",
    INT32: "java.lang.Integer",
    INT64: "java.lang.Long",
    FLOAT32: "java.lang.Float",
    FLOAT64: "java.lang.Double",
    STRING: "java.lang.String",
    BYTES: "[B",
    STRUCT: "org.apache.kafka.connect.data.Struct",
    ARRAY: "java.util.ArrayList",
    MAP: "java.util.HashMap",
    DATE: "java.util.Date",
    TIME: "java.util.Date",
    TIMESTAMP: "java.util.Date",
    DECIMAL: "java.math.BigDecimal",
}
# Schemaless values: what JsonConverter (schemas.enable=false) makes of JSON, and TimestampConverter's dates.
_PYTHON_JAVA_CLASSES = {
    bool: "java.lang.Boolean",
    int: "java.lang.Long",
    float: "java.lang.Double",
    str: "java.lang.String",
    bytes: "[B",
    dict: "java.util.HashMap",
    list: "java.util.ArrayList",
    datetime.datetime: "java.util.Date",
}


def java_class_of(value: Any, schema: ConnectSchema | None = None) -> str:
    """The Java class Connect would hold ``value`` as (of ``schema``, else schemaless), for messages."""
    if value is None:
        return "null"
    if schema is not None:
        return SCHEMA_JAVA_CLASSES[schema.logical or schema.type]
    return _PYTHON_JAVA_CLASSES.get(type(value), type(value).__name__)


def require_map(value: Any, purpose: str) -> dict:
    """``Requirements.requireMap``."""
    if not isinstance(value, dict):
        raise DataError(
            f"Only Map objects supported in absence of schema for [{purpose}], found: {java_class_of(value)}"
        )
    return value


def require_struct(value: Any, purpose: str, schema: ConnectSchema | None = None) -> dict:
    """``Requirements.requireStruct`` of a value of ``schema`` (a struct is a dict in datum form, and so is
    a map: the schema tells them apart)."""
    if not isinstance(value, dict) or (schema is not None and schema.type != STRUCT):
        raise DataError(f"Only Struct objects supported for [{purpose}], found: {java_class_of(value, schema)}")
    return value


def require_schema(schema: ConnectSchema | None, purpose: str) -> ConnectSchema:
    if schema is None:
        raise DataError(f"Schema required for [{purpose}]")
    return schema


def require_fields(schema: ConnectSchema) -> None:
    """``Schema.fields()`` of a schema that is not a struct throws; transforms that read the fields of the
    schema before the value fail so."""
    if schema.type != STRUCT:
        raise DataError("Cannot list fields on non-struct type")
