"""PROTOBUF and JSON schemas in the local schema registry: references, ids, validation, the serialized
format and persistence; store and routing only, no HTTP server (protoc runs as a child process)."""

from __future__ import annotations

import base64
import json

import pytest
from google.protobuf import descriptor_pb2, timestamp_pb2

from kafka_s3_assets.devstack.registry_compat import default_checker
from kafka_s3_assets.devstack.registry_errors import RegistryError
from kafka_s3_assets.devstack.registry_persistence import RegistryStateFile
from kafka_s3_assets.devstack.registry_server import RegistryApi
from kafka_s3_assets.devstack.registry_store import RegistryStore, SchemaRequest

pytestmark = [pytest.mark.unit]

COMMON = 'syntax = "proto3";\npackage acme.common;\n\nmessage Money {\n  string currency = 1;\n  int64 units = 2;\n}\n'
ORDER = """syntax = "proto3";
package acme.v1;

import "google/protobuf/timestamp.proto";
import "acme/common.proto";

message Header { string source = 1; }

message Order {
  string order_id = 1;
  acme.common.Money total = 2;
  google.protobuf.Timestamp created_at = 3;
  map<string, int64> counts = 4;
}
"""
COMMON_REF = {"name": "acme/common.proto", "subject": "acme/common.proto", "version": 1}

ADDRESS = json.dumps(
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}, separators=(",", ":")
)
CUSTOMER = json.dumps(
    {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "Customer",
        "type": "object",
        "properties": {"id": {"type": "integer"}, "address": {"$ref": "address.json"}},
    }
)
ADDRESS_REF = {"name": "address.json", "subject": "address", "version": 1}


def protobuf(text: str, *references: dict) -> SchemaRequest:
    return SchemaRequest(schema=text, schema_type="PROTOBUF", references=tuple(references))


def json_schema(text: str, *references: dict) -> SchemaRequest:
    return SchemaRequest(schema=text, schema_type="JSON", references=tuple(references))


def descriptor(serialized: str) -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto()
    proto.ParseFromString(base64.b64decode(serialized))
    return proto


def refused(call, *args, **kwargs) -> RegistryError:
    with pytest.raises(RegistryError) as excinfo:
        call(*args, **kwargs)
    return excinfo.value


@pytest.fixture
def store() -> RegistryStore:
    return RegistryStore(checker=default_checker())


@pytest.fixture
def with_common(store) -> RegistryStore:
    store.register("acme/common.proto", protobuf(COMMON))
    return store


# ---- registration, ids and references -------------------------------------------------------------------


def test_protobuf_text_is_compiled_and_served_serialized(with_common):
    order = with_common.register("orders-value", protobuf(ORDER, COMMON_REF))
    assert order.to_json()["schemaType"] == "PROTOBUF"
    assert order.to_json()["references"] == [COMMON_REF]
    assert with_common.schema_text(order.schema, None) == ORDER  # stored and served as given
    served = descriptor(with_common.schema_text(order.schema, "serialized"))
    assert served.name == "default"  # the name Confluent gives a schema it serialises
    assert served.package == "acme.v1"
    assert [m.name for m in served.message_type] == ["Header", "Order"]
    assert list(served.dependency) == ["google/protobuf/timestamp.proto", "acme/common.proto"]
    fields = {f.name: f.type_name for f in served.message_type[1].field}
    assert fields["total"] == ".acme.common.Money" and fields["created_at"] == ".google.protobuf.Timestamp"
    assert not any(f.HasField("json_name") for f in served.message_type[1].field)  # as generated code has it
    # Other formats, and other types, are the stored text.
    assert with_common.schema_text(order.schema, "ignore_extensions") == ORDER


def test_the_descriptor_of_a_proto_text_is_the_same_schema(with_common):
    """confluent-kafka registers a base64 FileDescriptorProto: the same file as .proto text is one id."""
    text = with_common.register("orders-value", protobuf(ORDER, COMMON_REF))
    serialized = with_common.schema_text(text.schema, "serialized")
    renamed = descriptor(serialized)
    renamed.name = "acme/order.proto"  # as generated code names it
    given = base64.b64encode(renamed.SerializeToString()).decode()
    again = with_common.register("orders-by-descriptor-value", protobuf(given, COMMON_REF))
    assert again.id == text.id
    assert with_common.lookup("orders-value", protobuf(given, COMMON_REF)).version == 1
    # A schema first registered as a descriptor is served as stored.
    timestamp = base64.b64encode(timestamp_pb2.DESCRIPTOR.serialized_pb).decode()
    stored = with_common.register("google/protobuf/timestamp.proto", protobuf(timestamp))
    assert with_common.schema_text(stored.schema, None) == timestamp
    assert with_common.schema_text(stored.schema, "serialized") == timestamp


def test_ids_are_shared_for_the_same_schema_type_and_references(with_common):
    first = with_common.register("a-value", protobuf(ORDER, COMMON_REF))
    assert with_common.register("a-value", protobuf(ORDER, COMMON_REF)).version == 1  # a lookup
    assert with_common.register("b-value", protobuf("  " + ORDER.replace("\n", "\n\n"), COMMON_REF)).id == first.id
    # Another version of the referenced schema makes another schema, even with identical text.
    with_common.register("acme/common.proto", protobuf(COMMON.replace("int64 units = 2;", "int64 units = 3;")))
    other = with_common.register("c-value", protobuf(ORDER, {**COMMON_REF, "version": 2}))
    assert other.id != first.id
    # The same text as another type is another schema.
    as_json = with_common.register("d-value", json_schema('{"type":"string"}'))
    as_avro = with_common.register("e-value", SchemaRequest(schema='{"type":"string"}'))
    assert as_json.id != as_avro.id
    assert as_json.to_json()["schemaType"] == "JSON" and "schemaType" not in as_avro.to_json()


def test_json_schema_with_a_reference(store):
    address = store.register("address", json_schema(ADDRESS))
    customer = store.register("customers-value", json_schema(CUSTOMER, ADDRESS_REF))
    assert customer.to_json()["references"] == [ADDRESS_REF]
    assert store.register("other-value", json_schema(json.dumps(json.loads(CUSTOMER)), ADDRESS_REF)).id == customer.id
    assert store.register("plain-value", json_schema(CUSTOMER)).id != customer.id  # without the reference
    assert store.referenced_by("address", 1) == [customer.id]
    assert store.versions_of_id(address.id) == [("address", 1)]
    assert store.schema_text(customer.schema, "serialized") == CUSTOMER  # only PROTOBUF has that format


def test_references_must_resolve_when_registering(store):
    missing = refused(store.register, "orders-value", protobuf(ORDER, COMMON_REF))
    assert missing.error_code == 42201 and "acme/common.proto" in missing.message
    assert refused(store.register, "customers-value", json_schema(CUSTOMER, ADDRESS_REF)).error_code == 42201
    store.register("address", json_schema(ADDRESS))
    assert refused(store.register, "c-value", json_schema(CUSTOMER, {**ADDRESS_REF, "version": 2})).error_code == 42201
    # A .proto import that no reference provides (and that is no built-in) fails to compile.
    store.register("acme/common.proto", protobuf(COMMON))
    unreferenced = refused(store.register, "orders-value", protobuf(ORDER))
    assert unreferenced.error_code == 42201 and 'Import "acme/common.proto" was not found' in unreferenced.message
    # Soft-deleted versions cannot be referenced by a new schema.
    store.register("gone", json_schema(ADDRESS))
    store.delete_version("gone", 1)
    gone = {"name": "address.json", "subject": "gone", "version": 1}
    assert refused(store.register, "d-value", json_schema(CUSTOMER, gone)).error_code == 42201


def test_latest_reference_is_stored_as_its_version_and_referenced_versions_stay(with_common):
    latest = {**COMMON_REF, "version": -1}
    order = with_common.register("orders-value", protobuf(ORDER, latest))
    assert order.schema.references == [COMMON_REF]
    assert with_common.lookup("orders-value", protobuf(ORDER, latest)).id == order.id
    assert with_common.lookup("orders-value", protobuf(ORDER, COMMON_REF)).id == order.id
    assert refused(with_common.delete_version, "acme/common.proto", 1).error_code == 42206
    assert refused(with_common.delete_subject, "acme/common.proto").error_code == 42206


# ---- invalid schemas --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "message {",
        'syntax = "proto3"; message A { NoSuchType x = 1; }',
        "bm90IGEgZGVzY3JpcHRvcg==",  # base64, but not a FileDescriptorProto, nor .proto text
    ],
)
def test_invalid_protobuf_is_42201(store, text):
    error = refused(store.register, "x-value", protobuf(text))
    assert error.error_code == 42201 and error.http_status == 422
    assert "__registry_schema__" not in error.message and "/tmp/" not in error.message


def test_a_descriptor_whose_types_do_not_resolve_is_42201(store):
    broken = descriptor_pb2.FileDescriptorProto(name="broken.proto", package="p", syntax="proto3")
    message = broken.message_type.add(name="A")
    message.field.add(name="x", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE, type_name=".p.B")
    error = refused(store.register, "x-value", protobuf(base64.b64encode(broken.SerializeToString()).decode()))
    assert error.error_code == 42201 and "does not build" in error.message
    importing = descriptor_pb2.FileDescriptorProto(name="i.proto", dependency=["elsewhere/x.proto"])
    error = refused(store.register, "y-value", protobuf(base64.b64encode(importing.SerializeToString()).decode()))
    assert error.error_code == 42201 and "elsewhere/x.proto" in error.message


@pytest.mark.parametrize("text", ["[1, 2]", '"string"', "3", '{"type": 5}', '{"required": "id"}', "{not json"])
def test_invalid_json_schema_is_42201(store, text):
    assert refused(store.register, "x-value", json_schema(text)).error_code == 42201


@pytest.mark.parametrize("text", ["true", "false", "{}", '{"type": "object", "connect.type": "map"}'])
def test_json_schemas_may_be_booleans_or_carry_other_keywords(store, text):
    assert store.register("x-value", json_schema(text)).schema.schema_type == "JSON"


def test_unknown_schema_type_is_42201(store):
    with pytest.raises(RegistryError) as excinfo:
        SchemaRequest.from_json({"schema": "{}", "schemaType": "XML"})
    assert excinfo.value.error_code == 42201


# ---- compatibility: not checked for these types (registry_compat) ----------------------------------------


def test_protobuf_and_json_changes_are_checked_under_backward_and_accepted_under_none(with_common):
    # A string field retyped to int32 and a property retyped string -> integer: incompatible for Confluent's
    # registry (FIELD_SCALAR_KIND_CHANGED, TYPE_CHANGED), so refused with 409 under the default BACKWARD.
    with_common.register("orders-value", protobuf(ORDER, COMMON_REF))
    changed = ORDER.replace("string order_id = 1;", "int32 order_id = 1;").replace("map<string, int64> counts = 4;", "")
    assert with_common.check_compatibility("orders-value", None, protobuf(changed, COMMON_REF)) != []
    assert refused(with_common.register, "orders-value", protobuf(changed, COMMON_REF)).http_status == 409
    with_common.register("c-value", json_schema('{"type":"object","properties":{"a":{"type":"string"}}}'))
    retyped = json_schema('{"type":"object","properties":{"a":{"type":"integer"}}}')
    assert refused(with_common.register, "c-value", retyped).http_status == 409
    # A subject keeps its type, as with Confluent.
    assert with_common.check_compatibility("c-value", None, SchemaRequest(schema='"string"'))
    for subject in ("orders-value", "c-value"):
        with_common.set_subject_config(subject, {"compatibility": "NONE"})
    assert with_common.register("orders-value", protobuf(changed, COMMON_REF)).version == 2
    assert with_common.register("c-value", retyped).version == 2


# ---- persistence and routes --------------------------------------------------------------------------------


def test_types_references_and_ids_survive_a_restart(tmp_path, with_common):
    order = with_common.register("orders-value", protobuf(ORDER, COMMON_REF))
    serialized = with_common.schema_text(order.schema, "serialized")
    with_common.register("address", json_schema(ADDRESS))
    customer = with_common.register("customers-value", json_schema(CUSTOMER, ADDRESS_REF))
    state = RegistryStateFile(tmp_path)
    state.save(with_common)

    loaded = state.load(default_checker())
    assert loaded.schema_by_id(order.id).to_json() == order.schema.to_json()
    assert loaded.schema_by_id(customer.id).to_json()["references"] == [ADDRESS_REF]
    assert loaded.schema_text(loaded.schema_by_id(order.id), "serialized") == serialized  # compiled again
    assert loaded.register("orders-again-value", protobuf(serialized, COMMON_REF)).id == order.id
    assert loaded.register("customers-value", json_schema(CUSTOMER, ADDRESS_REF)).version == 1
    assert refused(loaded.delete_subject, "address").error_code == 42206


def test_routes_take_format_deleted_and_referencedby(with_common):
    api = RegistryApi(with_common, state_file=None)
    registered = api.handle(
        "POST",
        "/subjects/orders-value/versions",
        "",
        {"schema": ORDER, "schemaType": "PROTOBUF", "references": [COMMON_REF]},
    ).payload
    schema_id = registered["id"]
    by_id = api.handle("GET", f"/schemas/ids/{schema_id}", "subject=orders-value&format=serialized", None).payload
    assert by_id["schemaType"] == "PROTOBUF" and by_id["references"] == [COMMON_REF]
    assert descriptor(by_id["schema"]).message_type[1].name == "Order"
    assert api.handle("GET", f"/schemas/ids/{schema_id}", "", None).payload["schema"] == ORDER
    version = api.handle("GET", "/subjects/orders-value/versions/1", "deleted=true&format=serialized", None).payload
    assert version["schema"] == by_id["schema"] and version["version"] == 1
    common = api.handle("GET", "/subjects/acme%2Fcommon.proto/versions/latest", "format=serialized", None).payload
    assert descriptor(common["schema"]).message_type[0].name == "Money"
    found = api.handle(
        "POST",
        "/subjects/orders-value",
        "normalize=false&deleted=true",
        {"schema": by_id["schema"], "schemaType": "PROTOBUF", "references": [COMMON_REF]},
    ).payload
    assert (found["id"], found["version"]) == (schema_id, 1)
    assert api.handle("GET", "/subjects/acme%2Fcommon.proto/versions/1/referencedby", "", None).payload == [schema_id]
    assert api.handle("GET", f"/schemas/ids/{schema_id}/versions", "", None).payload == [
        {"subject": "orders-value", "version": 1}
    ]
    assert api.handle("GET", "/associations/resources/-/orders", "resourceType=topic", None).payload == []
