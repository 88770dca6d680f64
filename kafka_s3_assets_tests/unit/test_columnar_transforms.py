"""Which chains the columnar path runs (``transforms.columnar``) and the columns it makes: InsertField and
ReplaceField of values without predicates, planned against the output schema the chain itself builds."""

from __future__ import annotations

import pyarrow as pa
import pytest

from kafka_s3_assets.sink.schema.connect_schema import INT32, STRING, STRUCT, ConnectSchema
from kafka_s3_assets.sink.transforms import TransformRecord, parse_chain
from kafka_s3_assets.sink.transforms.columnar import column_plan, columnar_chain

pytestmark = [pytest.mark.unit]

T = "org.apache.kafka.connect.transforms."
SOURCE = ConnectSchema(
    STRUCT, name="com.acme.Order", fields=[("id", ConnectSchema(INT32)), ("note", ConnectSchema(STRING, optional=True))]
)


def chain(**config):
    return parse_chain(config)


def output_of(transforms, schema=SOURCE) -> ConnectSchema:
    record = TransformRecord("orders", 1, 5, 1000, None, None, schema, {"id": 1, "note": "x"})
    out = transforms.apply(record)
    assert out is not None
    return out.value_schema


LINEAGE = chain(
    transforms="ins,rep",
    **{
        "transforms.ins.type": T + "InsertField$Value",
        "transforms.ins.offset.field": "off",
        "transforms.ins.timestamp.field": "ts",
        "transforms.rep.type": T + "ReplaceField$Value",
        "transforms.rep.exclude": "note",
        "transforms.rep.renames": "id:order_id,off:kafka_offset",
    },
)


def test_insert_and_replace_plan_the_chains_own_output_columns():
    plan = column_plan(LINEAGE, SOURCE, output_of(LINEAGE))
    assert plan is not None
    assert plan.columns == (
        ("order_id", ("field", "id")),
        ("kafka_offset", ("offset", None)),
        ("ts", ("timestamp", None)),
    )
    rows = pa.RecordBatch.from_pydict({"id": pa.array([1, 2], pa.int32()), "note": ["a", None]})
    target = pa.schema(
        [
            pa.field("order_id", pa.int32(), nullable=False),
            pa.field("kafka_offset", pa.int64()),
            pa.field("ts", pa.timestamp("ms", tz="UTC")),
        ]
    )
    out = plan.apply(rows, target, "orders", 1, [5, 6], [1000, None])
    assert out.to_pylist()[0]["order_id"] == 1 and out.column("kafka_offset").to_pylist() == [5, 6]
    assert out.column("ts").null_count == 1


def test_a_required_field_with_a_null_is_left_to_the_record_path():
    required = chain(
        transforms="ins", **{"transforms.ins.type": T + "InsertField$Value", "transforms.ins.timestamp.field": "ts!"}
    )
    plan = column_plan(required, SOURCE, output_of(required))
    assert plan is not None
    rows = pa.RecordBatch.from_pydict({"id": pa.array([1], pa.int32()), "note": ["a"]})
    target = pa.schema(
        [
            pa.field("id", pa.int32(), False),
            pa.field("note", pa.string()),
            pa.field("ts", pa.timestamp("ms", "UTC"), False),
        ]
    )
    with pytest.raises(ValueError, match="required field ts"):
        plan.apply(rows, target, "orders", 1, [5], [None])


@pytest.mark.parametrize(
    "config",
    [
        {"transforms.x.type": T + "MaskField$Value", "transforms.x.fields": "note"},
        {"transforms.x.type": T + "InsertField$Key", "transforms.x.offset.field": "off"},
        {
            "transforms.x.type": T + "InsertField$Value",
            "transforms.x.offset.field": "off",
            "transforms.x.predicate": "p",
            "predicates": "p",
            "predicates.p.type": "RecordIsTombstone",
        },
    ],
    ids=["another transform", "a key variant", "a predicate"],
)
def test_other_chains_go_record_by_record(config):
    assert not columnar_chain(chain(transforms="x", **config))


def test_a_field_whose_null_reads_as_its_default_goes_record_by_record():
    defaulted = ConnectSchema(
        STRUCT, fields=[("id", ConnectSchema(INT32)), ("note", ConnectSchema(STRING, optional=True, default="-"))]
    )
    assert column_plan(LINEAGE, defaulted, output_of(LINEAGE, defaulted)) is None


def test_a_plan_that_does_not_give_the_chains_output_is_refused():
    other = ConnectSchema(STRUCT, fields=[("something", ConnectSchema(INT32))])
    assert column_plan(LINEAGE, SOURCE, other) is None
