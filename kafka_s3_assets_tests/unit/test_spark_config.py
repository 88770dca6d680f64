"""Spark settings for a local master, a cluster and a Spark Connect server, from code and from the
environment."""

import pytest

from kafka_s3_assets.spark.session_config import SparkTargetError, spark_config, spark_config_from_env

pytestmark = [pytest.mark.unit]

LOOPBACK_DRIVER = {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    """spark_config sets PYSPARK_PYTHON and SPARK_LOCAL_IP in the environment when they are unset."""
    for name in ("PYSPARK_PYTHON", "SPARK_LOCAL_IP", "KAFKA_S3_ASSETS_SPARK_MASTER", "KAFKA_S3_ASSETS_SPARK_REMOTE"):
        monkeypatch.delenv(name, raising=False)


def test_a_local_master_keeps_the_driver_on_loopback():
    config = spark_config("local[2]")
    assert config["spark.master"] == "local[2]"
    assert LOOPBACK_DRIVER.items() <= config.items()
    assert spark_config()["spark.master"] == "local[*]"


@pytest.mark.parametrize("master", ["spark://spark-master:7077", "k8s://https://kubernetes.default:443", "yarn"])
def test_a_cluster_master_lets_executors_on_other_hosts_reach_the_driver(master):
    # Executors connect back to spark.driver.host: pinned to 127.0.0.1, every remote executor would fail.
    # Unset, Spark advertises the driver's address (or SPARK_LOCAL_IP, or spark-defaults.conf decides).
    config = spark_config(master)
    assert config["spark.master"] == master
    assert not set(LOOPBACK_DRIVER) & set(config)


def test_extra_settings_win():
    config = spark_config("spark://spark-master:7077", {"spark.driver.host": "10.0.0.5", "spark.ui.enabled": "true"})
    assert (config["spark.driver.host"], config["spark.ui.enabled"]) == ("10.0.0.5", "true")


def test_a_spark_connect_server_makes_a_client_session_with_nothing_of_a_driver():
    config = spark_config(remote="sc://spark-connect:15002", extra={"spark.sql.shuffle.partitions": "4"})
    assert config == {"spark.remote": "sc://spark-connect:15002", "spark.sql.shuffle.partitions": "4"}
    assert spark_config(extra={"spark.remote": "sc://spark-connect"}) == {"spark.remote": "sc://spark-connect"}


def test_the_client_of_a_spark_connect_server_leaves_the_python_of_workers_to_the_server():
    import os

    spark_config(remote="sc://spark-connect:15002")
    assert "PYSPARK_PYTHON" not in os.environ and "SPARK_LOCAL_IP" not in os.environ


@pytest.mark.parametrize("master, extra", [("local[2]", None), (None, {"spark.master": "spark://m:7077"})])
def test_a_master_and_a_spark_connect_server_together_are_refused_naming_both(master, extra):
    with pytest.raises(SparkTargetError) as error:
        spark_config(master, extra, remote="sc://spark-connect:15002")
    assert "spark.remote=sc://spark-connect:15002" in str(error.value)
    assert f"spark.master={master or extra['spark.master']}" in str(error.value)


@pytest.mark.parametrize("remote", ["spark-connect:15002", "http://spark-connect:15002", "sc://", "sc://:15002"])
def test_a_spark_connect_url_that_is_not_one_is_refused_naming_the_setting(remote):
    with pytest.raises(SparkTargetError, match=f"spark.remote={remote} is not a Spark Connect URL"):
        spark_config(remote=remote)
    with pytest.raises(SparkTargetError, match=f"KAFKA_S3_ASSETS_SPARK_REMOTE={remote} is not a Spark Connect URL"):
        spark_config_from_env({"KAFKA_S3_ASSETS_SPARK_REMOTE": remote})


def test_the_environment_chooses_local_a_master_or_a_spark_connect_server():
    assert spark_config_from_env({})["spark.master"] == "local[*]"
    assert spark_config_from_env({"KAFKA_S3_ASSETS_SPARK_MASTER": "spark://m:7077"})["spark.master"] == "spark://m:7077"
    assert spark_config_from_env({"KAFKA_S3_ASSETS_SPARK_REMOTE": "sc://s:15002"}) == {"spark.remote": "sc://s:15002"}
    assert spark_config_from_env({"KAFKA_S3_ASSETS_SPARK_MASTER": "", "KAFKA_S3_ASSETS_SPARK_REMOTE": "sc://s"}) == {
        "spark.remote": "sc://s"
    }  # set but empty counts as unset


def test_both_environment_variables_are_refused_naming_both():
    with pytest.raises(SparkTargetError) as error:
        spark_config_from_env(
            {"KAFKA_S3_ASSETS_SPARK_MASTER": "spark://m:7077", "KAFKA_S3_ASSETS_SPARK_REMOTE": "sc://s:15002"}
        )
    message = str(error.value)
    assert "KAFKA_S3_ASSETS_SPARK_MASTER=spark://m:7077" in message
    assert "KAFKA_S3_ASSETS_SPARK_REMOTE=sc://s:15002" in message


def test_the_dagster_spark_session_follows_the_environment(monkeypatch):
    from kafka_s3_assets.defs.connections import Connections

    monkeypatch.setenv("KAFKA_S3_ASSETS_SPARK_REMOTE", "sc://spark-connect:15002")
    monkeypatch.delenv("KAFKA_S3_ASSETS_SPARK_MASTER", raising=False)
    assert Connections().spark.spark_config == {"spark.remote": "sc://spark-connect:15002"}
    monkeypatch.setenv("KAFKA_S3_ASSETS_SPARK_MASTER", "spark://m:7077")
    with pytest.raises(
        SparkTargetError,
        match="KAFKA_S3_ASSETS_SPARK_MASTER=spark://m:7077 and KAFKA_S3_ASSETS_SPARK_REMOTE=sc://spark-connect:15002",
    ):
        Connections()


def test_the_components_spark_attributes_choose_a_master_or_a_spark_connect_server(monkeypatch):
    from kafka_s3_assets.defs.connections import spark_from_environment

    monkeypatch.setenv("KAFKA_S3_ASSETS_SPARK_MASTER", "spark://from-env:7077")
    assert spark_from_environment(remote="sc://connect:15002").spark_config == {"spark.remote": "sc://connect:15002"}
    assert spark_from_environment(master="local[1]").spark_config["spark.master"] == "local[1]"
    with pytest.raises(SparkTargetError, match="Both a Spark master"):
        spark_from_environment(master="local[1]", remote="sc://connect:15002")


def test_the_cli_export_refuses_both_before_any_run(monkeypatch, tmp_path, capsys):
    import json

    from kafka_s3_assets.cli import main

    config = tmp_path / "connector.json"
    config.write_text(
        json.dumps(
            {
                "name": "orders",
                "config": {
                    "connector.class": "io.confluent.connect.s3.S3SinkConnector",
                    "topics": "orders",
                    "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
                    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                    "value.converter.schemas.enable": "false",
                    "storage.class": "io.confluent.connect.s3.storage.S3Storage",
                    "flush.size": "3",
                    "s3.bucket.name": "b",
                    "bootstrap.servers": "127.0.0.1:1",
                },
            }
        )
    )
    monkeypatch.setenv("KAFKA_S3_ASSETS_SPARK_MASTER", "spark://m:7077")
    monkeypatch.setenv("KAFKA_S3_ASSETS_SPARK_REMOTE", "sc://spark-connect:15002")

    assert main(["export", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "error: KAFKA_S3_ASSETS_SPARK_MASTER=spark://m:7077 and "
        "KAFKA_S3_ASSETS_SPARK_REMOTE=sc://spark-connect:15002 are both set"
    )


def test_a_token_in_a_spark_connect_url_never_shows_in_an_error():
    with pytest.raises(SparkTargetError) as error:
        spark_config_from_env(
            {
                "KAFKA_S3_ASSETS_SPARK_MASTER": "local[2]",
                "KAFKA_S3_ASSETS_SPARK_REMOTE": "sc://dbc.example:443/;token=dapi-secret;use_ssl=true",
            }
        )
    assert "dapi-secret" not in str(error.value)
    assert "KAFKA_S3_ASSETS_SPARK_REMOTE=sc://dbc.example:443/;token=***;use_ssl=true" in str(error.value)
    with pytest.raises(SparkTargetError) as error:
        spark_config(remote="https://dbc.example/;token=dapi-secret")
    assert "dapi-secret" not in str(error.value)


@pytest.mark.parametrize(
    "url, expected",
    [
        ("sc://h:15002", "sc://h:15002/;session_id="),
        ("sc://h:15002/;token=abc", "sc://h:15002/;token=abc;session_id="),
    ],
)
def test_runs_of_the_same_settings_share_one_spark_connect_session(url, expected):
    from pyspark.sql.connect.client import DefaultChannelBuilder

    from kafka_s3_assets.spark.session import shared_session_url

    settings = {"spark.remote": url, "spark.sql.session.timeZone": "UTC"}
    shared = shared_session_url(url, settings)
    assert shared.startswith(expected)
    assert shared_session_url(url, dict(settings)) == shared  # the next run: the same session
    assert DefaultChannelBuilder(shared).session_id == shared.rsplit("=", 1)[1]  # what the client sends
    assert shared_session_url(url, settings, generation=1) != shared  # once the server closed the first
    other = shared_session_url(url, {**settings, "spark.sql.shuffle.partitions": "8"})
    assert other != shared  # other runtime settings: a session of their own


def test_a_session_named_in_the_spark_connect_url_is_kept():
    from kafka_s3_assets.spark.session import shared_session_url

    url = "sc://h:15002/;session_id=00000000-0000-4000-8000-000000000001"
    assert shared_session_url(url, {"spark.remote": url}) == url
