"""What every transform and predicate shares: settings parsed at construction, the ``$Key``/``$Value``
operand, and Connect's ``Requirements`` checks with their messages."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from ..config_keys import KeyDef
from ..schema.connect_schema import ConnectSchema
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

    def __init__(self, config: Mapping[str, Any]):
        self._given = dict(config)  # as handed over: what a copy in another process is built from
        self.config = parse_settings(self.settings, config)
        self.warnings: list[str] = []
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


def java_class_of(value: Any) -> str:
    """The Java class Connect would hold ``value`` as, for messages."""
    if value is None:
        return "null"
    names = {
        bool: "java.lang.Boolean",
        int: "java.lang.Long",
        float: "java.lang.Double",
        str: "java.lang.String",
        bytes: "[B",
        dict: "java.util.HashMap",
        list: "java.util.ArrayList",
    }
    return names.get(type(value), type(value).__name__)


def require_map(value: Any, purpose: str) -> dict:
    """``Requirements.requireMap``."""
    if not isinstance(value, dict):
        raise DataError(f"Only Map objects supported in absence of schema for [{purpose}], found: {_found(value)}")
    return value


def require_struct(value: Any, purpose: str) -> dict:
    """``Requirements.requireStruct`` (a struct is a dict in datum form)."""
    if not isinstance(value, dict):
        raise DataError(f"Only Struct objects supported for [{purpose}], found: {_found(value)}")
    return value


def require_schema(schema: ConnectSchema | None, purpose: str) -> ConnectSchema:
    if schema is None:
        raise DataError(f"Schema required for [{purpose}]")
    return schema


def _found(value: Any) -> str:
    return "null" if value is None else java_class_of(value)
