import json
import math
import struct
from dataclasses import replace

import pytest

from kafka_s3_assets.clients.errors import SchemaNotFoundError
from kafka_s3_assets.export.conversion import RecordConverter
from kafka_s3_assets.export.tolerance import classify
from kafka_s3_assets.sink.config import validate_connector_config
from kafka_s3_assets.sink.converters import (
    AvroConverter,
    AvroDecoder,
    ConversionError,
    JsonSchemalessConverter,
    RegisteredSchema,
    StringConverter,
    build_converter,
)
from kafka_s3_assets.sink.data_rules import DataRule, DataRuleSet, UnrunnableRule
from kafka_s3_assets.sink.errors import RecordError
from kafka_s3_assets.sink.records import ConnectData, KafkaRecord, RecordBatch
from kafka_s3_assets.sink.schema.connect_schema import AvroDataConfig

from .sink_helpers import SCHEMA_V1, FakeRegistry, base_config, framed

pytestmark = [pytest.mark.unit]


def test_avro_converter_keeps_the_datum_undecoded_and_caches_the_schema():
    registry = FakeRegistry({5: SCHEMA_V1}, versions={5: 3})
    converter = AvroConverter(registry, is_key=False)
    data = converter.to_connect("t", framed(SCHEMA_V1, {"f1": "x"}, 5))
    converter.to_connect("t", framed(SCHEMA_V1, {"f1": "y"}, 5))
    assert data.avro_datum == b"\x02x" and not data.is_decoded
    assert data.schema.schema_id == 5 and data.schema.version == 3
    assert registry.lookups == 1
    assert AvroDecoder().decode(data) == {"f1": "x"}


@pytest.mark.parametrize(
    "payload, message",
    [
        (b"\x01\x00\x00\x00\x05\x02x", "Unknown magic byte!"),
        (b"\x00\x00", "shorter than the 5-byte Confluent header"),
    ],
)
def test_avro_converter_rejects_bad_framing(payload, message):
    with pytest.raises(ConversionError, match=message):
        AvroConverter(FakeRegistry({5: SCHEMA_V1}), is_key=False).to_connect("t", payload)


def test_truncated_datum_fails_to_decode():
    data = AvroConverter(FakeRegistry({5: SCHEMA_V1}), is_key=False).to_connect(
        "t", b"\x00" + struct.pack(">I", 5) + b"\x20ab"
    )
    with pytest.raises(ConversionError, match="Corrupt Avro datum"):
        AvroDecoder().decode(data)


@pytest.mark.parametrize(
    "writer_schema",
    ["bytes", {"type": "bytes"}, {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}],
)
def test_a_top_level_bytes_value_is_its_raw_bytes_after_the_header(writer_schema):
    """Confluent's Avro serializer writes a value of a top-level bytes schema as the bytes themselves, without
    Avro's length prefix; the datum the files get is their Avro encoding."""
    raw = bytes(range(200))  # a length whose Avro prefix takes two bytes
    registry = FakeRegistry({7: writer_schema}, versions={7: None})  # a decimal's Connect schema has version 1
    data = AvroConverter(registry, is_key=False).to_connect("t", b"\x00" + struct.pack(">I", 7) + raw)
    assert data.avro_datum == b"\x90\x03" + raw
    assert AvroDecoder().decode(data) == raw
    empty = AvroConverter(registry, is_key=False).to_connect("t", b"\x00" + struct.pack(">I", 7))
    assert empty.avro_datum == b"\x00" and AvroDecoder().decode(empty) == b""


def test_raw_bytes_values_go_record_by_record_with_their_datums_made_whole():
    config = validate_connector_config(base_config())
    converter = RecordConverter(config, FakeRegistry({7: "bytes"}))
    values = [b"\x00" + struct.pack(">I", 7) + payload for payload in (b"ab", b"", b"xyz")]
    batch = RecordBatch.of([KafkaRecord("t", 0, i, None, None, v) for i, v in enumerate(values)])
    converted = [converter.convert(record) for record in batch.records()]
    assert [AvroDecoder().decode(r.value) for r in converted] == [b"ab", b"", b"xyz"]
    assert converter.avro_values(batch) is None  # the batch path would copy the raw bytes as datums


def test_file_schema_is_the_avro_data_round_trip_of_the_writer_schema():
    # AvroData.toConnectSchema takes the registry version; fromConnectSchema writes it as connect.version
    # and the record's full name as connect.name, after the fields (AvroData.java ~1045-1068).
    schema = {"type": "record", "name": "r", "namespace": "com.x", "fields": []}
    converter = AvroConverter(FakeRegistry({5: schema}, versions={5: 2}), is_key=False)
    data = converter.to_connect("t", framed(schema, {}, 5))
    assert data.schema.header_schema_json == (
        '{"type":"record","name":"r","namespace":"com.x","fields":[],"connect.version":2,"connect.name":"com.x.r"}'
    )
    assert data.schema.connect_schema.version == 2 and data.schema.writer_schema == schema
    # The sink's connect.meta.data=false: no connect.* properties at all.
    plain = AvroConverter(
        FakeRegistry({5: schema}, versions={5: 2}),
        is_key=False,
        sink=AvroDataConfig(connect_meta_data=False, enhanced_avro_schema_support=True),
    )
    assert (
        plain.to_connect("t", framed(schema, {}, 5)).schema.header_schema_json
        == '{"type":"record","name":"r","namespace":"com.x","fields":[]}'
    )


def test_a_schema_avro_data_cannot_convert_fails_naming_the_schema_id():
    # Two union branches that map to one Connect field name (AvroData.java ~2126-2129).
    schema = {
        "type": "record",
        "name": "r",
        "fields": [
            {
                "name": "u",
                "type": [
                    {"type": "record", "name": "a.X", "fields": []},
                    {"type": "record", "name": "b.X", "fields": []},
                ],
            }
        ],
    }
    with pytest.raises(ConversionError, match="Schema id 7: Multiple union schemas map to the Connect union field"):
        AvroConverter(FakeRegistry({7: schema}), is_key=False).to_connect("t", b"\x00\x00\x00\x00\x07\x00")


def test_json_and_string_converters():
    assert JsonSchemalessConverter().to_connect("t", b'{"a":[1]}').decoded == {"a": [1]}
    with pytest.raises(ConversionError):
        JsonSchemalessConverter().to_connect("t", b"{not json")
    assert StringConverter().to_connect("t", "é".encode()).decoded == "é"
    with pytest.raises(ConversionError):
        StringConverter().to_connect("t", b"\xff")
    assert JsonSchemalessConverter().to_connect("t", None) is None


def test_schemaless_json_gives_the_values_kafka_connects_json_converter_gives():
    # What Kafka's JsonConverter (schemas.enable=false) makes of these bytes, as the JVM answers it
    # (test_connect_json_oracle holds the rest against the JVM itself).
    convert = JsonSchemalessConverter().to_connect
    assert convert("t", b"null") is None and convert("t", b"") is None and convert("t", b" \n") is None  # null values
    assert list(convert("t", b'{"id":1,"user":2,"seq":3,"amount":4}').decoded) == [  # HashMap order
        "amount",
        "id",
        "user",
        "seq",
    ]
    assert convert("t", b'{"a":1,"b":2,"a":3}').decoded == {"a": 3, "b": 2}  # first place, last value
    assert convert("t", b"18446744073709551615").decoded == -1  # a Long: the low 64 bits
    assert convert("t", b"18446744073709551616").decoded == 0
    assert math.copysign(1, convert("t", b"-0.0").decoded) == 1  # a BigDecimal zero has no sign
    assert math.copysign(1, convert("t", b"-1e-400").decoded) == -1  # but this rounds to -0.0
    assert convert("t", b"1e400").decoded == math.inf
    assert convert("t", b"007").decoded == 7 and convert("t", b'{"a":1}x').decoded == {"a": 1}  # Jackson reads these
    assert convert("t", b"\xef\xbb\xbf[1]").decoded == [1] and convert("t", '"é"'.encode("utf-16")).decoded == "é"
    assert convert("t", b'"\\ud800"').decoded == "\ud800"  # a lone surrogate, escaped, is a string's


def test_schemaless_json_errors_are_the_converters_with_jacksons_exception():
    def error(data: bytes) -> str:
        with pytest.raises(ConversionError) as caught:
            JsonSchemalessConverter().to_connect("t", data)
        return str(caught.value)

    source = "[Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: 1, column: {}]"
    assert error(b"{not json") == (
        "Converting byte[] to Kafka Connect data failed due to serialization error: "
        "com.fasterxml.jackson.core.JsonParseException: Unexpected character ('n' (code 110)): was expecting "
        "double-quote to start field name\n at " + source.format(2)
    )
    assert error(b"NaN").endswith(
        "JsonParseException: Non-standard token 'NaN': enable "
        "`JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow\n at " + source.format(4)
    )
    assert error(b"1x").endswith(
        "Unexpected character ('x' (code 120)): Expected space separating root-level values\n at " + source.format(2)
    )
    assert error(b'"\xff"').endswith("JsonParseException: Invalid UTF-8 start byte 0xff\n at " + source.format(3))
    assert error(b"[" * 1001).endswith(
        "StreamConstraintsException: Document nesting depth (1001) exceeds the maximum "
        "allowed (1000, from `StreamReadConstraints.getMaxNestingDepth()`)"
    )
    assert error(b"1e2147483648").endswith(
        'java.lang.NumberFormatException: Value "1e2147483648" can not be '
        "deserialized as `java.math.BigDecimal`, reason:  Exponent overflow."
    )


# ---- Confluent's read-path settings: avro.fail.on.trailing.data, discard.type.doc.default, use.latest.*, rules ----


class SubjectRegistry(FakeRegistry):
    """A registry with one subject's versions (version n is schema id ``ids[n - 1]``), rule sets by id and
    metadata by id, as the client answers: the latest version and the latest with metadata carry their version."""

    def __init__(self, schemas, ids, rule_sets=None, metadata=None, types=None):
        super().__init__(schemas, versions={schema_id: n for n, schema_id in enumerate(ids, 1)})
        self.ids = list(ids)
        self.rule_sets = rule_sets or {}
        self.metadata = metadata or {}
        self.types = types or {}
        self.latest_lookups = 0

    def schema_by_id(self, schema_id):
        self.lookups += 1
        text = self.schemas[schema_id]
        return RegisteredSchema(
            schema_id,
            text if isinstance(text, str) else json.dumps(text),
            self.types.get(schema_id, "AVRO"),
            rule_set=self.rule_sets.get(schema_id),
        )

    def schema_by_subject_version(self, subject, version):
        if version == -1:
            self.latest_lookups += 1
            version = len(self.ids)
        return replace(self.schema_by_id(self.ids[version - 1]), version=version)

    def latest_with_metadata(self, subject, metadata):
        self.latest_lookups += 1
        for version in range(len(self.ids), 0, -1):
            held = self.metadata.get(self.ids[version - 1], {})
            if all(held.get(k) == v for k, v in metadata.items()):
                return self.schema_by_subject_version(subject, version)
        raise SchemaNotFoundError(f"no version of {subject} with {metadata}")


def avro_converter(registry, **settings):
    """The AvroConverter a validated config builds with these value converter settings."""
    config = validate_connector_config(
        base_config(**{})
        | {f"value.converter.{k}": v for k, v in {"schema.registry.url": "http://r", **settings}.items()}
    )
    return build_converter(config.value_converter, registry, is_key=False)


def record_converter(registry, values: dict, **settings):
    config = base_config() | values | {f"value.converter.{k}": v for k, v in settings.items()}
    config["value.converter.schema.registry.url"] = "http://r"
    return RecordConverter(validate_connector_config(config), registry)


def test_trailing_bytes_fail_the_record_with_the_flag_even_when_datums_are_not_validated():
    registry = FakeRegistry({1: SCHEMA_V1})
    good, trailing = framed(SCHEMA_V1, {"f1": "x"}, 1), framed(SCHEMA_V1, {"f1": "x"}, 1) + b"\x00\x07"
    unchecked = {"kafka_s3_assets.avro.validate.datums": "false"}
    # Without the flag and without validation, datums are copied as they are (today's trusted-producer mode).
    assert record_converter(registry, unchecked).convert(KafkaRecord("s3_topic", 0, 1, 0, None, trailing))
    converter = record_converter(registry, unchecked, **{"avro.fail.on.trailing.data": "true"})
    assert converter.convert(KafkaRecord("s3_topic", 0, 1, 0, None, good)).value.decoded == {"f1": "x"}
    with pytest.raises(RecordError) as failure:
        converter.convert(KafkaRecord("s3_topic", 0, 2, 0, None, trailing))
    assert "offset=2" in str(failure.value) and "Failed to deserialize data for topic s3_topic to Avro" in str(
        failure.value
    )
    assert "2 trailing bytes" in str(failure.value)
    assert classify(failure.value) is not None  # a conversion error: errors.tolerance=all may skip it


def test_the_batch_path_takes_no_batch_with_trailing_bytes_when_the_flag_is_on():
    registry = FakeRegistry({1: SCHEMA_V1})
    values = [framed(SCHEMA_V1, {"f1": str(i)}, 1) for i in range(3)]
    records = [KafkaRecord("s3_topic", 0, i, 0, None, v) for i, v in enumerate(values)]
    for flag, expect_trailing_batch in (("false", True), ("true", False)):
        converter = record_converter(
            registry,
            {"kafka_s3_assets.avro.validate.datums": "false"},
            **{"avro.fail.on.trailing.data": flag},
        )
        converter.convert(records[0])  # the schema is resolved by a record first
        assert converter.avro_values(RecordBatch.of(records)) is not None
        bad = records[:2] + [KafkaRecord("s3_topic", 0, 2, 0, None, values[2] + b"\x00")]
        assert (converter.avro_values(RecordBatch.of(bad)) is not None) is expect_trailing_batch


DOCUMENTED = {
    "type": "record",
    "name": "R",
    "namespace": "n",
    "doc": "a record",
    "fields": [
        {"name": "a", "type": "string", "doc": "field a", "default": "x"},
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["P", "Q"], "doc": "an enum", "default": "P"}},
        {"name": "s", "type": {"type": "record", "name": "S", "doc": "a sub-record", "fields": []}, "doc": "field s"},
        {"name": "o", "type": ["null", "long"], "doc": "field o", "default": None},
    ],
}


def test_discard_type_doc_default_keeps_only_field_docs_and_defaults():
    registry = FakeRegistry({3: DOCUMENTED}, versions={3: 1})
    kept = avro_converter(registry).to_connect("t", framed(DOCUMENTED, {"a": "1", "e": "Q", "s": {}, "o": 2}, 3))
    discarded = avro_converter(registry, **{"discard.type.doc.default": "true"}).to_connect(
        "t", framed(DOCUMENTED, {"a": "1", "e": "Q", "s": {}, "o": 2}, 3)
    )
    before, after = kept.schema.connect_schema, discarded.schema.connect_schema
    assert before.doc is None and before.parameters["io.confluent.connect.avro.record.doc"] == "a record"
    assert before.field("a").parameters == {"io.confluent.connect.avro.field.default": "true"}
    # AvroData.toConnectSchema with discardTypeDocDefault: the field's doc, else its type's, is the doc; a
    # named type's own doc is connect.record.doc (an enum's also connect.enum.doc); no other doc or default
    # parameter; the defaults themselves stay.
    assert after.doc == "a record" and after.parameters == {"connect.record.doc": "a record"}
    assert (after.field("a").doc, after.field("a").parameters, after.field("a").default) == ("field a", {}, "x")
    enum = after.field("e")
    assert enum.doc == "an enum"
    assert enum.parameters["connect.enum.doc"] == "an enum" and enum.parameters["connect.record.doc"] == "an enum"
    assert not any(k.startswith("io.confluent.connect.avro.enum.d") for k in enum.parameters)
    assert after.field("s").doc == "field s" and after.field("s").parameters == {"connect.record.doc": "a sub-record"}
    assert after.field("o").doc == "field o" and after.field("o").optional
    # ... and so the file schema the sink's AvroData writes: docs as connect.doc, no Avro doc, connect.default.
    header = json.loads(discarded.schema.header_schema_json)
    assert "doc" not in header and header["connect.doc"] == "a record"
    field_a = header["fields"][0]
    assert field_a["type"] == {"type": "string", "connect.doc": "field a", "connect.default": "x"}
    assert field_a["default"] == "x" and "doc" not in field_a
    assert json.loads(kept.schema.header_schema_json)["fields"][0] == {
        "name": "a",
        "type": "string",
        "doc": "field a",
        "default": "x",
    }
    # The datum is written as it was: the encoding is the writer's.
    assert discarded.avro_datum == kept.avro_datum


V1 = {"type": "record", "name": "User", "fields": [{"name": "id", "type": "string"}]}
V2 = {
    "type": "record",
    "name": "User",
    "fields": [{"name": "id", "type": "string"}, {"name": "age", "type": "int", "default": 42}],
}
V3 = {"type": "record", "name": "User", "fields": [{"name": "age", "type": "long", "default": 7}]}


def test_use_latest_version_reads_records_into_the_latest_schema_with_the_writers_version():
    registry = SubjectRegistry({11: V1, 12: V2, 13: V3}, ids=[11, 12, 13])
    converter = avro_converter(registry, **{"use.latest.version": "true"})
    assert converter.reads_latest
    data = converter.to_connect("users", framed(V1, {"id": "u1"}, 11))
    # AbstractKafkaAvroDeserializer: GenericDatumReader(writer, latest); AvroConverter converts the record of
    # the reader schema with the version of the writer's id.
    assert data.decoded == {"age": 7}
    assert data.schema.writer_schema == V3 and data.schema.schema_id == 13
    assert data.schema.version == 1 and data.schema.connect_schema.version == 1
    assert [name for name, _ in data.schema.connect_schema.fields] == ["age"]
    assert AvroDecoder().decode(ConnectData(data.schema, avro_datum=data.avro_datum)) == {"age": 7}
    assert data.avro_datum == b"\x0e"  # re-encoded in the reader schema
    converter.to_connect("users", framed(V2, {"id": "u2", "age": 3}, 12))
    assert registry.latest_lookups == 2  # cached per subject and writer schema, for the converter's life
    converter.to_connect("users", framed(V2, {"id": "u3", "age": 4}, 12))
    assert registry.latest_lookups == 2
    assert converter.cached_schema("users", 11) is None  # no batch path: datums are re-encoded


def test_use_latest_with_metadata_wins_and_the_cache_ttl_asks_again():
    registry = SubjectRegistry({11: V1, 12: V2, 13: V3}, ids=[11, 12, 13], metadata={12: {"app": "v2"}})
    converter = avro_converter(
        registry, **{"use.latest.version": "true", "use.latest.with.metadata": "app=v2", "latest.cache.ttl.sec": "0"}
    )
    data = converter.to_connect("users", framed(V1, {"id": "u1"}, 11))
    assert data.decoded == {"id": "u1", "age": 42} and data.schema.schema_id == 12
    converter.to_connect("users", framed(V1, {"id": "u1"}, 11))
    assert registry.latest_lookups == 2  # latest.cache.ttl.sec=0: asked for each record


def test_without_use_latest_records_keep_their_writer_schema():
    registry = SubjectRegistry({11: V1, 12: V2}, ids=[11, 12])
    data = avro_converter(registry).to_connect("users", framed(V1, {"id": "u1"}, 11))
    assert data.schema.writer_schema == V1 and registry.latest_lookups == 0


def rule(name, mode="READ", type_="CEL", **kw):
    return DataRule(name=name, kind=kw.pop("kind", "CONDITION"), mode=mode, type=type_, **kw)


def test_a_read_rule_confluent_would_run_stops_the_export_naming_it():
    registry = SubjectRegistry({11: V1}, ids=[11], rule_sets={11: DataRuleSet(domain=(rule("checkId"),))})
    with pytest.raises(UnrunnableRule, match=r"'checkId' \(domain rule, type CEL, kind CONDITION, mode READ\)"):
        avro_converter(registry).to_connect("users", framed(V1, {"id": "u1"}, 11))
    converter = record_converter(registry, {})
    with pytest.raises(RecordError) as failure:
        converter.convert(KafkaRecord("s3_topic", 0, 5, 0, None, framed(V1, {"id": "u1"}, 11)))
    assert "offset=5" in str(failure.value) and not failure.value.skippable
    assert classify(failure.value) is None  # never tolerated


@pytest.mark.parametrize(
    ("rules", "settings"),
    [
        # Skipped as Confluent skips them: write-only rules, disabled ones (by the rule, by name, by type,
        # by default), rule sets enabled elsewhere.
        (DataRuleSet(domain=(rule("w", mode="WRITE"),)), {}),
        (DataRuleSet(domain=(rule("off", disabled=True),)), {}),
        (
            DataRuleSet(encoding=(rule("enc", mode="WRITEREAD", type_="ENCRYPT_PAYLOAD"),)),
            {"rule.executors.enc.disabled": "TRUE"},
        ),
        (DataRuleSet(domain=(rule("c"),)), {"rule.executors._CEL_.disabled": "true"}),
        (DataRuleSet(domain=(rule("c"),)), {"rule.executors._default_.disabled": "true"}),
        (DataRuleSet(domain=(rule("c"),), enable_at="CLIENT"), {}),
        (DataRuleSet(domain=(rule("c"),), enable_at="NONE"), {"execution.environment": "NONE"}),
        # Migration rules run only between versions (use.latest.*).
        (DataRuleSet(migration=(rule("m", mode="UPGRADE", type_="JSONATA"),)), {}),
        # No executor (rule.service.loader.enable=false): a NONE failure action lets the record through.
        (DataRuleSet(domain=(rule("c", on_failure="NONE"),)), {"rule.service.loader.enable": "false"}),
        (
            DataRuleSet(domain=(rule("c", mode="WRITEREAD", on_failure="ERROR,NONE"),)),
            {"rule.service.loader.enable": "false"},
        ),
        (
            DataRuleSet(domain=(rule("c"),)),
            {"rule.service.loader.enable": "false", "rule.executors.c.onFailure": "NONE"},
        ),
    ],
)
def test_rules_that_do_not_run_on_read_let_records_through(rules, settings):
    registry = SubjectRegistry({11: V1}, ids=[11], rule_sets={11: rules})
    data = avro_converter(registry, **settings).to_connect("users", framed(V1, {"id": "u1"}, 11))
    assert data.schema.writer_schema == V1


def test_an_enabled_at_environment_rule_runs_in_that_environment():
    rules = DataRuleSet(domain=(rule("c"),), enable_at="CLIENT")
    registry = SubjectRegistry({11: V1}, ids=[11], rule_sets={11: rules})
    with pytest.raises(UnrunnableRule):
        avro_converter(registry, **{"execution.environment": "CLIENT"}).to_connect("u", framed(V1, {"id": "1"}, 11))


@pytest.mark.parametrize(
    ("on_failure", "message"),
    [
        (None, r"Rule failed: c \(Could not find rule executor of type CEL\)"),
        ("ERROR", r"Rule failed: c"),
        # Only a two-sided rule (WRITEREAD, UPDOWN) splits "write,read": for a READ rule it is one action name.
        ("NONE,ERROR", r"Could not find rule action of type NONE,ERROR"),
        ("DLQ", r"Could not find rule action of type DLQ"),
    ],
)
def test_without_executors_a_rules_failure_action_fails_the_record(on_failure, message):
    rules = DataRuleSet(domain=(rule("c", on_failure=on_failure),))
    registry = SubjectRegistry({11: V1}, ids=[11], rule_sets={11: rules})
    converter = avro_converter(registry, **{"rule.service.loader.enable": "false"})
    with pytest.raises(ConversionError, match=message) as failure:
        converter.to_connect("users", framed(V1, {"id": "u1"}, 11))
    assert str(failure.value).startswith("Failed to deserialize data for topic users to Avro: ")


def test_migration_rules_between_the_writer_and_the_latest_version_would_run():
    migrate = DataRuleSet(migration=(rule("rename", mode="UPGRADE", type_="JSONATA", kind="TRANSFORM"),))
    registry = SubjectRegistry({11: V1, 12: V2, 13: V3}, ids=[11, 12, 13], rule_sets={12: migrate})
    converter = avro_converter(registry, **{"use.latest.version": "true"})
    with pytest.raises(UnrunnableRule, match="version 2 of subject users-value, upgrading records of schema id 11"):
        converter.to_connect("users", framed(V1, {"id": "u1"}, 11))
    # A record of version 2 or 3 needs no migration through version 2 (getMigrations skips the first version).
    assert converter.to_connect("users", framed(V2, {"id": "u2", "age": 1}, 12)).decoded == {"age": 1}
    # A DOWNGRADE rule is not an upgrade's.
    registry.rule_sets[12] = DataRuleSet(migration=(rule("down", mode="DOWNGRADE", type_="JSONATA"),))
    assert avro_converter(registry, **{"use.latest.version": "true"}).to_connect(
        "users", framed(V1, {"id": "u1"}, 11)
    ).decoded == {"age": 7}


def test_use_latest_version_for_json_schema_builds_the_latest_schemas_connect_schema_and_version():
    from kafka_s3_assets_tests.json_schema_helpers import framed_json

    def object_schema(*names):
        return {"type": "object", "title": "U", "properties": {n: {"type": "string"} for n in names}}

    registry = SubjectRegistry(
        {21: object_schema("a"), 22: object_schema("a", "b")}, ids=[21, 22], types={21: "JSON", 22: "JSON"}
    )
    settings = {"schema.registry.url": "http://r", "use.latest.version": "true"}
    config = validate_connector_config(
        base_config()
        | {"value.converter": "io.confluent.connect.json.JsonSchemaConverter"}
        | {f"value.converter.{k}": v for k, v in settings.items()}
    )
    converter = build_converter(config.value_converter, registry, is_key=False)
    data = converter.to_connect("users", framed_json(21, {"a": "x"}))
    # AbstractKafkaJsonSchemaDeserializer: the reader schema (copied with the latest version) is what
    # JsonSchemaConverter converts the payload with.
    assert [name for name, _ in data.schema.connect_schema.fields] == ["a", "b"]
    assert data.schema.connect_schema.version == 2 and data.schema.schema_id == 22
    assert data.decoded == {"a": "x", "b": None}


def test_use_latest_version_for_protobuf_parses_the_message_with_the_latest_descriptor():
    v1 = 'syntax = "proto3";\npackage p;\nmessage Order { string id = 1; }\n'
    v2 = (
        'syntax = "proto3";\npackage p;\nmessage Header { string h = 1; }\n'
        "message Order { string id = 1; int64 n = 2; }\n"
    )
    registry = SubjectRegistry({31: v1, 32: v2}, ids=[31, 32], types={31: "PROTOBUF", 32: "PROTOBUF"})
    settings = {"schema.registry.url": "http://r", "use.latest.version": "true"}
    config = validate_connector_config(
        base_config()
        | {"value.converter": "io.confluent.connect.protobuf.ProtobufConverter"}
        | {f"value.converter.{k}": v for k, v in settings.items()}
    )
    converter = build_converter(config.value_converter, registry, is_key=False)
    payload = b"\x0a\x02o1"  # Order{id: "o1"} of version 1
    data = converter.to_connect("orders", b"\x00" + struct.pack(">I", 31) + b"\x00" + payload)
    # The reader schema's message of the writer's name (p.Order, not its first message p.Header), with the
    # reader's (the latest's) version: AbstractKafkaProtobufDeserializer / ProtobufConverter.
    assert [name for name, _ in data.schema.connect_schema.fields] == ["id", "n"]
    assert data.schema.connect_schema.version == 2 and data.schema.registry_schema_id == 32
    assert data.decoded == {"id": "o1", "n": 0}
