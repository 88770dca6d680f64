"""Config provider placeholders: Kafka's grammar, its three providers, config.providers, and the errors
where Connect would leave a placeholder in the value."""

import pickle

import pytest

from kafka_s3_assets.export.settings import resolve_settings
from kafka_s3_assets.sink.config import load_connector_config
from kafka_s3_assets.sink.config_providers import (
    ResolvedConnectorConfig,
    placeholders,
    resolve_config_providers,
)
from kafka_s3_assets.sink.errors import ConfigError

from .sink_helpers import base_config

pytestmark = [pytest.mark.unit]

VAULT = "com.github.jcustenborder.kafka.config.vault.VaultConfigProvider"
FILE = "org.apache.kafka.common.config.provider.FileConfigProvider"
DIRECTORY = "org.apache.kafka.common.config.provider.DirectoryConfigProvider"
ENV = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"


def problems(config: dict, env: dict | None = None) -> dict[str, str]:
    with pytest.raises(ConfigError) as info:
        resolve_config_providers(config, env or {})
    return {p.key: p.message for p in info.value.problems}


@pytest.fixture
def secrets_file(tmp_path):
    path = tmp_path / "aws.properties"
    path.write_text("# credentials\naws.access.key.id=AKIAFROMFILE\nsecret: s3cr3t\\=with-escape\nsp\\ ace = x y \n")
    return path


def test_the_grammar_is_kafkas():
    [env] = placeholders("${env:T}")
    assert (env.provider, env.path, env.key) == ("env", "", "T")
    [file] = placeholders("${file:/etc/kafka/s3.properties:aws.secret}")
    assert (file.provider, file.path, file.key) == ("file", "/etc/kafka/s3.properties", "aws.secret")
    # The path ends at the second colon; the key keeps the rest, colons included.
    [colons] = placeholders("${file:/a:b:c}")
    assert (colons.path, colons.key) == ("/a", "b:c")
    [empty_path] = placeholders("${env::T}")
    assert (empty_path.path, empty_path.key) == ("", "T")
    assert [p.text for p in placeholders("s3://${env:B}/x/${file:/f:k}")] == ["${env:B}", "${file:/f:k}"]
    assert placeholders("${topic}") == [] and placeholders("$topic") == [] and placeholders("plain") == []


def test_env_file_and_directory_resolve_in_any_value_with_text_around(tmp_path, secrets_file):
    secrets_dir = tmp_path / "secrets"
    secrets_dir.mkdir()
    (secrets_dir / "bucket").write_text("my-bucket\n")  # kept byte for byte, as Kafka does
    config = {
        "topics": "${env:T},audit",
        "s3.bucket.name": f"${{directory:{secrets_dir}:bucket}}",
        "aws.access.key.id": f"${{file:{secrets_file}:aws.access.key.id}}",
        "aws.secret.access.key": f"${{file:{secrets_file}:secret}}",
        "path": f"x-${{env:T}}-${{file:{secrets_file}:sp ace}}-y",
        "flush.size": 3,
        "literal": "${topic}",
    }
    resolved = resolve_config_providers(config, {"T": "orders"})
    assert resolved == {
        "topics": "orders,audit",
        "s3.bucket.name": "my-bucket\n",
        "aws.access.key.id": "AKIAFROMFILE",
        "aws.secret.access.key": "s3cr3t=with-escape",
        "path": "x-orders-x y -y",
        "flush.size": 3,
        "literal": "${topic}",
    }


def test_a_resolved_value_is_not_resolved_again():
    resolved = resolve_config_providers({"aws.secret.access.key": "${env:S}"}, {"S": "${env:OTHER}"})
    assert resolved["aws.secret.access.key"] == "${env:OTHER}"
    assert resolve_config_providers(resolved, {}) is resolved  # already resolved: as it is


def test_json_lists_are_resolved_element_by_element():
    assert resolve_config_providers({"topics": ["${env:A}", "b"]}, {"A": "a"})["topics"] == ["a", "b"]


def test_an_unknown_provider_is_an_error_naming_the_key_and_the_provider():
    found = problems({"aws.access.key.id": "${secrets:aws/access-key}"})
    assert (
        "Cannot resolve ${secrets:aws/access-key}: config provider 'secrets' is not defined"
        in found["aws.access.key.id"]
    )


def test_what_connect_would_leave_in_place_is_an_error_naming_key_and_provider(tmp_path, secrets_file):
    found = problems(
        {
            "topics": "${env:T}",
            "s3.bucket.name": f"${{file:{secrets_file}:bucket}}",
            "store.url": f"${{file:{tmp_path}/missing.properties:url}}",
            "s3.region": f"${{directory:{tmp_path}:region}}",
            "s3.acl.canned": "${env:/x:V}",
            "topics.dir": "${file::k}",
        }
    )
    assert found == {
        "topics": "Cannot resolve ${env:T}: config provider 'env' found no environment variable 'T'",
        "s3.bucket.name": f"Cannot resolve ${{file:{secrets_file}:bucket}}: config provider 'file' found no key "
        f"'bucket' in properties file {secrets_file}",
        "store.url": f"Cannot resolve ${{file:{tmp_path}/missing.properties:url}}: config provider 'file' could not "
        f"read properties from file {tmp_path}/missing.properties: No such file or directory",
        "s3.region": f"Cannot resolve ${{directory:{tmp_path}:region}}: config provider 'directory' found no file "
        f"'region' in directory {tmp_path}",
        "s3.acl.canned": "Cannot resolve ${env:/x:V}: config provider 'env' Path is not supported for "
        "EnvVarConfigProvider, invalid value '/x'",
        "topics.dir": "Cannot resolve ${file::k}: config provider 'file' needs the path of a properties file: "
        "${file:/path/to/file.properties:key}",
    }


def test_directory_keys_are_file_names_never_paths(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "key").write_text("v")
    found = problems(
        {
            "a": f"${{directory:{tmp_path}:sub/key}}",
            "b": f"${{directory:{tmp_path}:sub}}",
            "c": f"${{directory:{tmp_path}/nope:key}}",
        }
    )
    assert "found no file 'sub/key'" in found["a"] and "found no file 'sub'" in found["b"]
    assert f"found no directory {tmp_path}/nope" in found["c"]


def test_config_providers_alias_and_configure_kafkas_providers(tmp_path, secrets_file, monkeypatch):
    config = {
        "config.providers": "secrets,vars",
        "config.providers.secrets.class": FILE,
        "config.providers.secrets.param.allowed.paths": str(tmp_path),
        "config.providers.vars.class": ENV,
        "config.providers.vars.param.allowlist.pattern": "KAFKA_.*",
        "aws.access.key.id": f"${{secrets:{secrets_file}:aws.access.key.id}}",
        "topics": "${vars:KAFKA_T}",
        "s3.region": "${env:REGION}",
    }
    resolved = resolve_config_providers(config, {"KAFKA_T": "orders", "REGION": "eu-west-1"})
    # The provider keys are consumed; Kafka's providers stay available under their usual names.
    assert resolved == {"aws.access.key.id": "AKIAFROMFILE", "topics": "orders", "s3.region": "eu-west-1"}


def test_allowed_paths_and_allowlist_pattern_are_honoured(tmp_path, secrets_file):
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    config = {
        "config.providers": "file,env",
        "config.providers.file.class": FILE,
        "config.providers.file.param.allowed.paths": f"{allowed}",
        "config.providers.env.class": ENV,
        "config.providers.env.param.allowlist.pattern": "S3_.*",
        "a": f"${{file:{secrets_file}:secret}}",
        "b": f"${{file:{allowed}/../{secrets_file.name}:secret}}",
        "c": "${env:HOME}",
        "d": "${env:XS3_A}",
    }
    found = problems(config, {"HOME": "/root", "XS3_A": "x"})
    assert f"may not read {secrets_file}: it is outside its allowed.paths ({allowed})" in found["a"]
    assert "it is outside its allowed.paths" in found["b"]  # normalised before the check, as Kafka does
    assert "may not read environment variable 'HOME': its allowlist.pattern 'S3_.*' does not match it" in found["c"]
    assert "'XS3_A'" in found["d"]  # the whole name must match


def test_invalid_provider_definitions_are_errors_naming_the_key(tmp_path):
    found = problems(
        {
            "config.providers": "a,b,c,d",
            "config.providers.a.class": FILE,
            "config.providers.a.param.allowed.paths": "relative/dir",
            "config.providers.b.class": DIRECTORY,
            "config.providers.b.param.allowed.paths": f"{tmp_path}/missing",
            "config.providers.c.class": ENV,
            "config.providers.c.param.allowlist.pattern": "(",
            "config.providers.e.class": FILE,
            "config.providers.a.param.allowed.path": "/tmp",
            "config.providers.a.klass": FILE,
        }
    )
    assert found["config.providers"] == (
        "Config provider 'd' is listed in config.providers but config.providers.d.class is not set"
    )
    assert found["config.providers.a.param.allowed.paths"].endswith("Path relative/dir is not absolute")
    assert found["config.providers.b.param.allowed.paths"].endswith(f"Path {tmp_path}/missing does not exist")
    assert "not a regular expression" in found["config.providers.c.param.allowlist.pattern"]
    assert "is defined but not listed in config.providers" in found["config.providers.e.class"]
    assert found["config.providers.a.param.allowed.path"] == (
        "Unknown parameter 'allowed.path' of FileConfigProvider: it takes allowed.paths"
    )
    assert "Unknown config provider setting 'config.providers.a.klass'" in found["config.providers.a.klass"]


def test_a_provider_class_we_cannot_run_fails_where_it_is_used():
    vault = {
        "config.providers": "vault",
        "config.providers.vault.class": VAULT,
        "config.providers.vault.param.vault.address": "https://vault:8200",
    }
    assert resolve_config_providers({**vault, "topics": "t"}, {}) == {"topics": "t"}  # defined, unused: fine
    found = problems({**vault, "aws.secret.access.key": "${vault:secret/s3:key}"})
    assert found["aws.secret.access.key"].startswith(
        f"Cannot resolve ${{vault:secret/s3:key}}: config provider 'vault' cannot run here: its class {VAULT} "
        "(config.providers.vault.class) is not one of Kafka's FileConfigProvider, EnvVarConfigProvider, "
        "DirectoryConfigProvider"
    )


def test_validation_sees_resolved_values_and_every_problem_at_once(tmp_path, monkeypatch):
    monkeypatch.setenv("FLUSH", "seven")
    path = tmp_path / "c.properties"
    path.write_text(
        "\n".join(
            f"{k}={v}"
            for k, v in base_config(
                **{"flush.size": "${env:FLUSH}", "topics": "${env:T}", "s3.bucket.name": "${nope:x}"}
            ).items()
        )
    )
    monkeypatch.setenv("T", "orders")
    with pytest.raises(ConfigError) as info:
        load_connector_config(path)
    assert {p.key for p in info.value.problems} == {"s3.bucket.name"}  # providers first: no guessing on the rest
    path.write_text(path.read_text().replace("${nope:x}", "bucket"))
    with pytest.raises(ConfigError, match="Invalid value seven for configuration flush.size"):
        load_connector_config(path)
    monkeypatch.setenv("FLUSH", "7")
    config = load_connector_config(path)
    assert (config.topics, config.flush_size) == (["orders"], 7)


def test_a_secret_resolved_into_a_secret_key_is_never_shown(tmp_path):
    (tmp_path / "proxy").write_text("http://user:SENTINEL-proxy-password@proxy:99999")
    (tmp_path / "key").write_text("SENTINEL-aws-secret")
    (tmp_path / "jaas").write_text(
        'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" '
        'password="SENTINEL-sasl-password";'
    )
    raw = base_config(**{"s3.proxy.url": f"${{directory:{tmp_path}:proxy}}"})
    # An invalid value is named in the error, but not a password inside it.
    with pytest.raises(ConfigError) as info:
        resolve_settings(raw, {}, bootstrap_servers="127.0.0.1:1")
    assert "Invalid value http://user:[hidden]@proxy:99999 for configuration s3.proxy.url" in str(info.value)
    assert "SENTINEL" not in str(info.value)

    settings = resolve_settings(
        base_config(
            **{
                "aws.secret.access.key": f"${{directory:{tmp_path}:key}}",
                "consumer.override.sasl.jaas.config": f"${{directory:{tmp_path}:jaas}}",
                "value.converter.schema.registry.url": "http://registry",
            }
        ),
        {},
        bootstrap_servers="127.0.0.1:1",
    )
    config = settings.connector_config
    assert isinstance(config, ResolvedConnectorConfig) and config["aws.secret.access.key"] == "SENTINEL-aws-secret"
    for shown in (
        repr(config),
        str(config),
        repr(settings),
        repr(pickle.loads(pickle.dumps(config))),
        repr(settings.sink_config()),
    ):
        assert "SENTINEL" not in shown
    assert "'aws.secret.access.key': '[hidden]'" in repr(config)
    # scrubbed at boundaries
    assert {"SENTINEL-aws-secret", config["consumer.override.sasl.jaas.config"]} <= set(settings.secrets())
    # Executors get the resolved values: they may not have the files the driver read.
    (tmp_path / "key").unlink()
    shipped = pickle.loads(pickle.dumps(settings))
    assert shipped.sink_config()["aws.secret.access.key"] == "SENTINEL-aws-secret"
