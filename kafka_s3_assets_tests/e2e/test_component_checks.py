"""The checks of a KafkaS3SinkComponent's export asset as Dagster users expect them, on the devstack: the
completeness check is blocking with ERROR severity, the lag check (when the component sets a limit) is
not blocking and has WARN severity. A failing lag check leaves a run successful (late data is sound
data); a failing completeness check fails it. Evaluated by a check-only run and by the export sensor."""

import json

import dagster as dg
import pytest

from kafka_s3_assets.defs.component import KafkaS3SinkComponent

from ..conftest import connector_config
from ..exporting import export

pytestmark = [pytest.mark.e2e, pytest.mark.kafka, pytest.mark.s3, pytest.mark.dagster]

BYTES = {
    "format.class": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
    "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
}
COMPLETENESS, LAG = "manifests_contiguous", "lag_within_limits"


def test_completeness_is_blocking_with_error_severity_and_lag_warns(kafka, bucket, s3_client, tmp_path):
    topic = kafka.create_topic("severity")
    kafka.produce(topic, [f"v{i}".encode() for i in range(5)])
    config = connector_config(topic, bucket, **BYTES)
    assert export(config, topic, succeed=True).next_offset == 3  # flush.size 3: offsets 3..4 wait, lag 2
    document = {"name": config.pop("name"), "config": config}
    (tmp_path / "connector.json").write_text(json.dumps(document))
    component = KafkaS3SinkComponent.from_attributes_dict(
        attributes={"connector": "connector.json", "lag": {"max_records": 1}}
    )
    defs = component.definitions(tmp_path)
    key = dg.AssetKey(["kafka_s3", document["name"], topic])
    asset = defs.resolve_assets_def(key)
    specs = {c.name: c for c in asset.check_specs}
    assert (specs[COMPLETENESS].blocking, specs[LAG].blocking) == (True, False)
    checks = dg.AssetSelection.checks(*(dg.AssetCheckKey(key, name) for name in (COMPLETENESS, LAG)))
    partition = f"{topic}/0"

    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(asset.partitions_def.name, [partition])
        # A check-only run (of every known topic-partition). The lag is over its limit: the check fails with
        # WARN, and the run succeeds.
        checked = dg.materialize([asset], instance=instance, selection=checks, raise_on_error=False)
        assert checked.success
        evaluations = {e.check_name: e for e in checked.get_asset_check_evaluations()}
        assert (evaluations[LAG].passed, evaluations[LAG].severity) == (False, dg.AssetCheckSeverity.WARN)
        assert (evaluations[COMPLETENESS].passed, evaluations[COMPLETENESS].severity) == (
            True,
            dg.AssetCheckSeverity.ERROR,
        )

        # The export sensor's lag evaluation warns as well.
        context = dg.build_sensor_context(instance=instance, instance_ref=instance.get_ref(), definitions=defs)
        tick = defs.resolve_sensor_def(f"export_new_records__sink_{topic}").evaluate_tick(context)
        [sensor_lag] = [e for e in tick.asset_events if isinstance(e, dg.AssetCheckEvaluation)]
        assert (sensor_lag.check_name, sensor_lag.passed, sensor_lag.severity) == (
            LAG,
            False,
            dg.AssetCheckSeverity.WARN,
        )

        # A broken history: the completeness check fails with ERROR and, blocking, fails the run.
        s3_client.delete_object(Bucket=bucket, Key=f"topics/{topic}/partition=0/{topic}+0+0000000000.bin")
        broken = dg.materialize([asset], instance=instance, selection=checks, raise_on_error=False)
        assert not broken.success
        evaluations = {e.check_name: e for e in broken.get_asset_check_evaluations()}
        assert (evaluations[COMPLETENESS].passed, evaluations[COMPLETENESS].severity) == (
            False,
            dg.AssetCheckSeverity.ERROR,
        )
        assert evaluations[LAG].severity == dg.AssetCheckSeverity.WARN
        [failure] = [e for e in broken.all_events if e.is_step_failure]
        assert failure.step_failure_data.user_failure_data.description.startswith(
            f"Blocking check {COMPLETENESS} of {partition} failed: missing object"
        )
