"""PROTOBUF and JSON schemas through the local schema registry over HTTP: confluent-kafka's own serializers
register them (with references), our client reads them back as the converters will, and confluent-kafka's
own deserializers read what was produced, which shows the registry answers as Confluent's does."""

from __future__ import annotations

import base64
import importlib
import json
import sys
import uuid
from importlib import resources
from types import SimpleNamespace

import pytest
import requests
from confluent_kafka.schema_registry import Schema, SchemaReference
from confluent_kafka.schema_registry import SchemaRegistryClient as LibraryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError as LibraryError
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, timestamp_pb2
from google.protobuf.message_factory import GetMessageClass
from grpc_tools import protoc

from kafka_s3_assets.clients.errors import SchemaNotFoundError
from kafka_s3_assets.clients.schema_registry import RegistrySettings, SchemaRegistryClient, clear_shared_caches
from kafka_s3_assets.sink.converters import SchemaReference as OurReference
from kafka_s3_assets_tests.integration.test_registry_server import start_registry
from kafka_s3_assets_tests.integration.test_schema_registry_client import LocalServer, proxy_to

pytestmark = [pytest.mark.integration, pytest.mark.registry, pytest.mark.timeout(180)]

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"

COMMON_PROTO = """syntax = "proto3";
package {package}.common;

message Money {{
  string currency = 1;
  int64 units = 2;
}}
"""
ORDER_PROTO = """syntax = "proto3";
package {package}.v1;

import "google/protobuf/timestamp.proto";
import "{package}/common.proto";

message Header {{ string source = 1; }}

message Order {{
  string order_id = 1;
  {package}.common.Money total = 2;
  google.protobuf.Timestamp created_at = 3;
  map<string, int64> counts = 4;
  repeated string tags = 5;
}}
"""

ADDRESS_SCHEMA = json.dumps(
    {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "Address",
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    }
)
CUSTOMER_SCHEMA = json.dumps(
    {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "Customer",
        "type": "object",
        "properties": {"id": {"type": "integer"}, "name": {"type": "string"}, "address": {"$ref": "address.json"}},
        "required": ["id", "name"],
    }
)


@pytest.fixture(scope="module")
def registry_url(tmp_path_factory):
    """The devstack's registry server as its own process (this module needs no Kafka and no S3)."""
    running = start_registry(tmp_path_factory.mktemp("registry-schema-types"))
    yield running.url
    running.stop()


@pytest.fixture(autouse=True)
def fresh_caches():
    clear_shared_caches()
    yield
    clear_shared_caches()


@pytest.fixture(scope="module")
def protos(tmp_path_factory):
    """order.proto importing common.proto and timestamp.proto, compiled by protoc and imported.

    The package name is unique: generated modules land in the process-wide descriptor pool."""
    package = f"regtypes{uuid.uuid4().hex[:8]}"
    root = tmp_path_factory.mktemp("protos")
    (root / package).mkdir()
    common_text = COMMON_PROTO.format(package=package)
    order_text = ORDER_PROTO.format(package=package)
    (root / package / "common.proto").write_text(common_text)
    (root / package / "order.proto").write_text(order_text)
    well_known = resources.files("grpc_tools") / "_proto"
    argv = ["protoc", f"-I{root}", f"-I{well_known}", f"--python_out={root}"]
    assert protoc.main([*argv, f"{package}/common.proto", f"{package}/order.proto"]) == 0
    sys.path.insert(0, str(root))
    try:
        yield SimpleNamespace(
            package=package,
            common_name=f"{package}/common.proto",
            common_text=common_text,
            order_text=order_text,
            common_pb2=importlib.import_module(f"{package}.common_pb2"),
            order_pb2=importlib.import_module(f"{package}.order_pb2"),
        )
    finally:
        sys.path.remove(str(root))


def value_context(topic: str) -> SerializationContext:
    return SerializationContext(topic, MessageField.VALUE)


def file_descriptor(serialized: str, name: str) -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto()
    proto.ParseFromString(base64.b64decode(serialized))
    proto.name = name
    return proto


def post(url: str, path: str, body: dict, **params) -> requests.Response:
    return requests.post(f"{url}{path}", json=body, params=params, headers={"Content-Type": CONTENT_TYPE}, timeout=30)


# ---- Protobuf ----------------------------------------------------------------------------------------------


def test_protobuf_serializer_registers_through_our_registry_and_our_client_reads_it(registry_url, protos):
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    order_pb2, common_pb2 = protos.order_pb2, protos.common_pb2
    message = order_pb2.Order(
        order_id="o1",
        total=common_pb2.Money(currency="EUR", units=1250),
        created_at=timestamp_pb2.Timestamp(seconds=1_700_000_000, nanos=5),
        counts={"x": 1, "y": -2},
        tags=["a", "b"],
    )
    serializer = ProtobufSerializer(order_pb2.Order, LibraryClient({"url": registry_url}))
    payload = serializer(message, value_context(topic))
    assert payload[0] == 0 and payload[5:7] == b"\x02\x02"  # schema id, then message indexes [1]: Order
    schema_id = int.from_bytes(payload[1:5], "big")

    # CK's own deserializer (fresh client: nothing cached) reads it back: ids, formats and references as Confluent.
    deserializer = ProtobufDeserializer(order_pb2.Order, {}, LibraryClient({"url": registry_url}))
    assert deserializer(payload, value_context(topic)) == message

    client = SchemaRegistryClient(RegistrySettings(registry_url))
    found = client.schema_by_id(schema_id)
    assert found.schema_type == "PROTOBUF"
    # The serializer registered common.proto under its import path; timestamp.proto is known and skipped.
    assert found.references == (OurReference(protos.common_name, protos.common_name, 1),)
    main = file_descriptor(found.schema, "default")
    assert list(main.dependency) == ["google/protobuf/timestamp.proto", protos.common_name]
    assert [m.name for m in main.message_type] == ["Header", "Order"]
    with pytest.raises(SchemaNotFoundError, match="google/protobuf/timestamp.proto"):
        client.schema_by_subject_version("google/protobuf/timestamp.proto", -1)

    common = client.schema_by_subject_version(protos.common_name, 1)
    assert common.schema_type == "PROTOBUF" and common.references == ()
    assert client.schema_by_subject_version(protos.common_name, -1) == common
    assert client.version_in_subject(schema_id, f"{topic}-value") == 1
    assert client.version_in_subject(common.schema_id, protos.common_name) == 1
    assert client.version_in_subject(schema_id, protos.common_name) is None

    # What a converter does with those answers: a pool of the references, then the writer's message.
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(timestamp_pb2.DESCRIPTOR.serialized_pb)
    pool.Add(file_descriptor(common.schema, found.references[0].name))
    pool.Add(main)
    writer = GetMessageClass(pool.FindMessageTypeByName(f"{protos.package}.v1.Order"))()
    writer.ParseFromString(payload[7:])
    assert writer.order_id == "o1" and writer.total.units == 1250 and dict(writer.counts) == {"x": 1, "y": -2}
    assert writer.created_at.nanos == 5 and list(writer.tags) == ["a", "b"]

    # Registering again is the same id; the .proto text of the same file with the same references, too.
    assert serializer(message, value_context(topic))[1:5] == payload[1:5]
    references = [{"name": protos.common_name, "subject": protos.common_name, "version": 1}]
    as_text = post(
        registry_url,
        f"/subjects/{topic}-text/versions",
        {"schema": protos.order_text, "schemaType": "PROTOBUF", "references": references},
    )
    assert as_text.status_code == 200 and as_text.json()["id"] == schema_id


def test_protobuf_answers_by_id_version_lookup_and_referencedby(registry_url, protos):
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    message = protos.order_pb2.Order(order_id="o2")
    payload = ProtobufSerializer(protos.order_pb2.Order, LibraryClient({"url": registry_url}))(
        message, value_context(topic)
    )
    schema_id = int.from_bytes(payload[1:5], "big")
    subject = f"{topic}-value"
    by_id = requests.get(f"{registry_url}/schemas/ids/{schema_id}", params={"subject": subject}, timeout=30).json()
    assert by_id["schemaType"] == "PROTOBUF"
    assert by_id["references"] == [{"name": protos.common_name, "subject": protos.common_name, "version": 1}]
    # The Java converters' version lookup: the schema they fetched, deleted versions included.
    found = post(
        registry_url,
        f"/subjects/{subject}",
        {"schema": by_id["schema"], "schemaType": "PROTOBUF", "references": by_id["references"]},
        normalize="false",
        deleted="true",
    ).json()
    assert (found["id"], found["version"], found["subject"]) == (schema_id, 1, subject)
    # The .proto text of common.proto, as a reference is fetched, compiles to the same messages.
    version = requests.get(
        f"{registry_url}/subjects/{requests.utils.quote(protos.common_name, safe='')}/versions/1",
        params={"deleted": "true", "format": "serialized"},
        timeout=30,
    ).json()
    assert file_descriptor(version["schema"], "x").message_type[0].name == "Money"
    referenced_by = requests.get(
        f"{registry_url}/subjects/{requests.utils.quote(protos.common_name, safe='')}/versions/1/referencedby",
        timeout=30,
    ).json()
    assert schema_id in referenced_by
    library = LibraryClient({"url": registry_url})
    # (the other Protobuf test registers the same schema: one id, several subjects)
    assert (subject, 1) in [(v.subject, v.version) for v in library.get_schema_versions(schema_id)]
    assert library.get_referenced_by(protos.common_name, 1) == referenced_by


def test_protobuf_registered_as_text_is_served_serialized(registry_url, protos):
    """A schema registered as .proto text (as with curl or the Java tools) reaches our client as a descriptor."""
    subject = f"text-{uuid.uuid4().hex[:8]}-value"
    text = protos.common_text.replace("Money", "Price").replace(".common;", ".pricing;")
    registered = post(registry_url, f"/subjects/{subject}/versions", {"schema": text, "schemaType": "PROTOBUF"})
    assert registered.status_code == 200
    schema_id = registered.json()["id"]
    assert requests.get(f"{registry_url}/schemas/ids/{schema_id}", timeout=30).json()["schema"] == text
    found = SchemaRegistryClient(RegistrySettings(registry_url)).schema_by_id(schema_id)
    served = file_descriptor(found.schema, "default")
    assert served.package == f"{protos.package}.pricing" and served.message_type[0].name == "Price"


def test_client_asks_the_serialized_format_for_protobuf_only_and_caches_versions(registry_url, protos):
    subject = f"cached-{uuid.uuid4().hex[:8]}-value"
    text = protos.common_text.replace(".common;", ".cached;")
    protobuf_id = post(registry_url, f"/subjects/{subject}/versions", {"schema": text, "schemaType": "PROTOBUF"})
    json_id = post(registry_url, f"/subjects/{subject}-json/versions", {"schema": ADDRESS_SCHEMA, "schemaType": "JSON"})
    protobuf_id, json_id = protobuf_id.json()["id"], json_id.json()["id"]
    proxy = LocalServer(proxy_to(registry_url))
    try:
        client = SchemaRegistryClient(RegistrySettings(proxy.url))
        assert client.schema_by_id(json_id).schema_type == "JSON"
        assert client.schema_by_id(protobuf_id).schema_type == "PROTOBUF"
        assert proxy.paths == [
            f"/schemas/ids/{json_id}",
            f"/schemas/ids/{protobuf_id}",
            f"/schemas/ids/{protobuf_id}?format=serialized",
        ]
        first = client.schema_by_subject_version(subject, 1)
        assert first == client.schema_by_subject_version(subject, 1) == client.schema_by_id(protobuf_id)
        assert client.schema_by_subject_version(subject, -1) == first  # the latest: asked again
        # (the serialized answer for the latest, version 1, comes from the library's own cache)
        assert proxy.paths[3:] == [
            f"/subjects/{subject}/versions/1?deleted=true",
            f"/subjects/{subject}/versions/1?deleted=true&format=serialized",
            f"/subjects/{subject}/versions/latest?deleted=false",
        ]
    finally:
        proxy.close()


# ---- JSON Schema -------------------------------------------------------------------------------------------


def test_json_serializer_with_a_reference_round_trips(registry_url):
    topic = f"customers-{uuid.uuid4().hex[:8]}"
    address_subject = f"{topic}-address"
    library = LibraryClient({"url": registry_url})
    address_id = library.register_schema(address_subject, Schema(ADDRESS_SCHEMA, "JSON"))
    reference = SchemaReference("address.json", address_subject, 1)
    serializer = JSONSerializer(Schema(CUSTOMER_SCHEMA, "JSON", [reference]), library)
    customer = {"id": 7, "name": "Ada", "address": {"city": "Zurich"}}
    payload = serializer(customer, value_context(topic))
    schema_id = int.from_bytes(payload[1:5], "big")
    assert json.loads(payload[5:]) == customer

    deserializer = JSONDeserializer(None, schema_registry_client=LibraryClient({"url": registry_url}))
    assert deserializer(payload, value_context(topic)) == customer

    client = SchemaRegistryClient(RegistrySettings(registry_url))
    found = client.schema_by_id(schema_id)
    assert found.schema_type == "JSON" and json.loads(found.schema) == json.loads(CUSTOMER_SCHEMA)
    assert found.references == (OurReference("address.json", address_subject, 1),)
    address = client.schema_by_subject_version(address_subject, 1)
    assert (address.schema_id, address.schema_type, address.references) == (address_id, "JSON", ())
    assert json.loads(address.schema) == json.loads(ADDRESS_SCHEMA)
    assert client.version_in_subject(schema_id, f"{topic}-value") == 1
    assert client.version_in_subject(address_id, address_subject) == 1


def test_references_must_exist_and_schemas_must_be_valid(registry_url):
    library = LibraryClient({"url": registry_url})
    subject = f"invalid-{uuid.uuid4().hex[:8]}-value"
    attempts = [
        Schema(CUSTOMER_SCHEMA, "JSON", [SchemaReference("address.json", f"{subject}-missing", 1)]),
        Schema("[1, 2]", "JSON"),
        Schema('{"type": 5}', "JSON"),
        Schema("message {", "PROTOBUF"),
        Schema('syntax = "proto3"; import "nowhere/x.proto"; message A { nowhere.X x = 1; }', "PROTOBUF"),
    ]
    for schema in attempts:
        with pytest.raises(LibraryError) as excinfo:
            library.register_schema(subject, schema)
        assert (excinfo.value.http_status_code, excinfo.value.error_code) == (422, 42201), schema.schema_str
    # Nothing was registered, and the client says so.
    client = SchemaRegistryClient(RegistrySettings(registry_url))
    with pytest.raises(SchemaNotFoundError, match=f"Version 1 of subject '{subject}' not found"):
        client.schema_by_subject_version(subject, 1)


# ---- compatibility of PROTOBUF and JSON versions (registry_protobuf_compat, registry_json_compat) -----------


def test_incompatible_protobuf_and_json_versions_are_409_under_backward_and_accepted_under_none(registry_url):
    """Confluent's rules over HTTP: a Protobuf field whose scalar kind changes (string -> int64) and a JSON
    property whose type changes are refused with 409 under the default BACKWARD, and the compatibility endpoint
    says why; under NONE both register."""
    suffix = uuid.uuid4().hex[:8]
    proto_v1 = 'syntax = "proto3";\npackage acme.compat;\nmessage Event { string id = 1; int32 n = 2; }\n'
    proto_v2 = proto_v1.replace("string id = 1;", "int64 id = 1;")
    json_v1 = json.dumps({"type": "object", "properties": {"id": {"type": "string"}}})
    json_v2 = json.dumps({"type": "object", "properties": {"id": {"type": "number"}}})
    cases = [
        (f"compat-proto-{suffix}-value", "PROTOBUF", proto_v1, proto_v2, "FIELD_SCALAR_KIND_CHANGED", "#/Event/1"),
        (f"compat-json-{suffix}-value", "JSON", json_v1, json_v2, "TYPE_CHANGED", "#/properties/id"),
    ]
    for subject, schema_type, v1, v2, error_type, path in cases:
        assert post(registry_url, f"/subjects/{subject}/versions", {"schema": v1, "schemaType": schema_type}).ok
        refused = post(registry_url, f"/subjects/{subject}/versions", {"schema": v2, "schemaType": schema_type})
        assert refused.status_code == 409, refused.text
        assert refused.json()["error_code"] == 409
        assert f'{{errorType:"{error_type}", description:' in refused.json()["message"]
        checked = post(
            registry_url,
            f"/compatibility/subjects/{subject}/versions/latest",
            {"schema": v2, "schemaType": schema_type},
            verbose="true",
        ).json()
        assert checked["is_compatible"] is False
        assert checked["messages"][0].startswith(f'{{errorType:"{error_type}"') and path in checked["messages"][0]
        config = requests.put(
            f"{registry_url}/config/{subject}",
            json={"compatibility": "NONE"},
            headers={"Content-Type": CONTENT_TYPE},
            timeout=30,
        )
        assert config.ok, config.text
        registered = post(registry_url, f"/subjects/{subject}/versions", {"schema": v2, "schemaType": schema_type})
        assert registered.ok, registered.text
        assert requests.get(f"{registry_url}/subjects/{subject}/versions", timeout=30).json() == [1, 2]
