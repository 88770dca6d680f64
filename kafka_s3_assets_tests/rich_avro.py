"""A registry schema with the constructs whose Avro file schema differs from the writer schema (enum,
a union whose null is not first, a nullable field with a default, fixed, decimals, docs, a record used
twice), some values of it, and the file schema the reference writes for it (registry version 1, the
converter's and the sink's default AvroData settings). Shared by unit and integration tests."""

from __future__ import annotations

import datetime
from decimal import Decimal

ADDRESS = {
    "type": "record",
    "name": "Address",
    "doc": "a postal address",
    "fields": [{"name": "street", "type": "string", "doc": "street and number"}, {"name": "zip", "type": "string"}],
}

RICH_SCHEMA = {
    "type": "record",
    "name": "Order",
    "namespace": "com.acme",
    "doc": "an order",
    "fields": [
        {"name": "id", "type": "long"},
        {
            "name": "status",
            "type": {
                "type": "enum",
                "name": "Status",
                "doc": "where the order is",
                "symbols": ["NEW", "SHIPPED", "DONE"],
                "default": "NEW",
            },
        },
        {"name": "code", "type": ["int", "null", "string"]},
        {"name": "note", "type": ["string", "null"], "default": "none"},
        {"name": "hash", "type": {"type": "fixed", "name": "Hash", "size": 4}},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
        {
            "name": "price",
            "type": {
                "type": "fixed",
                "name": "Money",
                "size": 8,
                "logicalType": "decimal",
                "precision": 18,
                "scale": 4,
            },
        },
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "qty", "type": {"type": "int", "connect.type": "int8"}},
        {"name": "ship", "type": ADDRESS, "doc": "where to ship"},
        {"name": "bill", "type": ["null", "Address"], "default": None},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": "long"}},
    ],
}

_DECIMAL = "org.apache.kafka.connect.data.Decimal"
_ADDRESS_PARAMETERS = (
    '{"io.confluent.connect.avro.record.doc":"a postal address",'
    '"io.confluent.connect.avro.field.doc.street":"street and number"}'
)
# Derived from AvroData (see unit/test_avro_file_schema.py for the rule behind each construct). Worth noting:
# `code` and `note` put null first; `price`, a fixed decimal, becomes the fixed
# org.apache.kafka.connect.data.Decimal and, its Connect name (Decimal) having been seen at `amount`,
# its field carries its connect.parameters; `bill` refers to Address and carries its parameters too.
RICH_FILE_SCHEMA = (
    '{"type":"record","name":"Order","namespace":"com.acme","doc":"an order","fields":['
    '{"name":"id","type":"long"},'
    '{"name":"status","type":{"type":"enum","name":"Status","doc":"where the order is",'
    '"symbols":["NEW","SHIPPED","DONE"],"default":"NEW","connect.parameters":{'
    '"io.confluent.connect.avro.enum.doc.Status":"where the order is",'
    '"io.confluent.connect.avro.enum.default.Status":"NEW","io.confluent.connect.avro.Enum":"com.acme.Status",'
    '"io.confluent.connect.avro.Enum.NEW":"NEW","io.confluent.connect.avro.Enum.SHIPPED":"SHIPPED",'
    '"io.confluent.connect.avro.Enum.DONE":"DONE"},"connect.name":"com.acme.Status"}},'
    '{"name":"code","type":["null","int","string"],"default":null},'
    '{"name":"note","type":["null","string"],"default":null},'
    '{"name":"hash","type":{"type":"fixed","name":"Hash","size":4,"connect.parameters":{"connect.fixed.size":"4"},'
    '"connect.name":"com.acme.Hash"}},'
    '{"name":"amount","type":{"type":"bytes","scale":2,"precision":10,"connect.version":1,'
    f'"connect.parameters":{{"scale":"2","connect.decimal.precision":"10"}},"connect.name":"{_DECIMAL}",'
    '"logicalType":"decimal"}},'
    '{"name":"price","type":{"type":"fixed","name":"Decimal","namespace":"org.apache.kafka.connect.data","size":8,'
    '"scale":4,"precision":18,"connect.version":1,"connect.parameters":{"scale":"4",'
    f'"connect.decimal.precision":"18","connect.fixed.size":"8"}},"connect.name":"{_DECIMAL}",'
    '"logicalType":"decimal"},"connect.parameters":{"scale":"4","connect.decimal.precision":"18",'
    '"connect.fixed.size":"8"}},'
    '{"name":"day","type":{"type":"int","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Date",'
    '"logicalType":"date"}},'
    '{"name":"at","type":{"type":"long","connect.version":1,'
    '"connect.name":"org.apache.kafka.connect.data.Timestamp","logicalType":"timestamp-millis"}},'
    '{"name":"qty","type":{"type":"int","connect.type":"int8"}},'
    '{"name":"ship","type":{"type":"record","name":"Address","doc":"a postal address","fields":['
    '{"name":"street","type":"string","doc":"street and number"},{"name":"zip","type":"string"}],'
    f'"connect.parameters":{_ADDRESS_PARAMETERS},"connect.name":"com.acme.Address"}},"doc":"where to ship"}},'
    f'{{"name":"bill","type":["null","Address"],"default":null,"connect.parameters":{_ADDRESS_PARAMETERS}}},'
    '{"name":"tags","type":{"type":"array","items":"string"}},'
    '{"name":"attrs","type":{"type":"map","values":"long"}}],'
    '"connect.version":1,"connect.parameters":{"io.confluent.connect.avro.record.doc":"an order",'
    '"io.confluent.connect.avro.field.doc.ship":"where to ship"},"connect.name":"com.acme.Order"}'
)


def rich_values(count: int = 6) -> list[dict]:
    """Values of RICH_SCHEMA (logical types as Python objects, as fastavro and Confluent's serializer
    take them), covering every branch of each union."""
    out = []
    for i in range(count):
        address = {"street": f"{i} Main St", "zip": f"{75000 + i}"}
        out.append(
            {
                "id": 1000 + i,
                "status": ("NEW", "SHIPPED", "DONE")[i % 3],
                "code": (i, None, f"c{i}")[i % 3],
                "note": None if i % 2 else f"note {i}",
                "hash": bytes([i, i + 1, i + 2, 255]),
                "amount": Decimal(f"{i * 7}.{i:02d}") * (-1 if i % 4 == 3 else 1),
                "price": Decimal(f"{i}.{i * 3:04d}"),
                "day": datetime.date(2024, 1, 1) + datetime.timedelta(days=i),
                "at": datetime.datetime(2024, 1, 1, 12, 0, i, 123000, tzinfo=datetime.UTC),
                "qty": i - 3,
                "ship": address,
                "bill": None if i % 2 else {"street": "Billing Rd", "zip": "10115"},
                "tags": [f"t{j}" for j in range(i % 3)],
                "attrs": {f"k{j}": j * 10 for j in range(i % 2 + 1)},
            }
        )
    return out
