"""Our transforms and predicates against Apache Kafka's own (``connect-transforms`` 4.4.0 run on the JVM,
``java_connect_transforms``): every case is one record through one chain on both sides, compared as
JsonConverter writes the result (schema envelope with names, versions, optional flags, parameters,
defaults and field order; payload; topic, partition, timestamp; headers as ``Values.convertToString``
renders them), or as the failure both must raise (the stage, and the message where ours is Kafka's).

The whole corpus is one JVM call (a module-scoped fixture). A case marked ``deviation`` is a difference
docs/transforms.md documents (a strict xfail: it must keep differing); ``own_message`` names a failure
whose message is deliberately ours (both must still fail at the same stage).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

import pytest

from kafka_s3_assets.sink.transforms.predicates import PREDICATES
from kafka_s3_assets.sink.transforms.registry import TRANSFORMS

from .java_connect_transforms import canonical, kafka_answers, our_answer

pytestmark = [pytest.mark.unit, pytest.mark.java]

PACKAGE = "org.apache.kafka.connect.transforms."
PREDICATE_PACKAGE = PACKAGE + "predicates."

# ---------------------------------------------------------------------------------------------------
# Schemas and envelopes, as JsonConverter reads them


def prim(type_: str, **attributes: Any) -> dict:
    return {"type": type_, **attributes}


def opt(schema: dict, **attributes: Any) -> dict:
    return {**schema, "optional": True, **attributes}


def struct(*fields: tuple[str, dict], **attributes: Any) -> dict:
    return {"type": "struct", "fields": [{**schema, "field": name} for name, schema in fields], **attributes}


def array(items: dict, **attributes: Any) -> dict:
    return {"type": "array", "items": items, **attributes}


def map_of(keys: dict, values: dict, **attributes: Any) -> dict:
    return {"type": "map", "keys": keys, "values": values, **attributes}


def decimal_schema(scale: int, **attributes: Any) -> dict:
    return prim(
        "bytes", name="org.apache.kafka.connect.data.Decimal", version=1, parameters={"scale": str(scale)}, **attributes
    )


def unscaled(number: int) -> str:
    """A Decimal payload: base64 of the unscaled value's two's-complement bytes."""
    bits = number.bit_length() if number >= 0 else (~number).bit_length()
    return base64.b64encode(number.to_bytes(bits // 8 + 1, "big", signed=True)).decode("ascii")


INT8, INT16, INT32, INT64 = prim("int8"), prim("int16"), prim("int32"), prim("int64")
FLOAT32, FLOAT64, BOOLEAN = prim("float"), prim("double"), prim("boolean")
STRING, BYTES = prim("string"), prim("bytes")
DATE = prim("int32", name="org.apache.kafka.connect.data.Date", version=1)
TIME = prim("int32", name="org.apache.kafka.connect.data.Time", version=1)
TIMESTAMP = prim("int64", name="org.apache.kafka.connect.data.Timestamp", version=1)
DECIMAL2 = decimal_schema(2)


def env(schema: dict | None, payload: Any) -> dict:
    return {"schema": schema, "payload": payload}


def plain(payload: Any) -> dict:
    """Schemaless data (JsonConverter's ``"schema": null``, as with schemas.enable=false)."""
    return {"schema": None, "payload": payload}


GEO = struct(("lat", FLOAT64), ("lon", FLOAT64), name="com.example.Geo", optional=True)
ADDRESS = struct(
    ("street", STRING),
    ("city", STRING),
    ("zip", opt(STRING)),
    ("geo", GEO),
    name="com.example.Address",
    optional=True,
)
ORDER = struct(
    ("id", INT64),
    ("customer", STRING),
    ("qty", INT32),
    ("small", INT8),
    ("mid", INT16),
    ("price", FLOAT64),
    ("ratio", FLOAT32),
    ("paid", BOOLEAN),
    ("note", opt(STRING)),
    ("code", opt(STRING, default="none")),
    ("count", opt(INT32)),
    ("tags", array(STRING)),
    ("attrs", map_of(STRING, INT32)),
    ("amount", DECIMAL2),
    ("day", DATE),
    ("at", TIME),
    ("ts", TIMESTAMP),
    ("raw", BYTES),
    ("numeric", opt(STRING)),
    ("address", ADDRESS),
    name="com.example.Order",
    version=3,
    doc="an order",
)
MILLIS = 1_700_000_000_123  # 2023-11-14T22:13:20.123Z
ORDER_PAYLOAD = {
    "id": 1001,
    "customer": "Ann",
    "qty": 300,
    "small": -7,
    "mid": 1234,
    "price": 1234.56,
    "ratio": 0.1,
    "paid": True,
    "note": None,
    "code": "X",
    "count": None,
    "tags": ["a", "b"],
    "attrs": {"a": 1, "b": 2},
    "amount": unscaled(12345),
    "day": 19675,
    "at": 80_000_123,
    "ts": MILLIS,
    "raw": base64.b64encode(b"\x00\x01hi").decode("ascii"),
    "numeric": "42",
    "address": {"street": "Main St 1", "city": "Oslo", "zip": None, "geo": {"lat": 59.91, "lon": 10.75}},
}
ORDER_ENV = env(ORDER, ORDER_PAYLOAD)
NO_ADDRESS = env(ORDER, {**ORDER_PAYLOAD, "address": None})
KEY = struct(("id", INT64), name="com.example.OrderKey")
KEY_ENV = env(KEY, {"id": 1001})
# Defaults: a null field reads as its default. (Not a struct's: JsonConverter cannot read a struct default,
# "Invalid default value".)
WITH_DEFAULTS = struct(
    ("a", opt(INT32, default=5)),
    ("b", opt(STRING, default="bee")),
    ("inner", opt(struct(("x", opt(INT32, default=9)), ("y", opt(STRING))))),
    ("c", INT64),
    ("d", opt(FLOAT64, default=2.5)),
    name="com.example.Defaults",
)
DEFAULTS_ENV = env(WITH_DEFAULTS, {"a": None, "b": "given", "inner": None, "c": 3, "d": 1.25})
INNER_ENV = env(WITH_DEFAULTS, {"a": 1, "b": None, "inner": {"x": None, "y": "why"}, "c": 3, "d": None})
# A map with non-string keys (written as [[key, value], ...]) and one with optional string keys. Map payloads
# with a schema hold their keys in the order Java's HashMap iterates them ("a" before "b", 1 before 2): our
# envelope reader keeps the text's order, JsonConverter a HashMap's, which is a converter's difference, not
# a transform's.
MAPS = struct(
    ("byInt", map_of(INT32, STRING)),
    ("opt", opt(map_of(opt(STRING), FLOAT64))),
    ("nested", array(map_of(STRING, array(INT16)))),
)
MAPS_ENV = env(MAPS, {"byInt": [[1, "one"], [2, "two"]], "opt": {"k": 1.5}, "nested": [{"xs": [1, 2]}, {}]})

# Schemaless: JsonConverter reads each object into a HashMap, and our reader (schemaless_json) puts its keys in
# that map's order too.
SCHEMALESS = {
    "id": 7,
    "name": "Ann",
    "amount": 12.5,
    "active": True,
    "tags": ["x", "y"],
    "addr": {"city": "Oslo", "zip": "0150", "geo": {"lat": 59.9, "lon": 10.7}},
    "ts": MILLIS,
    "when": "2023-11-14 22:13:20",
    "n": None,
    "big": 3_000_000_000,
    "text": "123",
}
SCHEMALESS_ENV = plain(SCHEMALESS)


def header(name: str, schema: dict | None, payload: Any) -> list:
    return [name, env(schema, payload)]


TRACE = header("trace", STRING, "abc")


def rec(
    value: dict | None = ORDER_ENV,
    key: dict | None = None,
    *,
    topic: str = "orders",
    partition: int = 3,
    offset: int = 42,
    timestamp: int | None = MILLIS,
    headers: list | tuple = (TRACE,),
) -> dict:
    return {
        "topic": topic,
        "partition": partition,
        "offset": offset,
        "timestamp": timestamp,
        "key": key,
        "value": value,
        "headers": list(headers),
    }


# ---------------------------------------------------------------------------------------------------
# Chains


def t(name: str, /, when: dict | None = None, negate: bool = False, **props: Any) -> dict:
    """A stage: ``name`` under ``org.apache.kafka.connect.transforms.``; props with dots as ``a__b``."""
    stage: dict[str, Any] = {"class": PACKAGE + name, "props": {k.replace("__", "."): v for k, v in props.items()}}
    if when is not None:
        stage["predicate"] = when
        stage["negate"] = negate
    return stage


def p(name: str, /, **props: Any) -> dict:
    return {"class": PREDICATE_PACKAGE + name, "props": {k.replace("__", "."): v for k, v in props.items()}}


@dataclass(frozen=True)
class Case:
    id: str
    transforms: list[dict]
    record: dict = field(default_factory=rec)
    own_message: str | None = None  # why our failure's message is not Kafka's (both must still fail alike)
    deviation: str | None = None  # a difference docs/transforms.md documents: expected to differ

    @property
    def request(self) -> dict:
        return {"transforms": self.transforms, "record": self.record}


CASES: list[Case] = []

# Deliberate differences (docs/transforms.md, "Differences from Connect").
OBJECT_PRINTED = "Connect's message prints a Java object (an InsertionSpec, the whole record); ours names it"
PYTHON_REGEX = "the regular expression's error is Python's re's, not java.util.regex's"
MASKED_DECIMAL = "MaskField fails when masking a Decimal to a value of another scale; Connect when it writes it"


def case(id: str, *transforms: dict, record: dict | None = None, **extra: Any) -> None:
    CASES.append(Case(id, list(transforms), record if record is not None else rec(), **extra))


# -- the envelope writer, on identity chains ---------------------------------------------------------

case("identity-struct")
case("identity-struct-null-nested", record=rec(NO_ADDRESS))
case("identity-schemaless", record=rec(SCHEMALESS_ENV))
case("identity-schemaless-scalars", record=rec(plain([1, 2.5, "x", None, True]), key=plain("k")))
case("identity-tombstone", record=rec(None, KEY_ENV))
case("identity-null-payload-with-schema", record=rec(env(opt(ORDER), None)))
case("identity-primitive-key-and-value", record=rec(env(STRING, "hello"), env(INT64, 5)))
case("identity-defaults", record=rec(DEFAULTS_ENV))
case("identity-nested-defaults", record=rec(INNER_ENV))
case("identity-maps", record=rec(MAPS_ENV))
case("identity-no-timestamp", record=rec(timestamp=None, headers=()))
case(
    "identity-headers",
    record=rec(
        headers=[
            header("s", STRING, 'text with "quotes"'),
            header("i8", INT8, -3),
            header("i64", INT64, 9_000_000_000),
            header("f32", FLOAT32, 0.1),
            header("f64", FLOAT64, 1e21),
            header("b", BOOLEAN, False),
            header("bytes", BYTES, base64.b64encode(b"\xff\x00").decode()),
            header("dec", DECIMAL2, unscaled(-12345)),
            header("date", DATE, 19675),
            header("time", TIME, 80_000_123),
            header("ts", TIMESTAMP, MILLIS),
            header("arr", array(STRING), ["a", "b c"]),
            header("map", map_of(STRING, INT32), {"k": 1}),
            header("struct", struct(("a", INT32), ("b", opt(STRING))), {"a": 1, "b": None}),
            header("schemaless", None, {"x": [1, 2]}),
            ["null", None],
        ]
    ),
)

# -- Cast ---------------------------------------------------------------------------------------------

case("cast-integers", t("Cast$Value", spec="qty:int8,small:int16,id:int32,mid:int64"))
case("cast-to-floats", t("Cast$Value", spec="qty:float32,id:float64,small:float64,paid:float32"))
case("cast-floats-to-integers", t("Cast$Value", spec="price:int32,ratio:int64,amount:int16"))
case("cast-to-boolean", t("Cast$Value", spec="qty:boolean,price:boolean,customer:boolean,ratio:boolean"))
case(
    "cast-to-string",
    t("Cast$Value", spec="qty:string,price:string,ratio:string,paid:string,raw:string,small:string,id:string"),
)
case("cast-logical-to-string", t("Cast$Value", spec="amount:string,day:string,at:string,ts:string"))
case("cast-logical-to-numbers", t("Cast$Value", spec="day:int32,at:int64,ts:int64,amount:float64"))
case("cast-string-to-numbers", t("Cast$Value", spec="numeric:int32,customer:boolean"))
case("cast-string-to-float", t("Cast$Value", spec="numeric:float32"))
case("cast-unparsable-string", t("Cast$Value", spec="customer:int64"))
case("cast-null-optional-field", t("Cast$Value", spec="note:int32,count:string"))
case("cast-field-with-default", t("Cast$Value", spec="code:string,a:string"), record=rec(DEFAULTS_ENV))
case("cast-default-to-int", t("Cast$Value", spec="a:int64,c:float32"), record=rec(DEFAULTS_ENV))
case("cast-struct-to-string", t("Cast$Value", spec="address:string"))
case("cast-array-to-string", t("Cast$Value", spec="tags:string"))
case("cast-map-to-int", t("Cast$Value", spec="attrs:int32"))
case("cast-bytes-to-int", t("Cast$Value", spec="raw:int32"))
case("cast-overflow-wraps", t("Cast$Value", spec="qty:int8,id:int8,mid:int8"))
case(
    "cast-double-saturates",
    t("Cast$Value", spec="big:int32,neg:int16"),
    record=rec(env(struct(("big", FLOAT64), ("neg", FLOAT64)), {"big": 1e20, "neg": -70000.7})),
)
case("cast-key-whole", t("Cast$Key", spec="int32"), record=rec(key=env(INT64, 77)))
case("cast-key-whole-string", t("Cast$Key", spec="string"), record=rec(key=env(opt(INT64), 77)))
case("cast-key-fields", t("Cast$Key", spec="id:string"), record=rec(key=KEY_ENV))
case("cast-whole-value-to-int64", t("Cast$Value", spec="int64"), record=rec(env(STRING, "123")))
case("cast-whole-value-float", t("Cast$Value", spec="float64"), record=rec(env(INT8, 5)))
case("cast-whole-struct", t("Cast$Value", spec="string"))
case("cast-whole-value-optional-default", t("Cast$Value", spec="string"), record=rec(env(opt(INT32, default=4), 12)))
case("cast-schemaless-fields", t("Cast$Value", spec="id:string,amount:int32,active:int8,missing:int16,big:int32"))
case("cast-schemaless-fields-2", t("Cast$Value", spec="text:float64,ts:string,n:boolean"), record=rec(SCHEMALESS_ENV))
case("cast-schemaless-whole-value", t("Cast$Value", spec="string"), record=rec(plain(42)))
case("cast-schemaless-whole-string", t("Cast$Value", spec="float64"), record=rec(plain("3.25")))
case("cast-schemaless-whole-double", t("Cast$Value", spec="int16"), record=rec(plain(70000.9)))
case("cast-schemaless-map", t("Cast$Value", spec="int32"), record=rec(SCHEMALESS_ENV))
case("cast-schemaless-nested-map", t("Cast$Value", spec="addr:string"), record=rec(SCHEMALESS_ENV))
case("cast-tombstone", t("Cast$Value", spec="qty:string"), record=rec(None))
case("cast-null-with-schema", t("Cast$Value", spec="qty:string"), record=rec(env(opt(ORDER), None)))
case("cast-value-not-a-struct", t("Cast$Value", spec="a:int8"), record=rec(env(STRING, "x")))
case("cast-schemaless-not-a-map", t("Cast$Value", spec="a:int8"), record=rec(plain([1, 2])))
case("cast-config-empty-spec", t("Cast$Value", spec=""))
case("cast-config-unknown-type", t("Cast$Value", spec="qty:foo"))
case("cast-config-unsupported-type", t("Cast$Value", spec="qty:struct"))
case("cast-config-whole-and-field", t("Cast$Value", spec="int32,qty:int8"))
case("cast-config-three-parts", t("Cast$Value", spec="a:b:int8"))
case("cast-config-case-insensitive", t("Cast$Value", spec="qty:INT64, price : Float32"))

# -- ExtractField ---------------------------------------------------------------------------------------

case("extract-string", t("ExtractField$Value", field="customer"))
case("extract-struct", t("ExtractField$Value", field="address"))
case("extract-null-struct", t("ExtractField$Value", field="address"), record=rec(NO_ADDRESS))
case("extract-defaulted", t("ExtractField$Value", field="a"), record=rec(DEFAULTS_ENV))
case("extract-nested-defaulted", t("ExtractField$Value", field="inner"), record=rec(INNER_ENV))
case(
    "extract-defaulted-no-replace",
    t("ExtractField$Value", field="a", replace__null__with__default="false"),
    record=rec(DEFAULTS_ENV),
)
case("extract-key", t("ExtractField$Key", field="id"), record=rec(key=KEY_ENV))
case("extract-unknown-field", t("ExtractField$Value", field="nope"))
case("extract-unknown-field-tombstone", t("ExtractField$Value", field="nope"), record=rec(env(opt(ORDER), None)))
case("extract-from-null-with-schema", t("ExtractField$Value", field="qty"), record=rec(env(opt(ORDER), None)))
case("extract-tombstone", t("ExtractField$Value", field="qty"), record=rec(None))
case("extract-schemaless", t("ExtractField$Value", field="addr"), record=rec(SCHEMALESS_ENV))
case("extract-schemaless-missing", t("ExtractField$Value", field="nope"), record=rec(SCHEMALESS_ENV))
case("extract-not-a-struct", t("ExtractField$Value", field="a"), record=rec(env(STRING, "x")))
case("extract-schemaless-not-a-map", t("ExtractField$Value", field="a"), record=rec(plain("x")))
case("extract-v2-nested", t("ExtractField$Value", field="address.geo.lat", field__syntax__version="V2"))
case(
    "extract-v2-through-null",
    t("ExtractField$Value", field="address.city", field__syntax__version="v2"),
    record=rec(NO_ADDRESS),
)
case(
    "extract-v2-schemaless",
    t("ExtractField$Value", field="addr.geo.lon", field__syntax__version="V2"),
    record=rec(SCHEMALESS_ENV),
)
case(
    "extract-v2-backticks",
    t("ExtractField$Value", field="`a.b`.c", field__syntax__version="V2"),
    record=rec(env(struct(("a.b", struct(("c", INT32)))), {"a.b": {"c": 4}})),
)
case("extract-v1-dotted-name", t("ExtractField$Value", field="a.b"), record=rec(plain({"a.b": 1, "a": {"b": 2}})))
case("extract-config-bad-syntax", t("ExtractField$Value", field="a", field__syntax__version="V3"))
case("extract-config-missing-field", t("ExtractField$Value"))

# -- HoistField -------------------------------------------------------------------------------------------

case("hoist-struct", t("HoistField$Value", field="order"))
case("hoist-key", t("HoistField$Key", field="k"), record=rec(key=env(INT64, 5)))
case("hoist-schemaless", t("HoistField$Value", field="wrapped"), record=rec(SCHEMALESS_ENV))
case("hoist-tombstone", t("HoistField$Value", field="wrapped"), record=rec(None))
case("hoist-null-with-optional-schema", t("HoistField$Value", field="w"), record=rec(env(opt(STRING), None)))
case("hoist-optional-with-default", t("HoistField$Value", field="w"), record=rec(env(opt(INT32, default=3), 8)))

# -- Flatten -----------------------------------------------------------------------------------------------

case("flatten-struct-maps-refused", t("Flatten$Value"))
FLAT_ORDER = struct(
    ("id", INT64),
    ("tags", array(STRING)),
    ("amount", DECIMAL2),
    ("address", ADDRESS),
    ("extra", struct(("level", struct(("deep", opt(INT32, default=1)), ("d", opt(STRING)))), optional=True)),
    name="com.example.Flat",
    version=2,
)
FLAT_PAYLOAD = {
    "id": 1,
    "tags": ["t"],
    "amount": unscaled(5),
    "address": {"street": "s", "city": "c", "zip": "z", "geo": {"lat": 1.5, "lon": -2.5}},
    "extra": {"level": {"deep": None, "d": "dd"}},
}
case("flatten-struct", t("Flatten$Value"), record=rec(env(FLAT_ORDER, FLAT_PAYLOAD)))
case("flatten-delimiter", t("Flatten$Value", delimiter="_"), record=rec(env(FLAT_ORDER, FLAT_PAYLOAD)))
case(
    "flatten-null-nested",
    t("Flatten$Value", delimiter="__"),
    record=rec(env(FLAT_ORDER, {**FLAT_PAYLOAD, "address": None, "extra": None})),
)
case("flatten-defaults", t("Flatten$Value"), record=rec(DEFAULTS_ENV))
case("flatten-nested-defaults", t("Flatten$Value"), record=rec(INNER_ENV))
case("flatten-key", t("Flatten$Key"), record=rec(key=env(struct(("a", struct(("b", INT32)))), {"a": {"b": 1}})))
case("flatten-schemaless", t("Flatten$Value", delimiter="-"), record=rec(SCHEMALESS_ENV))
case("flatten-schemaless-empty-nested", t("Flatten$Value"), record=rec(plain({"a": {}, "b": {"c": None}})))
case("flatten-tombstone", t("Flatten$Value"), record=rec(None))
case("flatten-null-with-schema", t("Flatten$Value"), record=rec(env(opt(FLAT_ORDER), None)))
case("flatten-primitive-value", t("Flatten$Value"), record=rec(env(STRING, "x")))
case("flatten-schemaless-not-a-map", t("Flatten$Value"), record=rec(plain(5)))
case("flatten-optional-struct-schema", t("Flatten$Value"), record=rec(env(opt(FLAT_ORDER), FLAT_PAYLOAD)))

# -- HeaderFrom ----------------------------------------------------------------------------------------------

case("headerfrom-copy", t("HeaderFrom$Value", fields="customer,qty", headers="c,q", operation="copy"))
case("headerfrom-move", t("HeaderFrom$Value", fields="customer,qty", headers="c,q", operation="move"))
case(
    "headerfrom-copy-typed",
    t(
        "HeaderFrom$Value",
        fields="price,ratio,paid,amount,day,at,ts,raw,tags,attrs,address,note,code",
        headers="price,ratio,paid,amount,day,at,ts,raw,tags,attrs,address,note,code",
        operation="copy",
    ),
)
case(
    "headerfrom-copy-maps",
    t("HeaderFrom$Value", fields="byInt,opt,nested", headers="a,b,c", operation="copy"),
    record=rec(MAPS_ENV),
)
case(
    "headerfrom-move-defaults",
    t("HeaderFrom$Value", fields="a,inner", headers="a,inner", operation="move"),
    record=rec(DEFAULTS_ENV),
)
case(
    "headerfrom-no-replace-null",
    t("HeaderFrom$Value", fields="a", headers="a", operation="copy", replace__null__with__default="false"),
    record=rec(DEFAULTS_ENV),
)
case("headerfrom-key", t("HeaderFrom$Key", fields="id", headers="key-id", operation="move"), record=rec(key=KEY_ENV))
case(
    "headerfrom-schemaless-copy",
    t("HeaderFrom$Value", fields="name,addr,tags,missing", headers="n,a,t,m", operation="copy"),
    record=rec(SCHEMALESS_ENV),
)
case(
    "headerfrom-schemaless-move",
    t("HeaderFrom$Value", fields="name,amount", headers="n,a", operation="move"),
    record=rec(SCHEMALESS_ENV),
)
case(
    "headerfrom-same-header-twice",
    t("HeaderFrom$Value", fields="customer,id", headers="trace,trace", operation="copy"),
)
case(
    "headerfrom-missing-field",
    t("HeaderFrom$Value", fields="nope", headers="h", operation="copy"),
    own_message="Connect dereferences the missing field: a NullPointerException (docs/transforms.md)",
)
case("headerfrom-tombstone", t("HeaderFrom$Value", fields="a", headers="h", operation="copy"), record=rec(None))
case(
    "headerfrom-null-with-schema",
    t("HeaderFrom$Value", fields="qty", headers="h", operation="copy"),
    record=rec(env(opt(ORDER), None)),
)
case("headerfrom-config-lengths", t("HeaderFrom$Value", fields="a,b", headers="h", operation="copy"))
case("headerfrom-config-operation", t("HeaderFrom$Value", fields="a", headers="h", operation="swap"))
case("headerfrom-config-empty-fields", t("HeaderFrom$Value", fields="", headers="", operation="copy"))

# -- InsertField -------------------------------------------------------------------------------------------

ALL_INSERTS = {
    "topic__field": "t",
    "partition__field": "p",
    "offset__field": "o",
    "timestamp__field": "ts_inserted",
    "static__field": "s",
    "static__value": "v",
}
case("insert-all", t("InsertField$Value", **ALL_INSERTS))
case(
    "insert-required",
    t(
        "InsertField$Value",
        topic__field="t!",
        offset__field="o!",
        timestamp__field="w!",
        static__field="s?",
        static__value="v",
    ),
)
case("insert-schemaless", t("InsertField$Value", **ALL_INSERTS), record=rec(SCHEMALESS_ENV))
case("insert-schemaless-overwrites", t("InsertField$Value", topic__field="name"), record=rec(SCHEMALESS_ENV))
case("insert-no-timestamp", t("InsertField$Value", **ALL_INSERTS), record=rec(timestamp=None))
case("insert-no-timestamp-required", t("InsertField$Value", timestamp__field="w!"), record=rec(timestamp=None))
case(
    "insert-no-timestamp-schemaless",
    t("InsertField$Value", **ALL_INSERTS),
    record=rec(plain({"a": 1}), timestamp=None),
)
case("insert-tombstone", t("InsertField$Value", **ALL_INSERTS), record=rec(None))
case("insert-null-with-schema", t("InsertField$Value", topic__field="t"), record=rec(env(opt(ORDER), None)))
case("insert-duplicate", t("InsertField$Value", topic__field="customer"))
case("insert-key", t("InsertField$Key", partition__field="p", offset__field="o"), record=rec(key=KEY_ENV))
case("insert-not-a-struct", t("InsertField$Value", topic__field="t"), record=rec(env(INT32, 1)))
case("insert-defaults", t("InsertField$Value", static__field="s", static__value="v"), record=rec(DEFAULTS_ENV))
case("insert-config-nothing", t("InsertField$Value"))
case(
    "insert-config-static-without-value",
    t("InsertField$Value", static__field="s"),
    own_message=OBJECT_PRINTED,
)

# -- InsertHeader ---------------------------------------------------------------------------------------------

for i, literal in enumerate(
    [
        "true",
        "FALSE",
        "42",
        "-7",
        "300",
        "70000",
        "3000000000",
        "1.5",
        "-0.25",
        "1e3",
        "abc",
        "  spaced  ",
        "2023-11-14",
        "22:13:20.123Z",
        "2023-11-14T22:13:20.123Z",
        "12345678901234567890",
        "0x1F",
        "+5",
        "1,2",
        '"quoted"',
    ]
):
    case(f"insertheader-literal-{i}", t("InsertHeader", header="h", value__literal=literal))
case(
    "insertheader-array-literal",
    t("InsertHeader", header="h", value__literal="[1, 2, 3]"),
    deviation="InsertHeader refuses array and map literals (docs/transforms.md, Differences from Connect)",
)
case("insertheader-keeps-existing", t("InsertHeader", header="trace", value__literal="again"))
case("insertheader-config-missing", t("InsertHeader", header="h"))

# -- MaskField ----------------------------------------------------------------------------------------------

case("mask-every-type", t("MaskField$Value", fields="id,customer,qty,small,mid,price,ratio,paid,tags,attrs"))
case("mask-logical", t("MaskField$Value", fields="day,at,ts"))
case("mask-decimal", t("MaskField$Value", fields="amount"), deviation=MASKED_DECIMAL)
case("mask-null-field", t("MaskField$Value", fields="note,count,code"))
case("mask-bytes", t("MaskField$Value", fields="raw"))
case("mask-struct", t("MaskField$Value", fields="address"))
case("mask-replacement-string", t("MaskField$Value", fields="customer,note", replacement="***"))
case("mask-replacement-numbers", t("MaskField$Value", fields="qty,id,small,mid,price,ratio", replacement="99"))
case("mask-replacement-decimal", t("MaskField$Value", fields="amount", replacement="99.50"))
case(
    "mask-replacement-decimal-scale",
    t("MaskField$Value", fields="amount", replacement="99"),
    deviation=MASKED_DECIMAL,
)
case("mask-replacement-not-a-number", t("MaskField$Value", fields="qty", replacement="abc"))
case("mask-replacement-boolean", t("MaskField$Value", fields="paid", replacement="x"))
case("mask-replacement-date", t("MaskField$Value", fields="day", replacement="x"))
case("mask-maps", t("MaskField$Value", fields="byInt,opt,nested"), record=rec(MAPS_ENV))
case("mask-defaults", t("MaskField$Value", fields="a,b,inner,c"), record=rec(DEFAULTS_ENV))
case("mask-key", t("MaskField$Key", fields="id"), record=rec(key=KEY_ENV))
case("mask-schemaless", t("MaskField$Value", fields="id,name,amount,active,tags,addr,n"), record=rec(SCHEMALESS_ENV))
case("mask-schemaless-missing", t("MaskField$Value", fields="missing,id"), record=rec(SCHEMALESS_ENV))
case(
    "mask-schemaless-replacement",
    t("MaskField$Value", fields="name,id,amount,big", replacement="12"),
    record=rec(SCHEMALESS_ENV),
)
case(
    "mask-schemaless-replacement-boolean",
    t("MaskField$Value", fields="active", replacement="12"),
    record=rec(SCHEMALESS_ENV),
)
case("mask-tombstone", t("MaskField$Value", fields="qty"), record=rec(None))
case("mask-null-with-schema", t("MaskField$Value", fields="qty"), record=rec(env(opt(ORDER), None)))
case("mask-config-empty-fields", t("MaskField$Value", fields=""))
case("mask-config-empty-replacement", t("MaskField$Value", fields="qty", replacement=""))

# -- RegexRouter ---------------------------------------------------------------------------------------------

case("regexrouter-groups", t("RegexRouter", regex="(.*)rs", replacement="$1r_v2"))
case("regexrouter-no-match", t("RegexRouter", regex="ord", replacement="x"))
case("regexrouter-named-group", t("RegexRouter", regex="(?<base>ord)(?<rest>.*)", replacement="${rest}-${base}"))
case("regexrouter-escaped-dollar", t("RegexRouter", regex="orders", replacement="\\$orders"))
case("regexrouter-lazy", t("RegexRouter", regex="(.*?)", replacement="[$1]"))
case("regexrouter-tombstone", t("RegexRouter", regex=".*", replacement="all"), record=rec(None))
case("regexrouter-config-bad-regex", t("RegexRouter", regex="(", replacement="x"), own_message=PYTHON_REGEX)
case("regexrouter-config-missing", t("RegexRouter", regex="x"))

# -- ReplaceField -------------------------------------------------------------------------------------------

case("replace-exclude", t("ReplaceField$Value", exclude="customer,raw,address,nope"))
case("replace-include", t("ReplaceField$Value", include="ts,id,address"))
case("replace-renames", t("ReplaceField$Value", renames="id:order_id,customer:who,nope:x"))
case("replace-all-three", t("ReplaceField$Value", include="id,qty,price", exclude="qty", renames="price:cost"))
case("replace-rename-onto-kept", t("ReplaceField$Value", renames="customer:id"))
case("replace-defaults", t("ReplaceField$Value", renames="a:aa,inner:in"), record=rec(DEFAULTS_ENV))
case(
    "replace-defaults-no-replace",
    t("ReplaceField$Value", renames="a:aa", replace__null__with__default="false"),
    record=rec(DEFAULTS_ENV),
)
case("replace-key", t("ReplaceField$Key", renames="id:key_id"), record=rec(key=KEY_ENV))
case("replace-schemaless", t("ReplaceField$Value", exclude="tags,addr", renames="name:who"), record=rec(SCHEMALESS_ENV))
case("replace-schemaless-include", t("ReplaceField$Value", include="ts,id,name,missing"), record=rec(SCHEMALESS_ENV))
case(
    "replace-schemaless-rename-onto-kept",
    t("ReplaceField$Value", renames="name:id"),
    record=rec(SCHEMALESS_ENV),
)
case("replace-tombstone", t("ReplaceField$Value", exclude="a"), record=rec(None))
case("replace-null-with-schema", t("ReplaceField$Value", exclude="qty"), record=rec(env(opt(ORDER), None)))
case("replace-not-a-struct", t("ReplaceField$Value", exclude="a"), record=rec(env(BOOLEAN, True)))
case(
    "replace-legacy-blacklist",
    t("ReplaceField$Value", blacklist="customer"),
    deviation="the legacy blacklist/whitelist keys are read as Kafka 2.8-3.9 read them; Kafka 4 ignores them "
    "(docs/transforms.md)",
)
case("replace-config-bad-rename", t("ReplaceField$Value", renames="a"))

# -- SetSchemaMetadata -----------------------------------------------------------------------------------------

case("setschema-name", t("SetSchemaMetadata$Value", schema__name="com.example.Renamed"))
case("setschema-version", t("SetSchemaMetadata$Value", schema__version="7"))
case("setschema-both", t("SetSchemaMetadata$Value", schema__name="n", schema__version="1"), record=rec(DEFAULTS_ENV))
case("setschema-key", t("SetSchemaMetadata$Key", schema__name="k"), record=rec(key=KEY_ENV))
case("setschema-primitive", t("SetSchemaMetadata$Value", schema__name="my.String"), record=rec(env(STRING, "x")))
case("setschema-logical", t("SetSchemaMetadata$Value", schema__version="5"), record=rec(env(TIMESTAMP, MILLIS)))
case("setschema-null-with-schema", t("SetSchemaMetadata$Value", schema__name="n"), record=rec(env(opt(ORDER), None)))
case("setschema-tombstone", t("SetSchemaMetadata$Value", schema__name="n"), record=rec(None))
case("setschema-schemaless", t("SetSchemaMetadata$Value", schema__name="n"), record=rec(SCHEMALESS_ENV))
case("setschema-config-neither", t("SetSchemaMetadata$Value"))
case("setschema-config-bad-version", t("SetSchemaMetadata$Value", schema__version="one"))

# -- TimestampConverter ----------------------------------------------------------------------------------------

FORMAT = "yyyy-MM-dd'T'HH:mm:ss.SSSZ"
case(
    "tsconv-unix-to-timestamp", t("TimestampConverter$Value", target__type="Timestamp"), record=rec(env(INT64, MILLIS))
)
case(
    "tsconv-timestamp-to-string",
    t("TimestampConverter$Value", target__type="string", format=FORMAT),
    record=rec(env(TIMESTAMP, MILLIS)),
)
case(
    "tsconv-string-to-timestamp",
    t("TimestampConverter$Value", target__type="Timestamp", format="yyyy-MM-dd HH:mm:ss"),
    record=rec(env(STRING, "2023-11-14 22:13:20")),
)
case(
    "tsconv-string-to-date",
    t("TimestampConverter$Value", target__type="Date", format="yyyy-MM-dd HH:mm:ss"),
    record=rec(env(opt(STRING), "2023-11-14 22:13:20")),
)
case("tsconv-timestamp-to-date", t("TimestampConverter$Value", target__type="Date"), record=rec(env(TIMESTAMP, MILLIS)))
case("tsconv-timestamp-to-time", t("TimestampConverter$Value", target__type="Time"), record=rec(env(TIMESTAMP, MILLIS)))
case("tsconv-date-to-unix", t("TimestampConverter$Value", target__type="unix"), record=rec(env(DATE, 19675)))
case(
    "tsconv-time-to-string",
    t("TimestampConverter$Value", target__type="string", format="HH:mm:ss.SSS a"),
    record=rec(env(TIME, 80_000_123)),
)
case(
    "tsconv-unix-seconds",
    t("TimestampConverter$Value", target__type="Timestamp", unix__precision="seconds"),
    record=rec(env(INT64, 1_700_000_000)),
)
case(
    "tsconv-to-unix-microseconds",
    t("TimestampConverter$Value", target__type="unix", unix__precision="microseconds"),
    record=rec(env(TIMESTAMP, MILLIS)),
)
case(
    "tsconv-unix-nanoseconds",
    t("TimestampConverter$Value", target__type="Timestamp", unix__precision="nanoseconds"),
    record=rec(env(INT64, 1_700_000_000_123_456_789)),
)
case(
    "tsconv-unix-seconds-to-seconds",
    t("TimestampConverter$Value", target__type="unix", unix__precision="seconds"),
    record=rec(env(INT64, -1_500)),
)
case("tsconv-field-to-string", t("TimestampConverter$Value", field="ts", target__type="string", format=FORMAT))
case("tsconv-field-to-date", t("TimestampConverter$Value", field="ts", target__type="Date"))
case("tsconv-field-date-to-timestamp", t("TimestampConverter$Value", field="day", target__type="Timestamp"))
case("tsconv-field-null", t("TimestampConverter$Value", field="count", target__type="Timestamp"))
case(
    "tsconv-field-string-to-unix",
    t("TimestampConverter$Value", field="when", target__type="unix", format="yyyy-MM-dd HH:mm:ss"),
    record=rec(SCHEMALESS_ENV),
)
case(
    "tsconv-schemaless-field-unix-to-string",
    t("TimestampConverter$Value", field="ts", target__type="string", format="yyyyMMdd"),
    record=rec(SCHEMALESS_ENV),
)
case(
    "tsconv-schemaless-whole-to-string",
    t("TimestampConverter$Value", target__type="string", format="EEE, d MMM yyyy HH:mm:ss Z"),
    record=rec(plain(MILLIS)),
)
case(
    "tsconv-schemaless-to-timestamp",
    t("TimestampConverter$Value", target__type="Timestamp"),
    record=rec(plain(MILLIS)),
    own_message="Connect's schemaless output is a java.util.Date, which JsonConverter cannot write; ours an aware "
    "datetime (docs/transforms.md)",
)
case(
    "tsconv-schemaless-missing-field",
    t("TimestampConverter$Value", field="nope", target__type="unix"),
    record=rec(SCHEMALESS_ENV),
)
case(
    "tsconv-unparsable",
    t("TimestampConverter$Value", target__type="unix", format="yyyy-MM-dd"),
    record=rec(env(STRING, "not a date")),
)
case("tsconv-boolean-source", t("TimestampConverter$Value", target__type="unix"), record=rec(env(BOOLEAN, True)))
case("tsconv-int32-source", t("TimestampConverter$Value", field="qty", target__type="unix"))
case("tsconv-schemaless-double", t("TimestampConverter$Value", target__type="unix"), record=rec(plain(1.5)))
case("tsconv-tombstone", t("TimestampConverter$Value", target__type="unix"), record=rec(None))
case(
    "tsconv-null-with-schema",
    t("TimestampConverter$Value", target__type="string", format="yyyy"),
    record=rec(env(opt(TIMESTAMP), None)),
)
case(
    "tsconv-field-null-struct",
    t("TimestampConverter$Value", field="ts", target__type="unix"),
    record=rec(env(opt(ORDER), None)),
)
case(
    "tsconv-key",
    t("TimestampConverter$Key", field="at", target__type="string", format="HH:mm"),
    record=rec(key=env(struct(("at", TIMESTAMP)), {"at": MILLIS})),
)
case("tsconv-config-target", t("TimestampConverter$Value", target__type="timestamp"))
case("tsconv-config-string-without-format", t("TimestampConverter$Value", target__type="string"))
case("tsconv-config-precision", t("TimestampConverter$Value", target__type="unix", unix__precision="minutes"))

# -- TimestampRouter ------------------------------------------------------------------------------------------

case("tsrouter-default", t("TimestampRouter"))
case("tsrouter-format", t("TimestampRouter", topic__format="${timestamp}_${topic}_x", timestamp__format="yyyy-MM HH"))
case(
    "tsrouter-no-timestamp",
    t("TimestampRouter"),
    record=rec(timestamp=None),
    own_message=OBJECT_PRINTED,
)

# -- ValueToKey ---------------------------------------------------------------------------------------------

case("valuetokey", t("ValueToKey", fields="id,customer"), record=rec(key=env(STRING, "old")))
case("valuetokey-struct-field", t("ValueToKey", fields="address,ts"))
case("valuetokey-defaults", t("ValueToKey", fields="a,inner"), record=rec(DEFAULTS_ENV))
case(
    "valuetokey-no-replace",
    t("ValueToKey", fields="a", replace__null__with__default="false"),
    record=rec(DEFAULTS_ENV),
)
case("valuetokey-schemaless", t("ValueToKey", fields="name,id,missing,addr"), record=rec(SCHEMALESS_ENV))
case("valuetokey-missing", t("ValueToKey", fields="id,nope"))
case("valuetokey-tombstone", t("ValueToKey", fields="id"), record=rec(None))
case("valuetokey-null-with-schema", t("ValueToKey", fields="id"), record=rec(env(opt(ORDER), None)))
case("valuetokey-config-empty", t("ValueToKey", fields=""))

# -- DropHeaders ----------------------------------------------------------------------------------------------

HEADERS = (TRACE, header("a", INT32, 1), header("b", STRING, "x"), header("a", INT32, 2))
case("dropheaders", t("DropHeaders", headers="a"), record=rec(headers=HEADERS))
case("dropheaders-several", t("DropHeaders", headers="a,trace,absent"), record=rec(headers=HEADERS))
case("dropheaders-none-present", t("DropHeaders", headers="x"), record=rec(headers=()))
case("dropheaders-config-empty", t("DropHeaders", headers=""))

# -- Filter and the predicates ---------------------------------------------------------------------------------

case("filter", t("Filter"))
case("filter-tombstone", t("Filter", when=p("RecordIsTombstone")), record=rec(None))
case("filter-tombstone-passes-value", t("Filter", when=p("RecordIsTombstone")))
case(
    "filter-null-with-schema-is-tombstone", t("Filter", when=p("RecordIsTombstone")), record=rec(env(opt(INT32), None))
)
case("filter-negated", t("Filter", when=p("RecordIsTombstone"), negate=True))
case("filter-negated-tombstone", t("Filter", when=p("RecordIsTombstone"), negate=True), record=rec(None))
case("filter-has-header", t("Filter", when=p("HasHeaderKey", name="trace")))
case("filter-has-header-absent", t("Filter", when=p("HasHeaderKey", name="other")))
case("filter-has-header-negated", t("Filter", when=p("HasHeaderKey", name="other"), negate=True))
case("filter-topic-matches", t("Filter", when=p("TopicNameMatches", pattern="ord.*")))
case("filter-topic-partial-match", t("Filter", when=p("TopicNameMatches", pattern="ord")))
case("filter-topic-alternation", t("Filter", when=p("TopicNameMatches", pattern="x|orders")))
case("predicate-config-bad-regex", t("Filter", when=p("TopicNameMatches", pattern="(")), own_message=PYTHON_REGEX)
case("predicate-config-empty-pattern", t("Filter", when=p("TopicNameMatches", pattern="")))
case("predicate-config-missing-name", t("Filter", when=p("HasHeaderKey")))
case(
    "predicate-guards-transform",
    t("InsertField$Value", when=p("TopicNameMatches", pattern="other.*"), topic__field="t"),
)
case(
    "predicate-negated-guards-transform",
    t("InsertField$Value", when=p("TopicNameMatches", pattern="other.*"), negate=True, topic__field="t"),
)
case(
    "predicate-tombstone-guard",
    t("MaskField$Value", when=p("RecordIsTombstone"), negate=True, fields="qty"),
    record=rec(None),
)

# -- settings as ConfigDef parses them: strings trimmed, lists of distinct non-empty names ---------------

case("config-string-trimmed-delimiter", t("Flatten$Value", delimiter=" _ "), record=rec(env(FLAT_ORDER, FLAT_PAYLOAD)))
case("config-string-trimmed-static", t("InsertField$Value", static__field=" s ", static__value="  v  "))
case("config-string-trimmed-regex", t("RegexRouter", regex=" ord(.*) ", replacement=" x$1 "))
case("config-string-trimmed-replacement", t("MaskField$Value", fields="customer", replacement="  *  "))
case("config-string-blank-replacement", t("MaskField$Value", fields="customer", replacement="   "))
case("config-list-duplicates-mask", t("MaskField$Value", fields="qty,qty,price"))
case("config-list-duplicates-valuetokey", t("ValueToKey", fields="id,customer,id"))
case(
    "config-list-duplicates-dropheaders", t("DropHeaders", headers="a,a"), record=rec(headers=(header("a", INT32, 1),))
)
case("config-list-duplicates-replace", t("ReplaceField$Value", exclude="qty,qty", include="id,qty,id,price"))
case("config-list-duplicates-headerfrom", t("HeaderFrom$Value", fields="id,id", headers="h,h", operation="copy"))
case("config-list-empty-element-mask", t("MaskField$Value", fields="qty,,price"))
case("config-list-empty-element-valuetokey", t("ValueToKey", fields="id,"))
case("config-list-empty-element-dropheaders", t("DropHeaders", headers=",a"))
case("config-list-empty-element-replace", t("ReplaceField$Value", exclude="qty,"))
case("config-list-empty-element-include", t("ReplaceField$Value", include=" , id"))
case("config-list-empty-replace-include", t("ReplaceField$Value", include=""))

# -- more data: where a value is not what the transform expects, and Java's conversions --------------------

case(
    "headerfrom-not-a-struct",
    t("HeaderFrom$Value", fields="a", headers="h", operation="copy"),
    record=rec(env(INT16, 5)),
)
case("mask-not-a-struct", t("MaskField$Value", fields="a"), record=rec(env(FLOAT32, 1.5)))
case("mask-schemaless-not-a-map", t("MaskField$Value", fields="a"), record=rec(plain(True)))
case(
    "tsconv-field-not-a-struct",
    t("TimestampConverter$Value", field="a", target__type="unix"),
    record=rec(env(array(INT32), [1])),
)
case("valuetokey-not-a-struct", t("ValueToKey", fields="a"), record=rec(env(map_of(STRING, STRING), {"a": "b"})))
case("valuetokey-schemaless-not-a-map", t("ValueToKey", fields="a"), record=rec(plain("text")))
case("replace-schemaless-not-a-map", t("ReplaceField$Value", exclude="a"), record=rec(plain(3.5)))
case("insert-schemaless-not-a-map", t("InsertField$Value", topic__field="t"), record=rec(plain([1])))
case("setschema-array", t("SetSchemaMetadata$Value", schema__name="a"), record=rec(env(array(INT32), [1, 2])))
case(
    "setschema-map", t("SetSchemaMetadata$Value", schema__version="2"), record=rec(env(map_of(STRING, INT32), {"a": 1}))
)
case("setschema-null-primitive", t("SetSchemaMetadata$Value", schema__name="a"), record=rec(env(opt(STRING), None)))
DECIMALS = struct(("d0", decimal_schema(0)), ("dneg", decimal_schema(-2)), ("dsmall", decimal_schema(10)))
DECIMALS_ENV = env(DECIMALS, {"d0": unscaled(-5), "dneg": unscaled(5), "dsmall": unscaled(12345)})
case("identity-decimals", record=rec(DECIMALS_ENV))
case("cast-decimals-to-string", t("Cast$Value", spec="d0:string,dneg:string,dsmall:string"), record=rec(DECIMALS_ENV))
case("cast-decimals-to-numbers", t("Cast$Value", spec="d0:int8,dneg:int32,dsmall:float32"), record=rec(DECIMALS_ENV))
case("mask-decimal-scale-zero", t("MaskField$Value", fields="d0"), record=rec(DECIMALS_ENV))
case(
    "mask-decimal-replacement-scale-zero",
    t("MaskField$Value", fields="d0", replacement="-12"),
    record=rec(DECIMALS_ENV),
)
NUMBERS = {
    "tiny": 1e-5,
    "huge": 1e21,
    "neg": -0.0,
    "f": 3.4e38,
    "i": 9_007_199_254_740_993,
    "s": " 42 ",
    "t": "TRUE",
    "e": "1e3",
    "hex": "0x10",
    "plus": "+7",
    "dot": "2.",
    "sp": " true",
}
case(
    "cast-schemaless-doubles-to-string",
    t("Cast$Value", spec="tiny:string,huge:string,neg:string,i:float64"),
    record=rec(plain(NUMBERS)),
)
case(
    "cast-schemaless-to-float32",
    t("Cast$Value", spec="f:float32,i:float32,huge:float32"),
    record=rec(plain(NUMBERS)),
    deviation="a float32 without a schema is held as the double of its value, and JsonConverter writes it with a "
    "double's digits (docs/transforms.md)",
)
case("cast-string-with-spaces", t("Cast$Value", spec="s:int32"), record=rec(plain(NUMBERS)))
case("cast-string-booleans", t("Cast$Value", spec="t:boolean,sp:boolean,e:boolean"), record=rec(plain(NUMBERS)))
case(
    "cast-string-exponent-to-float", t("Cast$Value", spec="e:float64,dot:float32,plus:int8"), record=rec(plain(NUMBERS))
)
case("cast-string-exponent-to-int", t("Cast$Value", spec="e:int64"), record=rec(plain(NUMBERS)))
case("cast-string-hex", t("Cast$Value", spec="hex:int16"), record=rec(plain(NUMBERS)))
case("cast-float-to-float32-string", t("Cast$Value", spec="ratio:float64,price:float32"))
case("cast-boolean-to-numbers", t("Cast$Value", spec="paid:int8"))
case("extract-v2-through-non-struct", t("ExtractField$Value", field="customer.x", field__syntax__version="V2"))
case("extract-v2-missing-step", t("ExtractField$Value", field="nope.x", field__syntax__version="V2"))
case(
    "extract-v2-schemaless-through-non-map",
    t("ExtractField$Value", field="name.x", field__syntax__version="V2"),
    record=rec(SCHEMALESS_ENV),
)
case("tsconv-negative-to-date", t("TimestampConverter$Value", target__type="Date"), record=rec(env(TIMESTAMP, -1)))
case("tsconv-negative-to-time", t("TimestampConverter$Value", target__type="Time"), record=rec(env(TIMESTAMP, -1)))
case(
    "tsconv-negative-to-seconds",
    t("TimestampConverter$Value", target__type="unix", unix__precision="seconds"),
    record=rec(env(TIMESTAMP, -1500)),
)
case(
    "tsconv-negative-microseconds",
    t("TimestampConverter$Value", target__type="Timestamp", unix__precision="microseconds"),
    record=rec(env(INT64, -1500)),
)
case(
    "tsconv-string-to-time",
    t("TimestampConverter$Value", target__type="Time", format="HH:mm:ss"),
    record=rec(env(STRING, "25:61:00 trailing")),
)
case(
    "tsconv-zone-letters",
    t("TimestampConverter$Value", field="ts", target__type="string", format="yyyy-MM-dd'T'HH:mm:ssXXX z Z"),
)
case(
    "tsconv-optional-field-default",
    t("TimestampConverter$Value", field="a", target__type="Timestamp"),
    record=rec(DEFAULTS_ENV),
)
case("regexrouter-missing-group", t("RegexRouter", regex="(ord)ers", replacement="$2"))
case(
    "predicate-java-only-regex",
    t("Filter", when=p("TopicNameMatches", pattern="\\p{Lower}+")),
    deviation="regular expressions are Python's: Java-only constructs such as \\p{...} are refused "
    "(docs/transforms.md)",
)
for i, literal in enumerate(["12:34", "2023-11-14,x", "-", "1.0", "a:b", "null", "2023-13-45", "9" * 19, "1e30"]):
    case(f"insertheader-tokens-{i}", t("InsertHeader", header="h", value__literal=literal))

# -- schemaless maps in Java's HashMap order: copies (new HashMap<>(map)) size their table for the source --

WIDE12 = plain({f"field_{i}": i for i in range(12)})  # the copy's table is twice the source's
WIDE24 = plain({f"k{i}": str(i) for i in range(24)} | {"ts": MILLIS})
case("hashmap-cast", t("Cast$Value", spec="field_3:string,new_a:int8,new_b:int8"), record=rec(WIDE12))
case("hashmap-cast-existing-only", t("Cast$Value", spec="field_3:string"), record=rec(WIDE12))
case("hashmap-mask", t("MaskField$Value", fields="field_1,zz,aa"), record=rec(WIDE12))
case(
    "hashmap-headerfrom-copy",
    t("HeaderFrom$Value", fields="field_2", headers="h", operation="copy"),
    record=rec(WIDE12),
)
case(
    "hashmap-headerfrom-move",
    t("HeaderFrom$Value", fields="field_2,field_9", headers="h,i", operation="move"),
    record=rec(WIDE12),
)
case("hashmap-tsconv", t("TimestampConverter$Value", field="field_5", target__type="unix"), record=rec(WIDE12))
case("hashmap-insert", t("InsertField$Value", topic__field="t", offset__field="o"), record=rec(WIDE12))
case("hashmap-replace", t("ReplaceField$Value", exclude="field_0", renames="field_1:one"), record=rec(WIDE12))
case("hashmap-valuetokey", t("ValueToKey", fields="field_11,field_1,field_7,absent"), record=rec(WIDE12))
case("hashmap-flatten", t("Flatten$Value"), record=rec(plain({"outer": WIDE12["payload"], "z": 1})))
case("hashmap-wide-cast", t("Cast$Value", spec="k1:int32,k20:float64,extra:string"), record=rec(WIDE24))
case("hashmap-wide-mask", t("MaskField$Value", fields="k3,k4,k5"), record=rec(WIDE24))
case(
    "hashmap-wide-tsconv",
    t("TimestampConverter$Value", field="ts", target__type="string", format="yyyy"),
    record=rec(WIDE24),
)
case("hashmap-key-schemaless", t("MaskField$Key", fields="field_0"), record=rec(key=WIDE12))

# -- more of each transform ------------------------------------------------------------------------------------

case("predicate-name-trimmed", t("Filter", when=p("HasHeaderKey", name=" trace ")))
case("predicate-pattern-trimmed", t("Filter", when=p("TopicNameMatches", pattern=" orders ")))
case("filter-topic-negated", t("Filter", when=p("TopicNameMatches", pattern="orders"), negate=True))
case("replace-swap", t("ReplaceField$Value", include="id,customer", renames="id:customer,customer:id"))
case("replace-include-new-name", t("ReplaceField$Value", include="who", renames="customer:who"))
case("replace-maps", t("ReplaceField$Value", exclude="opt", renames="byInt:ints"), record=rec(MAPS_ENV))
case("mask-replacement-array", t("MaskField$Value", fields="tags", replacement="x"))
case("mask-replacement-int8-range", t("MaskField$Value", fields="small", replacement="300"))
case("mask-replacement-float32", t("MaskField$Value", fields="ratio,price", replacement="0.1"))
case("cast-maps-untouched", t("Cast$Value", spec="byInt:string"), record=rec(MAPS_ENV))
case("insert-maps", t("InsertField$Value", offset__field="o!"), record=rec(MAPS_ENV))
case("hoist-maps", t("HoistField$Value", field="m"), record=rec(MAPS_ENV))
case("setschema-maps", t("SetSchemaMetadata$Value", schema__name="m", schema__version="2"), record=rec(MAPS_ENV))
case("flatten-maps-refused", t("Flatten$Value"), record=rec(MAPS_ENV))
case("flatten-schemaless-key", t("Flatten$Key", delimiter="/"), record=rec(key=SCHEMALESS_ENV))
case("extract-schemaless-key", t("ExtractField$Key", field="name"), record=rec(key=SCHEMALESS_ENV))
case("extract-tombstone-key", t("ExtractField$Key", field="id"), record=rec(key=None))
case(
    "extract-v2-escaped-backtick",
    t("ExtractField$Value", field="`a\\`b`.c", field__syntax__version="V2"),
    record=rec(plain({"a\\`b": {"c": 1}})),
)
case("extract-v2-array-step", t("ExtractField$Value", field="tags.x", field__syntax__version="V2"))
case("cast-whole-timestamp-to-string", t("Cast$Value", spec="string"), record=rec(env(TIMESTAMP, MILLIS)))
case("cast-whole-date-to-int64", t("Cast$Value", spec="int64"), record=rec(env(DATE, 19675)))
case("cast-negative-double-to-int8", t("Cast$Value", spec="int8"), record=rec(env(FLOAT64, -7.9)))
case("cast-long-to-float32", t("Cast$Value", spec="float32"), record=rec(env(INT64, 16_777_217)))
case("tsconv-identity", t("TimestampConverter$Value", target__type="Timestamp"), record=rec(env(TIMESTAMP, MILLIS)))
case(
    "tsconv-date-field-to-string",
    t("TimestampConverter$Value", field="day", target__type="string", format="EEEE d MMMM yyyy G"),
)
case("tsconv-time-to-date", t("TimestampConverter$Value", target__type="Date"), record=rec(env(TIME, 80_000_123)))
case("tsrouter-literal-format", t("TimestampRouter", topic__format="fixed", timestamp__format="yyyy"))
case("tsrouter-quoted-format", t("TimestampRouter", timestamp__format="'y'yyyy'-w'D"))
case(
    "headers-insert-then-test",
    t("InsertHeader", header="flag", value__literal="true"),
    t("Filter", when=p("HasHeaderKey", name="flag")),
)
case(
    "headers-drop-then-test",
    t("DropHeaders", headers="trace"),
    t("InsertField$Value", when=p("HasHeaderKey", name="trace"), negate=True, static__field="s", static__value="v"),
)

# -- MaskField's replacement as Kafka 4 converts it (Values.convertToByte ... convertToDouble) -------------------

for field_name, replacement in [
    ("small", "1.9"),
    ("qty", "2147483648"),
    ("mid", "-40000"),
    ("id", "-12.99"),
    ("price", "1e400"),
    ("ratio", "1e39"),
    ("ratio", "-0.3"),
    ("amount", "12.30"),
    ("qty", "true"),
    ("id", "1e70"),
]:
    case(
        f"mask-replacement-{field_name}-{replacement}",
        t("MaskField$Value", fields=field_name, replacement=replacement),
    )
case(
    "mask-schemaless-replacement-decimal",
    t("MaskField$Value", fields="id,amount", replacement="12.5"),
    record=rec(SCHEMALESS_ENV),
)

# -- docs, parameters and names on fields, through the transforms that rebuild schemas ---------------------------

DOCUMENTED = struct(
    ("id", prim("int64", doc="the id", parameters={"p": "1"})),
    ("when", prim("int64", name="org.apache.kafka.connect.data.Timestamp", version=1, doc="moment")),
    (
        "inner",
        opt(
            struct(
                ("a", prim("string", doc="inner a")),
                name="com.example.Inner",
                version=4,
                doc="nested",
                parameters={"x": "y", "b": "c"},
            )
        ),
    ),
    ("s", opt(prim("string", name="com.example.Text", version=2, default="dflt"))),
    name="com.example.Documented",
    version=7,
    doc="top",
    parameters={"k": "v"},
)
DOCUMENTED_ENV = env(DOCUMENTED, {"id": 1, "when": MILLIS, "inner": {"a": "x"}, "s": None})
case("identity-documented", record=rec(DOCUMENTED_ENV))
case("documented-replace", t("ReplaceField$Value", renames="id:key"), record=rec(DOCUMENTED_ENV))
case("documented-flatten", t("Flatten$Value"), record=rec(DOCUMENTED_ENV))
case("documented-cast", t("Cast$Value", spec="id:string,s:int32"), record=rec(DOCUMENTED_ENV))
case("documented-cast-default", t("Cast$Value", spec="s:string"), record=rec(DOCUMENTED_ENV))
case("documented-tsconv", t("TimestampConverter$Value", field="when", target__type="unix"), record=rec(DOCUMENTED_ENV))
case("documented-hoist", t("HoistField$Value", field="h"), record=rec(DOCUMENTED_ENV))
case("documented-extract", t("ExtractField$Value", field="inner"), record=rec(DOCUMENTED_ENV))
case("documented-setschema", t("SetSchemaMetadata$Value", schema__version="8"), record=rec(DOCUMENTED_ENV))
case("documented-insert", t("InsertField$Value", timestamp__field="t"), record=rec(DOCUMENTED_ENV))
case(
    "documented-headerfrom-move",
    t("HeaderFrom$Value", fields="s,inner", headers="s,i", operation="move"),
    record=rec(DOCUMENTED_ENV),
)
case("documented-valuetokey", t("ValueToKey", fields="when,s"), record=rec(DOCUMENTED_ENV))
case("documented-mask", t("MaskField$Value", fields="s,id"), record=rec(DOCUMENTED_ENV))
case("cast-whole-decimal-to-double", t("Cast$Value", spec="float64"), record=rec(env(DECIMAL2, unscaled(150))))
case("cast-whole-date-to-string", t("Cast$Value", spec="string"), record=rec(env(opt(DATE), 19675)))
case("insertheader-escaped-colon", t("InsertHeader", header="h", value__literal="22\\:13\\:20.123Z"))

# -- headers: Values.convertToString of nested values -----------------------------------------------------------

case(
    "identity-headers-nested",
    record=rec(
        headers=[
            header("arr-structs", array(struct(("a", INT32), ("s", opt(STRING)))), [{"a": 1, "s": 'x"y'}, {"a": 2}]),
            header("arr-null", array(opt(STRING)), ["a", None, "c,d"]),
            header("arr-bytes", array(BYTES), [base64.b64encode(b"hi").decode()]),
            header("arr-dates", array(DATE), [0, 19675]),
            header("arr-decimals", array(DECIMAL2), [unscaled(1), unscaled(-250)]),
            header("map-arrays", map_of(STRING, array(INT64)), {"a": [1, 2], "b": []}),
            header("map-null", map_of(STRING, opt(FLOAT64)), {"a": None}),
            header("map-int-keys", map_of(INT8, STRING), [[1, "x"], [2, "y"]]),
            header(
                "struct-nested", struct(("m", map_of(STRING, BOOLEAN)), ("t", TIMESTAMP)), {"m": {"k": True}, "t": 1}
            ),
            header("empty-string", STRING, ""),
            header("empty-array", array(STRING), []),
            header("schemaless-list", None, [1, "a", None, 2.5]),
        ]
    ),
)
case(
    "headerfrom-nested-values",
    t("HeaderFrom$Value", fields="tags,attrs,address", headers="t,a,s", operation="copy"),
    record=rec(env(ORDER, {**ORDER_PAYLOAD, "tags": [], "attrs": {}})),
)

# -- name collisions ---------------------------------------------------------------------------------------------

COLLIDING = struct(("a.b", INT32), ("a", struct(("b", INT32))))
case("flatten-collision", t("Flatten$Value"), record=rec(env(COLLIDING, {"a.b": 1, "a": {"b": 2}})))
case("flatten-collision-schemaless", t("Flatten$Value"), record=rec(plain({"a.b": 1, "a": {"b": 2}})))
case("cast-same-field-twice", t("Cast$Value", spec="qty:int8, qty : string"))
case("hoist-empty-name", t("HoistField$Value", field=""), record=rec(env(INT32, 1)))
case("insert-same-name-twice", t("InsertField$Value", topic__field="x", offset__field="x"))
case(
    "insert-same-name-twice-schemaless",
    t("InsertField$Value", topic__field="x", offset__field="x"),
    record=rec(SCHEMALESS_ENV),
)

case("insert-empty-name", t("InsertField$Value", topic__field=" "))
case("insert-empty-name-schemaless", t("InsertField$Value", topic__field=""), record=rec(SCHEMALESS_ENV))
case("replace-config-rename-trailing-colon", t("ReplaceField$Value", renames="customer:"))
case("replace-rename-empty-old-name", t("ReplaceField$Value", renames=":x"))
case("valuetokey-same-field-twice", t("ValueToKey", fields="id, id"), record=rec(SCHEMALESS_ENV))

case("tsconv-field-missing-with-schema", t("TimestampConverter$Value", field="nope", target__type="unix"))
case(
    "flatten-array-of-structs",
    t("Flatten$Value"),
    record=rec(env(struct(("xs", array(struct(("a", INT32))))), {"xs": [{"a": 1}]})),
)
case(
    "tsconv-week-year-pattern",
    t("TimestampConverter$Value", field="ts", target__type="string", format="YYYY-'W'ww"),
    deviation="the SimpleDateFormat letters Y w W F are refused (docs/transforms.md)",
)

# -- chains -----------------------------------------------------------------------------------------------------

case(
    "chain-value-to-key-extract",
    t("ValueToKey", fields="id"),
    t("ExtractField$Key", field="id"),
)
case(
    "chain-flatten-cast-replace",
    t("Flatten$Value", delimiter="_"),
    t("Cast$Value", spec="address_geo_lat:string,id:int32"),
    t("ReplaceField$Value", exclude="extra_level_d", renames="address_city:city"),
    record=rec(env(FLAT_ORDER, FLAT_PAYLOAD)),
)
case(
    "chain-insert-mask-rename-schema",
    t("InsertField$Value", offset__field="off", static__field="src", static__value="kafka"),
    t("MaskField$Value", fields="customer,off"),
    t("SetSchemaMetadata$Value", schema__name="com.example.Masked", schema__version="9"),
)
case(
    "chain-headers",
    t("HeaderFrom$Value", fields="id,customer", headers="id,who", operation="move"),
    t("DropHeaders", headers="trace"),
    t("InsertHeader", header="source", value__literal="orders-db"),
    t("Filter", when=p("HasHeaderKey", name="missing")),
)
case(
    "chain-hoist-flatten",
    t("HoistField$Value", field="order"),
    t("Flatten$Value"),
    t("ReplaceField$Value", include="order.id,order.address.geo.lat"),
)
case(
    "chain-filter-stops",
    t("Filter", when=p("TopicNameMatches", pattern="orders")),
    t("Cast$Value", spec="customer:int32"),
)
case(
    "chain-fails-in-second-stage",
    t("ReplaceField$Value", renames="numeric:n"),
    t("Cast$Value", spec="customer:int32"),
)
case(
    "chain-route-and-convert",
    t("TimestampConverter$Value", field="ts", target__type="string", format="yyyy-MM-dd"),
    t("RegexRouter", regex="orders", replacement="orders-by-day"),
    t("TimestampRouter", topic__format="${topic}.${timestamp}", timestamp__format="yyyy"),
)
case(
    "chain-flatten-null-then-no-default",
    t("Flatten$Value"),
    t("ExtractField$Value", field="extra.level.deep", replace__null__with__default="false"),
    record=rec(env(FLAT_ORDER, {**FLAT_PAYLOAD, "extra": None})),
)
case(
    "chain-flatten-null-then-default",
    t("Flatten$Value"),
    t("ExtractField$Value", field="extra.level.deep"),
    record=rec(env(FLAT_ORDER, {**FLAT_PAYLOAD, "extra": None})),
)
case(
    "chain-schemaless",
    t("Flatten$Value", delimiter="_"),
    t("InsertField$Value", topic__field="topic", partition__field="partition"),
    t("ReplaceField$Value", exclude="tags"),
    t("Cast$Value", spec="addr_geo_lat:string"),
    t("HeaderFrom$Value", fields="id", headers="id", operation="move"),
    record=rec(SCHEMALESS_ENV),
)
case(
    "chain-key-and-value",
    t("ValueToKey", fields="id,customer"),
    t("Cast$Key", spec="id:string"),
    t("SetSchemaMetadata$Key", schema__name="com.example.Key"),
    t("HoistField$Value", field="v"),
)


def _params() -> list:
    out = []
    for c in CASES:
        marks = [pytest.mark.xfail(strict=True, reason=c.deviation)] if c.deviation else []
        out.append(pytest.param(c, id=c.id, marks=marks))
    return out


@pytest.fixture(scope="module")
def kafka() -> dict[str, dict]:
    """Kafka's answer to every case, from one JVM."""
    return dict(zip((c.id for c in CASES), kafka_answers([c.request for c in CASES]), strict=True))


@pytest.mark.parametrize("case", _params())
def test_ours_is_kafkas(case: Case, kafka: dict[str, dict]) -> None:
    theirs, ours = kafka[case.id], our_answer(case.request)
    compare_messages = case.own_message is None
    if case.own_message is not None:
        assert "error" in theirs or "config_error" in theirs, f"Kafka does not fail here: {theirs}"
    assert canonical(ours, messages=compare_messages) == canonical(theirs, messages=compare_messages)


def test_the_corpus_covers_every_transform_and_predicate() -> None:
    used = {stage["class"] for c in CASES for stage in c.transforms}
    used |= {stage["predicate"]["class"] for c in CASES for stage in c.transforms if "predicate" in stage}
    ours = {cls.class_name for cls in TRANSFORMS if cls.class_name.startswith(PACKAGE)}
    ours |= {cls.class_name for cls in PREDICATES}
    assert ours <= used
    assert len({c.id for c in CASES}) == len(CASES)
