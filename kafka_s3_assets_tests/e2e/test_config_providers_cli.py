"""Config providers and a Connect worker config through the real CLI (Dagster, Spark, the devstack)."""

import json

import pytest

from kafka_s3_assets.cli import main
from kafka_s3_assets.defs.connectors import WORKER_CONFIG_ENV, load_connectors

from ..conftest import connector_config, list_keys

pytestmark = [pytest.mark.e2e, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry, pytest.mark.spark]

FILE_PROVIDER = "org.apache.kafka.common.config.provider.FileConfigProvider"
VAULT_PROVIDER = "com.github.jcustenborder.kafka.config.vault.VaultConfigProvider"


def run_cli(capsys, *args) -> tuple[int, dict | str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    out = json.loads(captured.out) if "--json" in args and captured.out.strip() else captured.out
    return code, out, captured.err


def test_an_export_whose_topic_bucket_and_credentials_come_from_env_file_and_directory(
    spark, kafka, devstack, bucket, s3_client, workdir, capsys, monkeypatch
):
    topic = kafka.create_topic("provided")
    kafka.produce_avro(topic, [{"f1": f"value{i}"} for i in range(4)])
    monkeypatch.setenv("EXPORT_TOPIC", topic)
    (workdir / "aws.properties").write_text(
        f"access.key.id={devstack.aws_access_key_id}\nsecret.access.key={devstack.aws_secret_access_key}\n"
    )
    (workdir / "mounted").mkdir()
    (workdir / "mounted" / "bucket").write_text(bucket)
    name = f"providers-{topic}"
    config = connector_config(
        topic,
        bucket,
        **{
            "name": name,
            "topics": "${env:EXPORT_TOPIC}",
            "s3.bucket.name": f"${{directory:{workdir}/mounted:bucket}}",
            "aws.access.key.id": f"${{file:{workdir}/aws.properties:access.key.id}}",
            "aws.secret.access.key": f"${{file:{workdir}/aws.properties:secret.access.key}}",
        },
    )
    path = workdir / "connector.json"
    path.write_text(json.dumps({"name": name, "config": config}))

    code, out, err = run_cli(capsys, "validate", "--config", str(path))
    assert code == 0 and f"exporting {topic}" in out, err
    code, out, err = run_cli(capsys, "export", "--config", str(path), "--json")
    assert code == 0, err
    [partition] = out["partitions"]
    assert partition["partition"] == f"{topic}/0" and partition["records"] == 3
    assert partition["completeness_check_passed"] is True
    assert list_keys(s3_client, bucket, f"topics/{topic}/") == [f"topics/{topic}/partition=0/{topic}+0+0000000000.avro"]


def test_a_worker_config_gives_bootstrap_servers_and_converters(
    spark, kafka, devstack, bucket, s3_client, workdir, capsys, monkeypatch
):
    topic = kafka.create_topic("worker")
    kafka.produce(topic, [json.dumps({"n": i}).encode() for i in range(3)], keys=[b"k0", b"k1", b"k2"])
    (workdir / "worker.properties").write_text(
        f"bootstrap.servers={devstack.kafka_bootstrap_servers}\n"
        "group.id=connect-cluster\nplugin.path=/usr/share/java\noffset.storage.file.filename=/tmp/connect.offsets\n"
        "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
        "value.converter=org.apache.kafka.connect.json.JsonConverter\nvalue.converter.schemas.enable=false\n"
    )
    name = f"worker-{topic}"
    config = connector_config(
        topic, bucket, **{"name": name, "format.class": "io.confluent.connect.s3.format.json.JsonFormat"}
    )
    path = workdir / "connector.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in config.items()))
    # The worker's bootstrap.servers is the one used: the environment's is a dead end.
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:1")

    code, out, err = run_cli(
        capsys, "validate", "--config", str(path), "--worker-config", str(workdir / "worker.properties")
    )
    assert code == 0, err
    # Dagster and the CLI read $KAFKA_S3_ASSETS_WORKER_CONFIG when no --worker-config is given.
    monkeypatch.setenv(WORKER_CONFIG_ENV, str(workdir / "worker.properties"))
    [connector] = load_connectors(str(path))
    assert connector.config.value_converter.class_name == "org.apache.kafka.connect.json.JsonConverter"
    code, out, err = run_cli(capsys, "export", "--config", str(path), "--json")
    assert code == 0, err
    [key] = out["partitions"][0]["object_keys"]
    body = s3_client.get_object(Bucket=bucket, Key=key)["Body"].read().decode()
    assert [json.loads(line) for line in body.splitlines()] == [{"n": 0}, {"n": 1}, {"n": 2}]


def test_an_unknown_provider_and_a_provider_we_cannot_run_exit_2_naming_key_and_provider(bucket, workdir, capsys):
    config = connector_config(
        "orders",
        bucket,
        **{
            "config.providers": "vault",
            "config.providers.vault.class": VAULT_PROVIDER,
            "aws.access.key.id": "${secrets:aws/access-key}",
            "aws.secret.access.key": "${vault:secret/s3:key}",
        },
    )
    path = workdir / "c.json"
    path.write_text(json.dumps(config))
    for command in ("export", "validate"):
        code, out, err = run_cli(capsys, command, "--config", str(path))
        assert code == 2 and out == ""
        assert (
            "aws.access.key.id: Cannot resolve ${secrets:aws/access-key}: config provider 'secrets' is not defined"
        ) in err
        assert (
            f"aws.secret.access.key: Cannot resolve ${{vault:secret/s3:key}}: config provider 'vault' cannot run "
            f"here: its class {VAULT_PROVIDER} (config.providers.vault.class)"
        ) in err


def test_a_topic_placeholder_is_never_sent_to_kafka(bucket, workdir, capsys, monkeypatch):
    monkeypatch.delenv("T", raising=False)
    path = workdir / "c.json"
    path.write_text(json.dumps(connector_config("${env:T}", bucket)))
    code, _out, err = run_cli(capsys, "export", "--config", str(path))
    assert (
        code == 2
        and ("topics: Cannot resolve ${env:T}: config provider 'env' found no environment variable 'T'") in err
    )
    assert "Metadata error" not in err
