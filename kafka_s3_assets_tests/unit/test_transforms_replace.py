"""ReplaceField, expectations from Kafka's ``ReplaceFieldTest`` (connect/transforms) and the KIP-629
translation of the legacy ``blacklist``/``whitelist`` names (``ConfigUtils.translateDeprecatedConfigs``)."""

from __future__ import annotations

import pytest

from kafka_s3_assets.sink.transforms.errors import TransformConfigError
from kafka_s3_assets.sink.transforms.replace import ReplaceFieldKey, ReplaceFieldValue

from .transform_helpers import BOOLEAN, INT32, STRING, prim, record, struct

pytestmark = pytest.mark.unit

SCHEMA = struct(
    ("dont", prim(STRING)),
    ("abc", prim(INT32)),
    ("foo", prim(BOOLEAN)),
    ("etc", prim(STRING)),
    name="com.acme.Row",
    version=3,
    optional=True,
)
VALUE = {"dont": "whatever", "abc": 42, "foo": True, "etc": "etc"}


def test_schemaless_exclude_and_renames():
    # ReplaceFieldTest.schemaless.
    transform = ReplaceFieldValue({"exclude": "dont", "renames": "abc:xyz,foo:bar"})
    out = transform.apply(record(None, dict(VALUE)))
    assert out is not None and out.value == {"xyz": 42, "bar": True, "etc": "etc"}


def test_with_schema_include_and_renames():
    # ReplaceFieldTest.withSchema, plus the schema rules: basics kept (name, version), not optional, order kept.
    transform = ReplaceFieldValue({"include": "abc,foo", "renames": "abc:xyz,foo:bar"})
    out = transform.apply(record(SCHEMA, dict(VALUE)))
    assert out is not None and out.value_schema is not None
    assert out.value == {"xyz": 42, "bar": True}
    assert [name for name, _ in out.value_schema.fields] == ["xyz", "bar"]
    assert (out.value_schema.name, out.value_schema.version, out.value_schema.optional) == ("com.acme.Row", 3, False)
    assert transform.apply(record(SCHEMA, dict(VALUE))).value_schema is out.value_schema  # one plan per schema


def test_exclude_wins_over_include():
    transform = ReplaceFieldValue({"include": "abc,dont", "exclude": "dont"})
    out = transform.apply(record(SCHEMA, dict(VALUE)))
    assert out is not None and out.value == {"abc": 42}


def test_tombstones_pass():
    # ReplaceFieldTest.tombstoneSchemaless / tombstoneWithSchema.
    transform = ReplaceFieldValue({"include": "abc"})
    for tombstone in (record(None, None), record(SCHEMA, None)):
        assert transform.apply(tombstone) is tombstone


def test_key_variant():
    transform = ReplaceFieldKey({"exclude": "dont"})
    out = transform.apply(record(None, "v", key_schema=SCHEMA, key=dict(VALUE)))
    assert out is not None and out.key == {"abc": 42, "foo": True, "etc": "etc"} and out.value == "v"


def test_invalid_rename_mapping():
    with pytest.raises(TransformConfigError) as error:
        ReplaceFieldValue({"renames": "a:b:c"})
    assert error.value.message("transforms.r.") == (
        "Invalid value [a:b:c] for configuration transforms.r.renames: Invalid rename mapping: a:b:c"
    )


def test_legacy_names_are_read_with_a_warning():
    # testExcludeBackwardsCompatibility / testIncludeBackwardsCompatibility (Kafka 2.8-3.9).
    legacy = ReplaceFieldValue({"blacklist": "dont", "whitelist": "abc,dont"})
    out = legacy.apply(record(SCHEMA, dict(VALUE)))
    assert out is not None and out.value == {"abc": 42}
    assert any("blacklist is deprecated" in w and "use exclude instead" in w for w in legacy.warnings)
    both = ReplaceFieldValue({"blacklist": "abc", "exclude": "dont"})
    assert both.apply(record(SCHEMA, dict(VALUE))).value == {"abc": 42, "foo": True, "etc": "etc"}
    assert any("Using the value of exclude" in w for w in both.warnings)


def test_null_field_reads_as_its_default():
    schema = struct(("a", prim(STRING, optional=True, default="d")))
    assert ReplaceFieldValue({}).apply(record(schema, {"a": None})).value == {"a": "d"}
    off = ReplaceFieldValue({"replace.null.with.default": "false"})
    assert off.apply(record(schema, {"a": None})).value == {"a": None}
