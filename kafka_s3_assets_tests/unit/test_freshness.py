"""The export assets' freshness policy (``defs.freshness``): its windows for each rotation setting, the
component's ``freshness`` attribute in a ``defs.yaml``, and Dagster's own freshness daemon judging an
export asset from the materializations in a real instance (a stale export FAILs)."""

from __future__ import annotations

import json
import time
from datetime import timedelta
from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster._core.definitions.freshness import FreshnessState, TimeWindowFreshnessPolicy
from dagster._core.events import StepMaterializationData
from dagster._core.remote_origin import InProcessCodeLocationOrigin
from dagster._core.storage.dagster_run import make_new_run_id
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
from dagster._core.workspace.context import WorkspaceProcessContext
from dagster._core.workspace.load_target import InProcessWorkspaceLoadTarget
from dagster._daemon.freshness import FreshnessDaemon
from dagster.components.testing import create_defs_folder_sandbox

from kafka_s3_assets.defs.assets import build_export_asset
from kafka_s3_assets.defs.component import ConnectorConfigProblem, KafkaS3SinkComponent
from kafka_s3_assets.defs.connectors import ConnectorSpec
from kafka_s3_assets.defs.freshness import (
    FLUSH_ONLY_BASIS_S,
    RUN_ALLOWANCE_S,
    FreshnessWindows,
    derived_windows,
    freshness_policy,
    freshness_windows,
    rotation_bound_s,
)
from kafka_s3_assets.defs.options import AssetAttributes, Freshness
from kafka_s3_assets.sink.config import validate_connector_config

pytestmark = [pytest.mark.unit, pytest.mark.dagster]

BASE = {
    "name": "orders-sink",
    "connector.class": "io.confluent.connect.s3.S3SinkConnector",
    "topics": "orders",
    "flush.size": "1000",
    "format.class": "io.confluent.connect.s3.format.avro.AvroFormat",
    "storage.class": "io.confluent.connect.s3.storage.S3Storage",
    "s3.bucket.name": "bucket",
    "s3.region": "us-east-1",
    "bootstrap.servers": "kafka.invalid:9092",
}
TIME_BASED = {
    "partitioner.class": "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
    "partition.duration.ms": "3600000",
    "path.format": "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH",
    "locale": "en-US",
    "timezone": "UTC",
    "timestamp.extractor": "Record",
}
HOUR_MS, TEN_MINUTES_MS = 3_600_000, 600_000


def config(**overrides):
    return validate_connector_config({**BASE, **overrides})


def spec(**overrides) -> ConnectorSpec:
    raw = {**BASE, **overrides}
    return ConnectorSpec(raw, validate_connector_config(raw), "<test>")


def windows(**overrides) -> tuple[int, int | None]:
    w = derived_windows(config(**overrides), export_interval_s=30)
    return w.fail_s, w.warn_s


# The derived windows: warn = rotation bound + the export sensor's interval + RUN_ALLOWANCE_S; fail = 2 x warn.


def test_flush_size_alone_bounds_nothing_in_time_so_a_day_stands_in():
    assert rotation_bound_s(config()) is None
    assert (FLUSH_ONLY_BASIS_S, RUN_ALLOWANCE_S) == (86_400, 300)
    assert windows() == (2 * 86_730, 86_730)  # 86,400 + 30 + 300


def test_rotate_interval_bounds_the_windows_with_a_time_based_partitioner():
    overrides = {**TIME_BASED, "rotate.interval.ms": str(TEN_MINUTES_MS)}
    assert rotation_bound_s(config(**overrides)) == 600
    assert windows(**overrides) == (1_860, 930)  # 600 + 30 + 300


def test_rotate_interval_without_a_timestamp_extractor_is_ignored_as_the_writer_ignores_it():
    assert rotation_bound_s(config(**{"rotate.interval.ms": str(TEN_MINUTES_MS)})) is None
    assert windows(**{"rotate.interval.ms": str(TEN_MINUTES_MS)}) == windows()


def test_rotate_schedule_interval_bounds_the_windows_with_any_partitioner():
    overrides = {"rotate.schedule.interval.ms": str(HOUR_MS), "timezone": "UTC"}
    assert rotation_bound_s(config(**overrides)) == 3_600
    assert windows(**overrides) == (7_860, 3_930)  # 3,600 + 30 + 300


def test_with_both_rotations_the_sooner_one_bounds_the_windows():
    hourly_schedule = {**TIME_BASED, "rotate.schedule.interval.ms": str(HOUR_MS)}
    assert windows(**hourly_schedule, **{"rotate.interval.ms": str(TEN_MINUTES_MS)}) == (1_860, 930)
    assert windows(
        **{**hourly_schedule, "rotate.schedule.interval.ms": "300000"}, **{"rotate.interval.ms": "900000"}
    ) == (
        1_260,
        630,  # 300 + 30 + 300
    )


def test_the_export_sensors_interval_and_partial_seconds_count():
    overrides = {"rotate.schedule.interval.ms": "90500", "timezone": "UTC"}
    assert rotation_bound_s(config(**overrides)) == 91  # rounded up
    assert derived_windows(config(**overrides), export_interval_s=120) == FreshnessWindows(1_022, 511)


def test_the_policy_is_dagsters_new_style_time_window():
    policy = freshness_policy(config(**{"rotate.schedule.interval.ms": str(HOUR_MS), "timezone": "UTC"}))
    assert isinstance(policy, TimeWindowFreshnessPolicy) and isinstance(policy, dg.FreshnessPolicy)
    assert policy.fail_window.to_timedelta() == timedelta(seconds=7_860)
    assert policy.warn_window is not None and policy.warn_window.to_timedelta() == timedelta(seconds=3_930)


# Overrides (options.Freshness, which the component's `freshness` attribute makes).


def test_given_windows_replace_the_derived_ones_and_none_turns_the_policy_off():
    hourly = config(**{"rotate.schedule.interval.ms": str(HOUR_MS), "timezone": "UTC"})
    assert freshness_windows(hourly, Freshness(fail_window_s=7_200)) == FreshnessWindows(7_200, None)
    assert freshness_windows(hourly, Freshness(fail_window_s=7_200, warn_window_s=600)) == FreshnessWindows(7_200, 600)
    assert freshness_windows(hourly, Freshness(warn_window_s=1_200)) == FreshnessWindows(7_860, 1_200)
    assert freshness_windows(hourly, Freshness(export_interval_s=600)) == FreshnessWindows(9_000, 4_500)
    assert freshness_windows(hourly, Freshness(enabled=False)) is None
    assert freshness_policy(hourly, Freshness(enabled=False)) is None


def test_windows_dagster_would_refuse_are_refused_naming_the_attribute():
    hourly = config(**{"rotate.schedule.interval.ms": str(HOUR_MS), "timezone": "UTC"})
    with pytest.raises(
        ValueError, match=r"warn_window_seconds \(9000\) must be less than fail_window_seconds \(7860\)"
    ):
        freshness_windows(hourly, Freshness(warn_window_s=9_000))
    with pytest.raises(ValueError, match="fail_window_seconds is 30 s: at least 60 s"):
        freshness_windows(hourly, Freshness(fail_window_s=30))


def test_the_export_asset_carries_the_policy_and_none_when_turned_off():
    connector = spec(**{"rotate.schedule.interval.ms": str(HOUR_MS), "timezone": "UTC"})
    key = dg.AssetKey(["kafka_s3", "orders-sink", "orders"])
    policy = build_export_asset(connector, "orders").specs_by_key[key].freshness_policy
    assert policy == freshness_policy(connector.config)
    off = AssetAttributes(freshness=Freshness(enabled=False))
    assert build_export_asset(connector, "orders", attributes=off).specs_by_key[key].freshness_policy is None


# The component's `freshness` attribute, in a defs.yaml as Dagster loads it.


def load_defs_yaml(attributes: dict, connector: dict) -> dg.Definitions:
    with create_defs_folder_sandbox() as sandbox:
        folder = sandbox.defs_folder_path / "exports"
        folder.mkdir()
        (folder / "connector.json").write_text(json.dumps(connector))
        document = {
            "type": "kafka_s3_assets.KafkaS3SinkComponent",
            "attributes": {"connector": "connector.json", **attributes},
        }
        (folder / "defs.yaml").write_text(yaml.safe_dump(document))
        with sandbox.load_component_and_build_defs(defs_path=folder) as (_, defs):
            return defs


def policy_in(defs: dg.Definitions) -> dg.FreshnessPolicy | None:
    key = dg.AssetKey(["kafka_s3", "orders-sink", "orders"])
    return defs.resolve_assets_def(key).specs_by_key[key].freshness_policy


def seconds(window) -> float | None:
    return None if window is None else window.to_timedelta().total_seconds()


HOURLY_CONNECTOR = {**BASE, "rotate.schedule.interval.ms": str(HOUR_MS), "timezone": "UTC"}


def test_defs_yaml_without_freshness_gets_the_derived_policy_with_its_export_sensors_interval():
    policy = policy_in(load_defs_yaml({"export_sensor": {"minimum_interval_seconds": 120}}, HOURLY_CONNECTOR))
    assert isinstance(policy, TimeWindowFreshnessPolicy)
    assert (seconds(policy.fail_window), seconds(policy.warn_window)) == (8_040, 4_020)  # 3,600 + 120 + 300


def test_defs_yaml_freshness_windows_override_the_derived_ones():
    policy = policy_in(
        load_defs_yaml({"freshness": {"fail_window_seconds": 5_400, "warn_window_seconds": 1_800}}, HOURLY_CONNECTOR)
    )
    assert isinstance(policy, TimeWindowFreshnessPolicy)
    assert (seconds(policy.fail_window), seconds(policy.warn_window)) == (5_400, 1_800)
    policy = policy_in(load_defs_yaml({"freshness": {"fail_window_seconds": 5_400}}, HOURLY_CONNECTOR))
    assert isinstance(policy, TimeWindowFreshnessPolicy)
    assert (seconds(policy.fail_window), seconds(policy.warn_window)) == (5_400, None)


def test_defs_yaml_freshness_none_turns_the_policy_off():
    assert policy_in(load_defs_yaml({"freshness": "none"}, HOURLY_CONNECTOR)) is None


def test_a_bad_freshness_attribute_is_named():
    c = KafkaS3SinkComponent.from_attributes_dict(attributes={"config": BASE, "freshness": "off"})
    with pytest.raises(ConnectorConfigProblem, match=r"attribute `freshness`: `none` or .*not 'off'"):
        c.freshness_settings()
    c = KafkaS3SinkComponent.from_attributes_dict(
        attributes={"config": BASE, "freshness": {"fail_window_seconds": 600, "warn_window_seconds": 600}}
    )
    with pytest.raises(ConnectorConfigProblem, match=r"warn_window_seconds \(600\) must be less than"):
        c.freshness_settings()


# Dagster's freshness daemon judging export assets from the materializations in an instance.

DEFS_FILE = """
import dagster as dg
from kafka_s3_assets.defs.assets import build_export_asset
from kafka_s3_assets.defs.connectors import ConnectorSpec
from kafka_s3_assets.defs.options import AssetAttributes, Freshness
from kafka_s3_assets.sink.config import validate_connector_config

RAW = {raw!r}
connector = ConnectorSpec(RAW, validate_connector_config(RAW), "<test>")
off = AssetAttributes(key_prefix=("off",), freshness=Freshness(enabled=False))
defs = dg.Definitions(
    assets=[build_export_asset(connector, t) for t in ("orders", "payments", "refunds")]
    + [build_export_asset(connector, "orders", attributes=off)]
)
"""


def store_materialization(instance: dg.DagsterInstance, key: dg.AssetKey, partition: str, timestamp: float) -> None:
    """A materialization of ``partition`` recorded at ``timestamp``, as a run would have recorded it then."""
    instance.store_event(
        dg.EventLogEntry(
            error_info=None,
            user_message="",
            level="debug",
            run_id=make_new_run_id(),
            timestamp=timestamp,
            dagster_event=dg.DagsterEvent(
                dg.DagsterEventType.ASSET_MATERIALIZATION.value,
                "export",
                event_specific_data=StepMaterializationData(
                    materialization=dg.AssetMaterialization(asset_key=key, partition=partition)
                ),
            ),
        )
    )


def test_the_freshness_daemon_fails_a_stale_export_warns_a_late_one_and_passes_a_fresh_one(tmp_path: Path):
    raw = {**HOURLY_CONNECTOR, "topics": "orders,payments,refunds"}
    windows = derived_windows(validate_connector_config(raw), export_interval_s=30)
    assert (windows.fail_s, windows.warn_s) == (7_860, 3_930)
    (tmp_path / "freshness_defs.py").write_text(DEFS_FILE.format(raw=raw))
    origin = InProcessCodeLocationOrigin(
        LoadableTargetOrigin(python_file=str(tmp_path / "freshness_defs.py"), attribute="defs")
    )

    def key(topic: str, prefix: str = "kafka_s3") -> dg.AssetKey:
        return dg.AssetKey([prefix, "orders-sink", topic])

    with dg.instance_for_test() as instance:
        now = time.time()
        store_materialization(instance, key("orders"), "orders/0", now - windows.fail_s - 60)  # stale
        store_materialization(instance, key("payments"), "payments/0", now - windows.fail_s - 600)
        store_materialization(instance, key("payments"), "payments/1", now - windows.warn_s - 60)  # late
        store_materialization(instance, key("refunds"), "refunds/2", now - 60)  # fresh
        store_materialization(instance, key("orders", "off"), "orders/0", now - windows.fail_s - 60)
        with WorkspaceProcessContext(instance, InProcessWorkspaceLoadTarget(origin)) as workspace:
            for _ in FreshnessDaemon().run_iteration(workspace):
                pass
        keys = [key("orders"), key("payments"), key("refunds"), key("orders", "off")]
        states = {
            k.path[-1] if k.path[0] == "kafka_s3" else "off": r.freshness_state
            for k, r in instance.get_freshness_state_records(keys).items()
        }
    assert states == {
        "orders": FreshnessState.FAIL,
        "payments": FreshnessState.WARN,  # the latest materialization of any partition counts
        "refunds": FreshnessState.PASS,
        "off": FreshnessState.NOT_APPLICABLE,
    }
