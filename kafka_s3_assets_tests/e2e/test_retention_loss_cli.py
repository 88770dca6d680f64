"""Retention loss through the whole stack: ``kafka-s3-assets export`` (Dagster, Spark) against the suite's
Apache Kafka, whose DeleteRecords deletes the records for real (it moves the log start offset, as retention
does): the JSON result, the materialization metadata and the asset check all name the lost range; the
blocking check fails the run that first reports a loss, and the check keeps failing on it after that."""

import json

import dagster as dg
import pytest

from kafka_s3_assets.defs.assets import COMPLETENESS_CHECK, export_asset_key

from ..conftest import connector_config
from ..record_deletion import delete_records_before, listed_offsets
from .test_cli import run_cli

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.kafka,
    pytest.mark.s3,
    pytest.mark.registry,
    pytest.mark.spark,
    pytest.mark.dagster,
]


def latest_run_events(instance: dg.DagsterInstance):
    run = instance.get_runs(limit=1)[0]
    return [e.dagster_event for e in instance.all_logs(run.run_id) if e.dagster_event is not None]


def latest_run_outcome(instance: dg.DagsterInstance):
    """The latest run's status, its completeness check's evaluation and its failure's description (or None)."""
    events = latest_run_events(instance)
    [check] = [e.event_specific_data for e in events if e.event_type_value == "ASSET_CHECK_EVALUATION"]
    failures = [e.step_failure_data.user_failure_data.description for e in events if e.is_step_failure]
    return instance.get_runs(limit=1)[0].status, check, (failures[0] if failures else None)


def test_cli_export_reports_offsets_deleted_before_export(spark, kafka, bucket, workdir, capsys):
    topic = kafka.create_topic("retained")
    name = f"ret-{topic}"
    config_path = workdir / "connector.json"
    config_path.write_text(
        json.dumps(
            {
                "name": name,
                "config": connector_config(topic, bucket, name=name, **{"bootstrap.servers": kafka.bootstrap}),
            }
        )
    )
    kafka.produce_avro(topic, [{"f1": f"v{i}"} for i in range(6)])
    code, out, err = run_cli(capsys, "export", "--config", str(config_path), "--json")
    assert code == 0 and out["partitions"][0]["completeness_check_passed"] is True, err

    kafka.produce_avro(topic, [{"f1": f"v{i}"} for i in range(6, 12)])
    delete_records_before(kafka.bootstrap, topic, 0, 9)  # offsets 6, 7, 8 were never exported
    assert listed_offsets(kafka.bootstrap, topic, 0) == (9, 12)
    code, out, err = run_cli(capsys, "export", "--config", str(config_path), "--json")
    [partition] = out["partitions"]
    assert code == 0, err
    assert partition["lost_ranges"] == [[6, 8]]
    assert partition["completeness_check_passed"] is False
    assert (partition["start_offset"], partition["end_offset"]) == (6, 11)

    instance = dg.DagsterInstance.get()
    events = latest_run_events(instance)
    [materialization] = [e.event_specific_data.materialization for e in events if e.is_step_materialization]
    assert materialization.metadata["lost_offsets"].value == 3
    assert materialization.metadata["lost_ranges"].value == [[6, 8]]
    [check] = [e.event_specific_data for e in events if e.event_type_value == "ASSET_CHECK_EVALUATION"]
    assert check.asset_key == export_asset_key(name, topic) and check.check_name == COMPLETENESS_CHECK
    assert not check.passed
    assert check.description == (
        "3 offset(s) deleted by the broker (retention) before they were exported: offsets 6..8 (3 offset(s))"
    )
    assert check.metadata["lost_offsets"].value == 3
    warnings = [
        e.message
        for e in instance.all_logs(instance.get_runs(limit=1)[0].run_id)
        if e.level == 30 and "deleted by the broker" in (e.user_message or "")
    ]
    assert warnings, "the run's event log carries the WARNING"
    # The check is blocking: the run that first reports the loss fails, naming it.
    status, check, failure = latest_run_outcome(instance)
    assert status == dg.DagsterRunStatus.FAILURE and check.severity == dg.AssetCheckSeverity.ERROR
    assert failure == f"Blocking check {COMPLETENESS_CHECK} of {topic}/0 failed: {check.description}"

    # Everything after the last manifest deleted, nothing new to read: no Spark job, still reported.
    kafka.produce_avro(topic, [{"f1": "v12"}, {"f1": "v13"}])
    delete_records_before(kafka.bootstrap, topic, 0, 14)  # the whole partition: the log is empty, at 14
    assert listed_offsets(kafka.bootstrap, topic, 0) == (14, 14)
    code, out, err = run_cli(capsys, "export", "--config", str(config_path), "--json")
    [partition] = out["partitions"]
    assert code == 0 and partition["records"] == 0, err
    assert partition["lost_ranges"] == [[12, 13]] and partition["completeness_check_passed"] is False
    status, check, failure = latest_run_outcome(instance)  # a loss no check reported yet: the run fails
    assert status == dg.DagsterRunStatus.FAILURE and "offsets 12..13" in failure

    # The next export records that loss in its manifest: its check is the first to verify it there.
    kafka.produce_avro(topic, [{"f1": f"v{i}"} for i in range(14, 17)])
    code, out, err = run_cli(capsys, "export", "--config", str(config_path), "--json")
    [partition] = out["partitions"]
    assert code == 0 and partition["lost_ranges"] == [[12, 13]] and partition["records"] == 3, err
    status, check, failure = latest_run_outcome(instance)
    assert status == dg.DagsterRunStatus.FAILURE and check.metadata["new_lost_offsets"].value == 2

    # From then on the losses are known: every check still fails on them with ERROR severity, but the
    # exports' runs succeed.
    kafka.produce_avro(topic, [{"f1": f"v{i}"} for i in range(17, 20)])
    code, out, err = run_cli(capsys, "export", "--config", str(config_path), "--json")
    [partition] = out["partitions"]
    assert code == 0 and partition["lost_ranges"] == [] and partition["records"] == 3, err
    assert partition["completeness_check_passed"] is False
    status, check, failure = latest_run_outcome(instance)
    assert (status, failure) == (dg.DagsterRunStatus.SUCCESS, None)
    assert not check.passed and check.severity == dg.AssetCheckSeverity.ERROR
    assert check.metadata["lost_offsets"].value == 5 and check.metadata["new_lost_offsets"].value == 0
    assert check.description == (
        "5 offset(s) deleted by the broker (retention) before they were exported: "
        "offsets 6..8 (3 offset(s)), reported by an earlier check, "
        "offsets 12..13 (2 offset(s)), reported by an earlier check"
    )
