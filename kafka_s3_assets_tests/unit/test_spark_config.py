"""Spark settings for a local master and for a cluster."""

import pytest

from kafka_s3_assets.spark.job import spark_config

pytestmark = [pytest.mark.unit]

LOOPBACK_DRIVER = {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    """spark_config sets PYSPARK_PYTHON and SPARK_LOCAL_IP in the environment when they are unset."""
    for name in ("PYSPARK_PYTHON", "SPARK_LOCAL_IP"):
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
