"""Kafka Connect's schema model (``org.apache.kafka.connect.data.Schema``), as Confluent's AvroData reads
and writes it.

One model serves every place the project reasons in Connect terms: the Connect schema AvroConverter
derives from a registry schema (:mod:`avro_to_connect`), the one Kafka's JsonConverter reads from an
envelope (``sink.converters.json_envelope``), the Avro file schema AvroData builds from either
(:mod:`avro_from_connect`), ``schema.compatibility`` (:mod:`compatibility`, :mod:`projection`), the
fields partitioners read (:mod:`connect_fields`) and ByteArrayFormat's schema type check. A record's
schema reaches them through :func:`compatibility.schema_of`.

Values (defaults) are held in *datum form*: what fastavro reads and writes for the equivalent Avro
type with logical types left underlying (ints for Date/Time/Timestamp, the minimal two's-complement
unscaled bytes for Decimal), records and Connect structs as dicts, arrays as lists, string-keyed maps
as dicts, other maps as lists of ``{"key", "value"}`` entries. One exception: a Connect union (the
struct named ``io.confluent.connect.avro.Union``) is held as the dict of its branch fields, exactly one
of them set, as Connect holds it; :func:`avro_datum` turns such values into Avro datums.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..java_hash_map import hash_map_order

# Connect types (Schema.Type).
BOOLEAN, STRING, BYTES = "BOOLEAN", "STRING", "BYTES"
INT8, INT16, INT32, INT64, FLOAT32, FLOAT64 = "INT8", "INT16", "INT32", "INT64", "FLOAT32", "FLOAT64"
STRUCT, ARRAY, MAP = "STRUCT", "ARRAY", "MAP"
NUMERIC_WIDENING = (INT8, INT16, INT32, INT64, FLOAT32, FLOAT64)

# Connect logical types.
DECIMAL = "org.apache.kafka.connect.data.Decimal"
DATE = "org.apache.kafka.connect.data.Date"
TIME = "org.apache.kafka.connect.data.Time"
TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"
LOGICAL_BASE_TYPES = {DECIMAL: BYTES, DATE: INT32, TIME: INT32, TIMESTAMP: INT64}
DECIMAL_SCALE = "scale"
DECIMAL_PRECISION = "connect.decimal.precision"
DEFAULT_DECIMAL_PRECISION = 64

# AvroData's names and parameters.
AVRO_NAMESPACE = "io.confluent.connect.avro"
DEFAULT_RECORD_NAME = "ConnectDefault"
DEFAULT_RECORD_FULL_NAME = AVRO_NAMESPACE + "." + DEFAULT_RECORD_NAME
MAP_ENTRY_NAME = "MapEntry"
UNION_NAME = AVRO_NAMESPACE + ".Union"
AVRO_ENUM = AVRO_NAMESPACE + ".Enum"
GENERALIZED_ENUM = "org.apache.kafka.connect.data.Enum"
# The parameter of a union under a converter's generalized.sum.type.support (Protobuf, JSON Schema).
GENERALIZED_UNION = "org.apache.kafka.connect.data.Union"
ENUM_MARKERS = (AVRO_ENUM, GENERALIZED_ENUM, "io.confluent.connect.protobuf.Enum")
RECORD_DOC = AVRO_NAMESPACE + ".record.doc"
FIELD_DOC_PREFIX = AVRO_NAMESPACE + ".field.doc."
FIELD_DEFAULT_FLAG = AVRO_NAMESPACE + ".field.default"
ENUM_DOC_PREFIX = AVRO_NAMESPACE + ".enum.doc."
ENUM_DEFAULT_PREFIX = AVRO_NAMESPACE + ".enum.default."
CONNECT_RECORD_DOC = "connect.record.doc"  # discard.type.doc.default: a named type's own doc
CONNECT_ENUM_DOC = "connect.enum.doc"
FIXED_SIZE = "connect.fixed.size"


@dataclass(frozen=True)
class AvroDataConfig:
    """The AvroData settings that shape both conversions (``AvroDataConfig``).

    The converter's AvroData (Avro -> Connect) takes ``<converter>.connect.meta.data`` (default true),
    ``<converter>.enhanced.avro.schema.support`` (default false) and ``<converter>.discard.type.doc.default``
    (default false); the S3 sink's (Connect -> Avro) takes the connector's ``connect.meta.data`` (true) and
    ``enhanced.avro.schema.support`` (true in the S3 sink), and never discards. Generalized sum types and
    scrubbing of names stay off, and singleton unions are flattened, as by default. ``allow.optional.map.keys``
    (default false) is the S3 sink's: with it, a map whose keys are optional strings is an Avro map, not an
    array of key/value records.

    ``discard_type_doc_default`` (Avro -> Connect only): AvroData keeps only field docs and defaults. A field's
    doc, else its named type's doc, else its ``connect.doc``, becomes the Connect schema's doc; a named type's
    own doc becomes the ``connect.record.doc`` parameter (an enum's also ``connect.enum.doc``); the record,
    field and enum doc parameters, the enum default and the field-default flag are not made.
    """

    connect_meta_data: bool = True
    enhanced_avro_schema_support: bool = False
    allow_optional_map_keys: bool = False
    discard_type_doc_default: bool = False


CONVERTER_DEFAULTS = AvroDataConfig(connect_meta_data=True, enhanced_avro_schema_support=False)
SINK_DEFAULTS = AvroDataConfig(connect_meta_data=True, enhanced_avro_schema_support=True)


class ConnectSchema:
    """One Connect schema. Built once by a converter, then treated as immutable.

    ``default`` None means "no default", as ``defaultValue() == null`` does in Connect. ``name_token``
    stands for the identity of the Java ``String`` holding the name: AvroData's Connect -> Avro pass
    recognises a recursive reference by that identity (an ``IdentityHashMap``), so it is the Avro
    definition the name came from, or None where Java would hold a fresh string.
    """

    __slots__ = (
        "type",
        "optional",
        "default",
        "name",
        "version",
        "doc",
        "parameters",
        "fields",
        "key_schema",
        "value_schema",
        "name_token",
    )

    def __init__(
        self,
        type: str,
        *,
        optional: bool = False,
        default: Any = None,
        name: str | None = None,
        version: int | None = None,
        doc: str | None = None,
        parameters: dict[str, str] | None = None,
        fields: Iterable[tuple[str, ConnectSchema]] = (),
        key_schema: ConnectSchema | None = None,
        value_schema: ConnectSchema | None = None,
        name_token: Any = None,
    ):
        self.type = type
        self.optional = optional
        self.default = default
        self.name = name
        self.version = version
        self.doc = doc
        self.parameters = dict(parameters or {})
        self.fields = tuple(fields)
        self.key_schema = key_schema
        self.value_schema = value_schema
        self.name_token = name_token

    def field(self, name: str) -> ConnectSchema | None:
        for field_name, schema in self.fields:
            if field_name == name:
                return schema
        return None

    def parameter(self, key: str) -> str | None:
        return self.parameters.get(key)

    @property
    def is_union(self) -> bool:
        """AvroData's ``isUnionSchema``: the struct Avro's converter makes of a union, or one a converter
        marked as a generalized union."""
        return self.type == STRUCT and (self.name == UNION_NAME or GENERALIZED_UNION in self.parameters)

    @property
    def is_enum(self) -> bool:
        return self.type == STRING and (AVRO_ENUM in self.parameters or GENERALIZED_ENUM in self.parameters)

    @property
    def is_fixed(self) -> bool:
        return self.type == BYTES and self.name is not None and FIXED_SIZE in self.parameters

    @property
    def logical(self) -> str | None:
        return self.name if self.name in LOGICAL_BASE_TYPES else None

    @property
    def keys(self) -> ConnectSchema:
        """``keySchema()`` of a MAP, which always has one (for the type checker: ``key_schema`` is None
        for every other type)."""
        assert self.key_schema is not None, f"a {self.type} schema has no key schema"
        return self.key_schema

    @property
    def values(self) -> ConnectSchema:
        """``valueSchema()`` of an ARRAY (its elements) or a MAP (its values), which always has one."""
        assert self.value_schema is not None, f"a {self.type} schema has no value schema"
        return self.value_schema

    @property
    def avro_map(self) -> bool:
        """Whether AvroData writes this MAP as an Avro map (string keys), else as an array of entries."""
        return self.key_schema is not None and self.key_schema.type == STRING and not self.key_schema.optional

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ConnectSchema):
            return NotImplemented
        return connect_equals(self, other)

    def __hash__(self) -> int:
        return hash(
            (
                self.type,
                self.optional,
                self.name,
                self.version,
                self.doc,
                frozenset(self.parameters.items()),
                tuple(name for name, _ in self.fields),
            )
        )

    def __str__(self) -> str:  # ConnectSchema.toString
        return f"Schema{{{self.name}:{self.type}}}" if self.name is not None else f"Schema{{{self.type}}}"

    __repr__ = __str__


class CyclicSchema(ConnectSchema):
    """AvroData's ``CyclicSchemaWrapper``: a reference to a record schema still being built (a recursive
    Avro type), with its own optionality. Every other attribute is read from the target when asked,
    so the reference sees the fields the target has once it is complete."""

    __slots__ = ("target", "_optional")

    def __init__(self, target: ConnectSchema, optional: bool):  # super().__init__ is not wanted
        self.target = target
        self._optional = optional

    optional = property(lambda self: self._optional)
    type = property(lambda self: self.target.type)
    default = property(lambda self: self.target.default)
    name = property(lambda self: self.target.name)
    version = property(lambda self: self.target.version)
    doc = property(lambda self: self.target.doc)
    parameters = property(lambda self: self.target.parameters)
    fields = property(lambda self: self.target.fields)
    key_schema = property(lambda self: self.target.key_schema)
    value_schema = property(lambda self: self.target.value_schema)
    name_token = property(lambda self: self.target.name_token)


def copy_schema(schema: ConnectSchema, **changes: Any) -> ConnectSchema:
    """A new schema with the attributes of ``schema`` except ``changes`` (a CyclicSchema is resolved)."""
    attributes = {slot: getattr(schema, slot) for slot in ConnectSchema.__slots__}
    attributes.update(changes)
    return ConnectSchema(attributes.pop("type"), **attributes)


def non_optional(schema: ConnectSchema) -> ConnectSchema:
    """AvroData.nonOptional: the same schema, required (its default kept)."""
    return copy_schema(schema, optional=False)


def connect_equals(a: ConnectSchema, b: ConnectSchema) -> bool:
    """``ConnectSchema.equals``: every attribute, recursively. Recursive schemas compare structurally
    (Java compares the wrapped builders by identity; equal content is what matters here)."""
    return _equals(a, b, set())


def _equals(a: ConnectSchema | None, b: ConnectSchema | None, seen: set) -> bool:
    if a is b:
        return True
    if a is None or b is None:
        return False
    pair = (id(a), id(b))
    if pair in seen:
        return True
    seen.add(pair)
    same = (
        a.type == b.type
        and a.optional == b.optional
        and a.name == b.name
        and a.version == b.version
        and a.doc == b.doc
        and a.parameters == b.parameters
        and a.default == b.default
        and len(a.fields) == len(b.fields)
        and all(x == y for (x, _), (y, _) in zip(a.fields, b.fields))
    )
    return (
        same
        and all(_equals(x, y, seen) for (_, x), (_, y) in zip(a.fields, b.fields))
        and _equals(a.key_schema, b.key_schema, seen)
        and _equals(a.value_schema, b.value_schema, seen)
    )


def avro_datum(schema: ConnectSchema, value: Any) -> Any:
    """A value in datum form (see the module docstring) as the datum of the schema's Avro type: a union
    struct becomes the value of its first set branch, as ``AvroData.fromConnectData`` writes it."""
    if value is None:
        return None
    kind = schema.type
    if kind == STRUCT:
        if schema.is_union:
            for name, member in schema.fields:
                if value.get(name) is not None:
                    return avro_datum(member, value[name])
            return None
        return {name: avro_datum(member, value.get(name)) for name, member in schema.fields}
    if kind == ARRAY:
        return [avro_datum(schema.values, item) for item in value]
    if kind == MAP:
        if schema.avro_map:
            return {k: avro_datum(schema.values, v) for k, v in value.items()}
        return [
            {"key": avro_datum(schema.keys, e["key"]), "value": avro_datum(schema.values, e["value"])} for e in value
        ]
    return value


def connect_datum(schema: ConnectSchema, value: Any) -> Any:
    """The inverse of :func:`avro_datum`: an Avro datum of the schema's Avro type in datum form, a union's
    value becoming the union struct with the branch it matches set (``AvroData.toConnectData`` resolves the
    branch from the value's Avro type; here from its Python type, and for records by their field names)."""
    if value is None:
        return None
    kind = schema.type
    if kind == STRUCT:
        if schema.is_union:
            name, member = _union_branch(schema, value)
            return {field: (connect_datum(member, value) if field == name else None) for field, _ in schema.fields}
        return {name: connect_datum(member, value.get(name)) for name, member in schema.fields}
    if kind == ARRAY:
        return [connect_datum(schema.values, item) for item in value]
    if kind == MAP:
        if schema.avro_map:
            return {k: connect_datum(schema.values, v) for k, v in value.items()}
        return [
            {"key": connect_datum(schema.keys, e["key"]), "value": connect_datum(schema.values, e["value"])}
            for e in value
        ]
    return value


_PYTHON_KINDS: tuple[tuple[type | tuple[type, ...], tuple[str, ...]], ...] = (
    (bool, (BOOLEAN,)),
    (int, (INT32, INT64, INT8, INT16)),
    (float, (FLOAT64, FLOAT32)),
    (str, (STRING,)),
    ((bytes, bytearray), (BYTES,)),
    (list, (ARRAY, MAP)),
    (dict, (STRUCT, MAP)),
)


def _union_branch(schema: ConnectSchema, value: Any) -> tuple[str, ConnectSchema]:
    for python_type, kinds in _PYTHON_KINDS:
        if isinstance(value, python_type):
            candidates = [(n, m) for n, m in schema.fields if m.type in kinds]
            if isinstance(value, dict) and len(candidates) > 1:
                keys = set(value)
                exact = [(n, m) for n, m in candidates if m.type == STRUCT and {f for f, _ in m.fields} == keys]
                candidates = exact or candidates
            if candidates:
                return candidates[0]
            break
    raise ValueError(f"No branch of union {schema.name} holds a value of Python type {type(value).__name__}")


def has_union(schema: ConnectSchema) -> bool:
    """Whether values of ``schema`` may hold a union struct (so :func:`avro_datum` has work to do)."""
    return _has_union(schema, set())


def _has_union(schema: ConnectSchema | None, seen: set) -> bool:
    if schema is None or id(schema) in seen:
        return False
    seen.add(id(schema))
    if schema.is_union:
        return True
    return (
        any(_has_union(member, seen) for _, member in schema.fields)
        or _has_union(schema.key_schema, seen)
        or _has_union(schema.value_schema, seen)
    )


def split_name(full_name: str) -> tuple[str | None, str]:
    """AvroData.splitName: ``a.b.C`` -> (``a.b``, ``C``); a name without dots has no namespace."""
    if not full_name:
        return None, full_name
    parts = full_name.split(".")
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()  # Java's String.split drops trailing empty strings
    if len(parts) <= 1:
        return None, parts[0]
    return ".".join(parts[:-1]), parts[-1]


def java_hash_map_order(keys: list[str], initial_capacity: int = 16) -> list[str]:
    """The iteration order of a ``java.util.HashMap<String, ?>`` created with ``initial_capacity`` and
    filled with ``keys`` in this order: Connect holds map values (defaults included) in HashMaps, so
    AvroData writes a map default in this order, not in the order it was read (``java_hash_map``,
    crowded buckets included)."""
    return list(hash_map_order(tuple(keys), initial_capacity))
