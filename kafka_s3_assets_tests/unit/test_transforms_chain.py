"""The chain: ``transforms``/``predicates`` parsed and validated as Connect's ``ConnectorConfig`` does
(messages as Connect words them, each naming its key), and applied as ``TransformationChain`` and
``TransformationStage`` apply them (in order, predicates on the already-transformed record, null drops)."""

from __future__ import annotations

import pytest

from kafka_s3_assets.sink.errors import ConfigError
from kafka_s3_assets.sink.schema.connect_schema import INT64, STRING, TIMESTAMP, ConnectSchema
from kafka_s3_assets.sink.transforms import TransformError, parse_chain
from kafka_s3_assets.sink.transforms.chain import Stage, TransformChain, build_chain
from kafka_s3_assets.sink.transforms.filter import Filter
from kafka_s3_assets.sink.transforms.predicates import RecordIsTombstone
from kafka_s3_assets.sink.transforms.record import Header

from .transform_helpers import INT32, prim, record, struct

pytestmark = pytest.mark.unit

KAFKA = "org.apache.kafka.connect.transforms."
SCHEMA = struct(("id", prim(INT32)), ("secret", prim(STRING)), ("name", prim(STRING)), name="Row", version=1)
ROW = {"id": 1, "secret": "s", "name": "n"}


def problems(config: dict) -> dict[str, str]:
    _, found = build_chain(config)
    return {p.key: p.message for p in found}


def test_lineage_setup_applies_in_order():
    # The common setup: InsertField (offset, partition, timestamp) then ReplaceField (exclude).
    chain = parse_chain(
        {
            "transforms": "insertSource, dropPii",
            "transforms.insertSource.type": KAFKA + "InsertField$Value",
            "transforms.insertSource.offset.field": "kafka_offset",
            "transforms.insertSource.partition.field": "kafka_partition",
            "transforms.insertSource.timestamp.field": "kafka_timestamp",
            "transforms.dropPii.type": KAFKA + "ReplaceField$Value",
            "transforms.dropPii.exclude": "secret",
        }
    )
    assert [stage.alias for stage in chain.stages] == ["insertSource", "dropPii"]
    out = chain.apply(record(SCHEMA, dict(ROW), partition=3, offset=42, timestamp=1000))
    assert out is not None
    assert out.value == {"id": 1, "name": "n", "kafka_partition": 3, "kafka_offset": 42, "kafka_timestamp": 1000}
    assert dict(out.value_schema.fields)["kafka_timestamp"] == ConnectSchema(
        INT64, optional=True, name=TIMESTAMP, version=1
    )
    assert out.offset == 42 and not chain.may_change_topic


def test_filter_with_record_is_tombstone():
    # The "drop tombstones before S3" setup: Filter + RecordIsTombstone; with negate, the opposite.
    config = {
        "transforms": "dropTombstone",
        "transforms.dropTombstone.type": KAFKA + "Filter",
        "transforms.dropTombstone.predicate": "isTombstone",
        "predicates": "isTombstone",
        "predicates.isTombstone.type": KAFKA + "predicates.RecordIsTombstone",
    }
    chain = parse_chain(config)
    assert chain.apply(record(SCHEMA, None)) is None
    kept = record(SCHEMA, dict(ROW))
    assert chain.apply(kept) is kept
    negated = parse_chain({**config, "transforms.dropTombstone.negate": "true"})
    assert negated.apply(record(SCHEMA, None)) is not None
    assert negated.apply(kept) is None


def test_guarded_mask_and_header_filter():
    # MaskField fails on tombstones; the usual guard is a negated RecordIsTombstone. HasHeaderKey filter after.
    chain = parse_chain(
        {
            "transforms": "mask,dropTest",
            "transforms.mask.type": KAFKA + "MaskField$Value",
            "transforms.mask.fields": "secret",
            "transforms.mask.predicate": "isTombstone",
            "transforms.mask.negate": "true",
            "transforms.dropTest.type": "Filter",  # the simple-name alias of a class that is not nested
            "transforms.dropTest.predicate": "isTest",
            "predicates": "isTombstone,isTest",
            "predicates.isTombstone.type": KAFKA + "predicates.RecordIsTombstone",
            "predicates.isTest.type": "HasHeaderKey",
            "predicates.isTest.name": "test",
        }
    )
    assert chain.apply(record(SCHEMA, None)) is not None
    assert chain.apply(record(SCHEMA, dict(ROW))).value["secret"] == ""
    assert chain.apply(record(SCHEMA, dict(ROW), headers=(Header("test", None, None),))) is None


def test_predicates_see_the_transformed_record():
    # TransformationStage: the predicate tests the output of the previous stages (here the routed topic).
    chain = parse_chain(
        {
            "transforms": "route,drop",
            "transforms.route.type": KAFKA + "RegexRouter",
            "transforms.route.regex": "orders",
            "transforms.route.replacement": "renamed",
            "transforms.drop.type": KAFKA + "Filter",
            "transforms.drop.predicate": "isRenamed",
            "predicates": "isRenamed",
            "predicates.isRenamed.type": KAFKA + "predicates.TopicNameMatches",
            "predicates.isRenamed.pattern": "renamed",
        }
    )
    assert chain.may_change_topic
    assert chain.apply(record(topic="orders")) is None
    assert chain.apply(record(topic="other")).topic == "other"


def test_empty_config_is_an_empty_chain():
    chain = parse_chain({"name": "x", "topics": "t"})
    assert not chain and chain.apply(record(topic="t")).topic == "t"
    assert not parse_chain({"transforms": ""})


@pytest.mark.parametrize(
    ("config", "key", "message"),
    [
        (
            {"transforms": "a"},
            "transforms.a.type",
            'Missing required configuration "transforms.a.type" which has no default value.',
        ),
        (
            {"transforms": "a,a", "transforms.a.type": KAFKA + "Filter"},
            "transforms",
            "Invalid value [a, a] for configuration transforms: Duplicate alias provided.",
        ),
        (
            {"transforms": "a", "transforms.a.type": KAFKA + "Cast"},
            "transforms.a.type",
            f"Invalid value {KAFKA}Cast for configuration transforms.a.type: This class is abstract and cannot be "
            f"created. Did you mean {KAFKA}Cast$Key, {KAFKA}Cast$Value?",
        ),
        (
            {"transforms": "a", "transforms.a.type": KAFKA + "predicates.HasHeaderKey"},
            "transforms.a.type",
            f"Class class {KAFKA}predicates.HasHeaderKey does not implement the Transformation interface",
        ),
        (
            {"transforms": "a", "transforms.a.type": KAFKA + "Filter", "transforms.a.negate": "true"},
            "transforms.a.negate",
            "Config 'transforms.a.negate' was provided but there is no config 'transforms.a.predicate' defining a "
            "predicate to be negated.",
        ),
        (
            {"transforms": "c", "transforms.c.type": KAFKA + "Cast$Value"},
            "transforms.c.spec",
            'Missing required configuration "transforms.c.spec" which has no default value.',
        ),
        (
            {"transforms": "r", "transforms.r.type": KAFKA + "ReplaceField$Value", "transforms.r.renames": "a:b:c"},
            "transforms.r.renames",
            "Invalid value [a:b:c] for configuration transforms.r.renames: Invalid rename mapping: a:b:c",
        ),
        (
            {"transforms": "i", "transforms.i.type": KAFKA + "InsertField$Value"},
            "transforms.i.type",
            "No field insertion configured",
        ),
        (
            {"transforms": "a", "transforms.a.type": KAFKA + "Filter", "transforms.a.predicate": "p"},
            "transforms.a.predicate",
            "Invalid value p for configuration transforms.a.predicate: the predicate 'p' is not listed in 'predicates'",
        ),
        (
            {"predicates": "p", "predicates.p.type": KAFKA + "predicates.TopicNameMatches"},
            "predicates.p.pattern",
            'Missing required configuration "predicates.p.pattern" which has no default value.',
        ),
        (
            {
                "transforms": "s",
                "transforms.s.type": KAFKA + "SetSchemaMetadata$Value",
                "transforms.s.schema.version": None,
            },
            "transforms.s.schema.version",
            "Null value can not be supplied as the configuration value.",
        ),
    ],
)
def test_validation_messages(config, key, message):
    found = problems(config)
    assert key in found, found
    assert found[key].startswith(message), found[key]


def test_unknown_classes_name_the_alias_and_the_class():
    found = problems(
        {
            "transforms": "custom,router,confluent",
            "transforms.custom.type": "com.acme.MyTransform",
            "transforms.router.type": "io.debezium.transforms.ByLogicalTableRouter",
            "transforms.confluent.type": "io.confluent.connect.transforms.TombstoneHandler",
        }
    )
    assert found["transforms.custom.type"].startswith(
        "Invalid value com.acme.MyTransform for configuration transforms.custom.type: "
        "Class com.acme.MyTransform could not be found."
    )
    assert "io.debezium.transforms.ExtractNewRecordState" in found["transforms.custom.type"]
    assert "ByLogicalTableRouter is not supported by kafka_s3_assets" in found["transforms.router.type"]
    assert "TombstoneHandler is not supported by kafka_s3_assets" in found["transforms.confluent.type"]


def test_every_problem_is_reported_at_once():
    with pytest.raises(ConfigError) as error:
        parse_chain(
            {
                "transforms": "a,b",
                "transforms.b.type": KAFKA + "Cast$Value",
                "transforms.b.spec": "x:nope",
            }
        )
    keys = [problem.key for problem in error.value.problems]
    assert keys == ["transforms.a.type", "transforms.b.spec"]  # Cast's spec validator refuses it
    assert "Invalid type found in casting spec: nope" in str(error.value)


def test_warnings_for_unlisted_aliases_and_legacy_keys():
    chain, found = build_chain(
        {
            "transforms": "unwrap,drop",
            "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
            "transforms.unwrap.drop.tombstones": "false",
            "transforms.drop.type": KAFKA + "ReplaceField$Value",
            "transforms.drop.blacklist": "secret",
            "transforms.dorp.exclude": "typo",
            "transforms.unwrap.plugin.version": "3.6.1",  # KIP-891: accepted
        }
    )
    assert found == []
    text = "\n".join(chain.warnings)
    assert "transforms.unwrap (io.debezium.transforms.ExtractNewRecordState): 'drop.tombstones' is ignored" in text
    assert "Configuration key blacklist is deprecated" in text
    assert "Keys under 'transforms.dorp.' are ignored: 'dorp' is not listed in 'transforms'" in text


def test_failures_name_the_alias_and_the_class():
    # TRANSFORMATION stage: any exception from a transform, or from its predicate, is reported with the
    # transform's class.
    chain = parse_chain(
        {"transforms": "mask", "transforms.mask.type": KAFKA + "MaskField$Value", "transforms.mask.fields": "x"}
    )
    with pytest.raises(TransformError) as error:
        chain.apply(record(SCHEMA, None))
    assert error.value.alias == "mask" and error.value.class_name == KAFKA + "MaskField$Value"
    assert error.value.stage == "TRANSFORMATION"
    assert "Only Struct objects supported for [mask fields], found: null" in str(error.value)
    assert error.value.__cause__ is not None

    class Exploding(RecordIsTombstone):
        def test(self, record):
            raise RuntimeError("boom")

    stage = Stage("f", Filter({}), Exploding({}), "p")
    with pytest.raises(
        TransformError, match=r"Transform 'f' \(org.apache.kafka.connect.transforms.Filter\) failed: boom"
    ):
        TransformChain((stage,)).apply(record())


def test_transforms_receive_their_keys_without_the_prefix_and_ignore_others():
    # configure() gets originalsWithPrefix: type included, predicate/negate removed; unknown keys pass through.
    chain = parse_chain(
        {
            "transforms": "h",
            "transforms.h.type": KAFKA + "HoistField$Value",
            "transforms.h.field": "payload",
            "transforms.h.some.unknown.key": "ignored",
        }
    )
    assert chain.apply(record(prim(STRING, optional=True), "raw")).value == {"payload": "raw"}
