"""Rules of the local schema registry (ids, versions, deletes, config), no server."""

from __future__ import annotations

import json

import pytest

from kafka_s3_assets.devstack.registry_compat import BACKWARD, FORWARD
from kafka_s3_assets.devstack.registry_errors import RegistryError
from kafka_s3_assets.devstack.registry_persistence import RegistryStateFile
from kafka_s3_assets.devstack.registry_schemas import ParsedSchema
from kafka_s3_assets.devstack.registry_store import RegistryStore, SchemaRequest, parse_version

pytestmark = [pytest.mark.unit]

RECORD = '{"type":"record","name":"myrecord","fields":[{"name":"f1","type":"string"}]}'
RECORD_V2 = (
    '{"type":"record","name":"myrecord","fields":[{"name":"f1","type":"string"},'
    '{"name":"f2","type":"int","default":0}]}'
)
OTHER = '{"type":"record","name":"other","fields":[{"name":"x","type":"long"}]}'


def avro(text: str, **kwargs) -> SchemaRequest:
    return SchemaRequest(schema=text, **kwargs)


def error_code(excinfo: pytest.ExceptionInfo) -> int:
    return excinfo.value.error_code


@pytest.fixture
def store() -> RegistryStore:
    return RegistryStore()


class RecordingChecker:
    """Compatibility checker that records its calls and rejects schemas listed in ``reject``."""

    def __init__(self, reject: set[str] = frozenset()) -> None:
        self.reject = reject
        self.calls: list[tuple[str, str, str]] = []

    def incompatibilities(self, new: ParsedSchema, existing: ParsedSchema, direction: str):
        self.calls.append((new.parsed["name"], existing.text, direction))
        if new.parsed["name"] in self.reject:
            return [f"{new.parsed['name']} rejected ({direction})"]
        return []


# ---------------------------------------------------------------- registration and ids


def test_first_registration_gets_id_1_and_version_1(store):
    registered = store.register("s-value", avro(RECORD))
    assert (registered.id, registered.version, registered.subject) == (1, 1, "s-value")
    assert registered.to_json()["schema"] == RECORD
    assert "schemaType" not in registered.to_json()  # omitted for AVRO, as Confluent does


def test_registering_the_same_schema_again_returns_the_existing_version(store):
    first = store.register("s-value", avro(RECORD))
    revision = store.revision
    again = store.register("s-value", avro(RECORD))
    assert (again.id, again.version) == (first.id, first.version)
    assert store.versions("s-value") == [1]
    assert store.revision == revision  # nothing changed, nothing to persist


def test_schemas_are_compared_after_parsing(store):
    first = store.register("s-value", avro(RECORD))
    reformatted = json.dumps(
        {
            "fields": [{"type": {"type": "string"}, "name": "f1"}],
            "name": "myrecord",
            "type": "record",
        },
        indent=4,
    )
    assert store.register("s-value", avro(reformatted)).id == first.id
    assert store.versions("s-value") == [1]


def test_namespace_spellings_of_the_same_name_are_the_same_schema(store):
    dotted = '{"type":"record","name":"com.acme.R","fields":[{"name":"a","type":"int"}]}'
    split = '{"type":"record","name":"R","namespace":"com.acme","fields":[{"name":"a","type":"int"}]}'
    assert store.register("a", avro(dotted)).id == store.register("b", avro(split)).id


def test_a_different_default_makes_a_different_schema(store):
    without = '{"type":"record","name":"r","fields":[{"name":"a","type":"int"}]}'
    with_default = '{"type":"record","name":"r","fields":[{"name":"a","type":"int","default":1}]}'
    assert store.register("s", avro(without)).id != store.register("s", avro(with_default)).id


def test_same_schema_in_another_subject_reuses_the_global_id(store):
    first = store.register("a-value", avro(RECORD))
    other = store.register("b-value", avro(RECORD))
    assert other.id == first.id
    assert other.version == 1
    assert store.versions_of_id(first.id) == [("a-value", 1), ("b-value", 1)]


def test_a_new_schema_gets_the_next_id_and_version(store):
    store.register("s", avro(RECORD))
    second = store.register("s", avro(RECORD_V2))
    assert (second.id, second.version) == (2, 2)
    assert store.get_version("s", "latest").id == 2
    assert store.get_version("s", -1).version == 2
    assert store.get_version("s", 1).id == 1


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        '{"type":"record","name":"r","fields":[{"name":"a","type":"NoSuchType"}]}',
        '{"type":"record","name":"r"}',
        '{"type":"record","name":"r","fields":[{"name":"a","type":"int","default":"x"}]}',
        "   ",
    ],
)
def test_invalid_schemas_are_rejected_with_42201(store, text):
    with pytest.raises(RegistryError) as excinfo:
        store.register("s", avro(text))
    assert error_code(excinfo) == 42201
    assert excinfo.value.http_status == 422
    assert store.subjects() == []


def test_unknown_schema_type_is_rejected():
    with pytest.raises(RegistryError) as excinfo:
        SchemaRequest.from_json({"schema": RECORD, "schemaType": "XML"})
    assert error_code(excinfo) == 42201


def test_json_schema_type_is_kept_and_reported(store):
    registered = store.register("j", SchemaRequest.from_json({"schema": '{"type": "object"}', "schemaType": "json"}))
    assert registered.to_json()["schemaType"] == "JSON"
    assert (
        store.register("j", SchemaRequest.from_json({"schema": '{"type":"object"}', "schemaType": "JSON"})).version == 1
    )


def test_normalize_stores_the_normalized_text(store):
    spaced = '{ "type": "record", "name": "r", "namespace": "n", "fields": [ {"name": "a", "type": "int"} ] }'
    registered = store.register("s", avro(spaced), normalize=True)
    assert registered.schema.schema == '{"type":"record","name":"n.r","fields":[{"name":"a","type":"int"}]}'


# ---------------------------------------------------------------- lookup and reads


def test_lookup_finds_the_version_holding_the_schema(store):
    store.register("s", avro(RECORD))
    store.register("s", avro(RECORD_V2))
    found = store.lookup("s", avro(RECORD))
    assert (found.subject, found.version, found.id) == ("s", 1, 1)


def test_lookup_errors(store):
    with pytest.raises(RegistryError) as excinfo:
        store.lookup("missing", avro(RECORD))
    assert error_code(excinfo) == 40401
    assert excinfo.value.message == "Subject 'missing' not found."
    store.register("s", avro(RECORD))
    with pytest.raises(RegistryError) as excinfo:
        store.lookup("s", avro(OTHER))
    assert error_code(excinfo) == 40403


def test_lookup_of_soft_deleted_version_needs_include_deleted(store):
    store.register("s", avro(RECORD))
    store.register("s", avro(RECORD_V2))
    store.delete_version("s", 1)
    with pytest.raises(RegistryError) as excinfo:
        store.lookup("s", avro(RECORD))
    assert error_code(excinfo) == 40403
    assert store.lookup("s", avro(RECORD), include_deleted=True).version == 1


@pytest.mark.parametrize("bad", ["0", "abc", "-2", str(2**31), "1.5"])
def test_invalid_version_ids_are_42202(store, bad):
    store.register("s", avro(RECORD))
    with pytest.raises(RegistryError) as excinfo:
        store.get_version("s", bad)
    assert error_code(excinfo) == 42202


def test_parse_version():
    assert parse_version("latest") == "latest"
    assert parse_version("-1") == "latest"
    assert parse_version("7") == 7


def test_missing_version_and_subject(store):
    with pytest.raises(RegistryError) as excinfo:
        store.get_version("nope", "latest")
    assert error_code(excinfo) == 40401
    store.register("s", avro(RECORD))
    with pytest.raises(RegistryError) as excinfo:
        store.get_version("s", 5)
    assert error_code(excinfo) == 40402
    assert excinfo.value.message == "Version 5 not found."


def test_schema_by_id_and_guid(store):
    registered = store.register("s", avro(RECORD))
    assert store.schema_by_id(registered.id).schema == RECORD
    assert store.schema_by_guid(registered.schema.guid).id == registered.id
    with pytest.raises(RegistryError) as excinfo:
        store.schema_by_id(99)
    assert error_code(excinfo) == 40403
    assert excinfo.value.message == "Schema 99 not found"


def test_subject_listing_filters(store):
    store.register("a", avro(RECORD))
    store.register("b", avro(OTHER))
    store.register("prefix-c", avro(RECORD_V2))
    store.delete_subject("b")
    assert store.subjects() == ["a", "prefix-c"]
    assert store.subjects(include_deleted=True) == ["a", "b", "prefix-c"]
    assert store.subjects(deleted_only=True) == ["b"]
    assert store.subjects(prefix="prefix-") == ["prefix-c"]


def test_latest_with_metadata(store):
    store.register("s", avro(RECORD, metadata={"properties": {"owner": "a"}}))
    store.register("s", avro(RECORD_V2, metadata={"properties": {"owner": "b"}}))
    assert store.latest_with_metadata("s", {"owner": "a"}).version == 1
    assert store.latest_with_metadata("s", {}).version == 2
    with pytest.raises(RegistryError) as excinfo:
        store.latest_with_metadata("s", {"owner": "c"})
    assert error_code(excinfo) == 40403


# ---------------------------------------------------------------- deletes


def test_soft_then_permanent_version_delete(store):
    store.register("s", avro(RECORD))
    store.register("s", avro(RECORD_V2))
    assert store.delete_version("s", "latest") == 2
    assert store.versions("s") == [1]
    assert store.versions("s", include_deleted=True) == [1, 2]
    assert store.versions("s", deleted_only=True) == [2]
    assert store.get_version("s", "latest").version == 1
    assert store.get_version("s", 2, include_deleted=True).deleted
    with pytest.raises(RegistryError) as excinfo:
        store.delete_version("s", 2)
    assert error_code(excinfo) == 40406
    with pytest.raises(RegistryError) as excinfo:
        store.delete_version("s", 1, permanent=True)
    assert error_code(excinfo) == 40407
    assert store.delete_version("s", 2, permanent=True) == 2
    assert store.versions("s", include_deleted=True) == [1]


def test_soft_deleted_schema_ids_stay_readable_until_permanently_deleted(store):
    registered = store.register("s", avro(RECORD))
    store.delete_subject("s")
    assert store.schema_by_id(registered.id).schema == RECORD  # consumers still decode old data
    store.delete_subject("s", permanent=True)
    with pytest.raises(RegistryError) as excinfo:
        store.schema_by_id(registered.id)
    assert error_code(excinfo) == 40403


def test_subject_delete_rules(store):
    store.register("s", avro(RECORD))
    store.register("s", avro(RECORD_V2))
    with pytest.raises(RegistryError) as excinfo:
        store.delete_subject("s", permanent=True)
    assert error_code(excinfo) == 40405
    assert store.delete_subject("s") == [1, 2]
    with pytest.raises(RegistryError) as excinfo:
        store.versions("s")
    assert error_code(excinfo) == 40401
    with pytest.raises(RegistryError) as excinfo:
        store.delete_subject("s")
    assert error_code(excinfo) == 40404
    assert store.delete_subject("s", permanent=True) == [1, 2]
    assert store.subjects(include_deleted=True) == []
    with pytest.raises(RegistryError) as excinfo:
        store.delete_subject("s")
    assert error_code(excinfo) == 40401


def test_reregistering_after_soft_delete_makes_a_new_version_with_the_same_id(store):
    store.register("s", avro(RECORD))
    store.register("s", avro(RECORD_V2))
    store.delete_subject("s")
    again = store.register("s", avro(RECORD))
    assert (again.id, again.version) == (1, 3)
    # Like Confluent, the soft-deleted version 1 carrying the same id is superseded.
    assert store.versions("s", include_deleted=True) == [2, 3]


def test_after_permanent_delete_versions_restart_and_ids_are_reused(store):
    store.register("s", avro(RECORD))
    store.register("s", avro(OTHER))
    store.delete_subject("s")
    store.delete_subject("s", permanent=True)
    again = store.register("s", avro(OTHER))
    assert (again.id, again.version) == (2, 1)
    fresh = store.register("s", avro(RECORD_V2))
    assert fresh.id == 3  # ids are never handed out twice for different schemas


# ---------------------------------------------------------------- config


def test_compatibility_config(store):
    assert store.global_config() == {"compatibilityLevel": "BACKWARD"}
    assert store.set_global_config({"compatibility": "full"}) == {"compatibility": "FULL"}
    assert store.global_config()["compatibilityLevel"] == "FULL"
    with pytest.raises(RegistryError) as excinfo:
        store.subject_config("s")
    assert error_code(excinfo) == 40408
    assert store.subject_config("s", default_to_global=True)["compatibilityLevel"] == "FULL"
    store.set_subject_config("s", {"compatibilityLevel": "NONE"})
    assert store.subject_config("s") == {"compatibilityLevel": "NONE"}
    assert store.delete_subject_config("s") == {"compatibilityLevel": "NONE"}
    with pytest.raises(RegistryError) as excinfo:
        store.set_global_config({"compatibility": "SIDEWAYS"})
    assert error_code(excinfo) == 42203
    assert store.delete_global_config()["compatibilityLevel"] == "FULL"
    assert store.global_config() == {"compatibilityLevel": "BACKWARD"}


def test_soft_deleting_a_subject_drops_its_config(store):
    store.register("s", avro(RECORD))
    store.set_subject_config("s", {"compatibility": "NONE"})
    store.delete_subject("s")
    with pytest.raises(RegistryError):
        store.subject_config("s")


def test_a_chosen_id_is_refused_as_outside_import_mode(store):
    with pytest.raises(RegistryError) as excinfo:
        store.register("s", avro(RECORD, id=42, version=1))
    assert error_code(excinfo) == 42205
    assert store.register("s", avro(RECORD)).id == 1


# ---------------------------------------------------------------- compatibility


def test_registration_consults_the_checker_against_the_latest_version():
    checker = RecordingChecker(reject={"other"})
    store = RegistryStore(checker=checker)
    store.register("s", avro(RECORD))
    store.register("s", avro(RECORD_V2))
    assert checker.calls == [("myrecord", RECORD, BACKWARD)]
    with pytest.raises(RegistryError) as excinfo:
        store.register("s", avro(OTHER))
    assert error_code(excinfo) == 409
    assert "other rejected (BACKWARD)" in excinfo.value.message
    assert store.versions("s") == [1, 2]


@pytest.mark.parametrize(
    ("level", "expected"),
    [
        ("NONE", []),
        ("BACKWARD", [("other", RECORD_V2, BACKWARD)]),
        ("FORWARD", [("other", RECORD_V2, FORWARD)]),
        ("FULL", [("other", RECORD_V2, BACKWARD), ("other", RECORD_V2, FORWARD)]),
        ("BACKWARD_TRANSITIVE", [("other", RECORD_V2, BACKWARD), ("other", RECORD, BACKWARD)]),
    ],
)
def test_levels_choose_directions_and_versions(level, expected):
    checker = RecordingChecker()
    store = RegistryStore(checker=checker)
    store.register("s", avro(RECORD))
    store.register("s", avro(RECORD_V2))
    store.set_subject_config("s", {"compatibility": level})
    checker.calls.clear()
    store.register("s", avro(OTHER))
    assert checker.calls == expected


def test_compatibility_endpoint_semantics():
    store = RegistryStore(checker=RecordingChecker(reject={"other"}))
    assert store.check_compatibility("new-subject", "latest", avro(OTHER)) == []
    store.register("s", avro(RECORD))
    assert store.check_compatibility("s", "latest", avro(RECORD_V2)) == []
    assert store.check_compatibility("s", 1, avro(OTHER)) == ["other rejected (BACKWARD)"]
    assert store.check_compatibility("s", None, avro(OTHER)) == ["other rejected (BACKWARD)"]
    with pytest.raises(RegistryError) as excinfo:
        store.check_compatibility("s", 9, avro(OTHER))
    assert error_code(excinfo) == 40402


def test_changing_the_schema_type_is_incompatible(store):
    store.register("s", avro(RECORD))
    problems = store.check_compatibility("s", "latest", SchemaRequest.from_json({"schema": "{}", "schemaType": "JSON"}))
    assert problems and "JSON" in problems[0]


def test_default_checker_accepts_everything_until_real_checks_exist(store):
    store.register("s", avro(RECORD))
    assert store.register("s", avro(OTHER)).version == 2


# ---------------------------------------------------------------- references


def test_references_resolve_named_types_from_other_subjects(store):
    store.register(
        "address",
        avro('{"type":"record","name":"com.acme.Address","fields":[{"name":"city","type":"string"}]}'),
    )
    person = '{"type":"record","name":"com.acme.Person","fields":[{"name":"home","type":"com.acme.Address"}]}'
    reference = {"name": "com.acme.Address", "subject": "address", "version": 1}
    registered = store.register("person", avro(person, references=(reference,)))
    assert registered.to_json()["references"] == [reference]
    with pytest.raises(RegistryError) as excinfo:  # a referenced version cannot be deleted
        store.delete_version("address", 1)
    assert error_code(excinfo) == 42206
    with pytest.raises(RegistryError) as excinfo:
        store.register("person2", avro(person))  # without the reference the type is unknown
    assert error_code(excinfo) == 42201
    with pytest.raises(RegistryError) as excinfo:
        store.register("person3", avro(person, references=({"name": "x", "subject": "nope", "version": 1},)))
    assert error_code(excinfo) == 42201


# ---------------------------------------------------------------- persistence


def test_snapshot_round_trip_keeps_everything(store):
    store.register("a", avro(RECORD))
    store.register("a", avro(RECORD_V2))
    store.register("b", avro(RECORD))
    store.delete_version("a", 1)
    store.set_subject_config("a", {"compatibility": "FULL"})
    restored = RegistryStore.from_snapshot(json.loads(json.dumps(store.to_snapshot())))
    assert restored.to_snapshot() == store.to_snapshot()
    assert restored.register("a", avro(RECORD_V2)).version == 2  # identity survived
    assert restored.register("c", avro(OTHER)).id == 3  # the id counter survived
    assert restored.versions("a", include_deleted=True) == [1, 2]


def test_state_file_saves_atomically_and_loads(tmp_path):
    state_file = RegistryStateFile(tmp_path / "registry")
    assert state_file.load().subjects() == []
    store = state_file.load()
    store.register("s", avro(RECORD))
    state_file.save(store)
    assert [p.name for p in (tmp_path / "registry").iterdir()] == ["registry.json"]
    assert state_file.load().get_version("s", 1).schema.schema == RECORD


def test_malformed_requests():
    for body in (
        None,
        [],
        {"schema": 5},
        {"schema": RECORD, "references": [{"name": 1}]},
        {"schema": RECORD, "id": "x"},
    ):
        with pytest.raises(RegistryError) as excinfo:
            SchemaRequest.from_json(body)
        assert error_code(excinfo) == 42201
