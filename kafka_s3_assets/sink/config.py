"""Load and validate a Kafka Connect S3 sink connector config.

Accepts Connect's REST JSON (``{"name": ..., "config": {...}}``), a flat JSON map, or a ``.properties``
file, unchanged. Values are parsed with the ConfigDef types and defaults of the reference and checked
with its messages. Every problem of a config is reported at once, each naming its key; unknown keys
and values we do not implement yet are problems too, never silently ignored.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .block_gzip_sink_config import BlockGzipSinkSettings, is_block_gzip_sink
from .block_gzip_sink_config import translate as translate_block_gzip_sink
from .config_keys import (
    ALL_KEYS,
    AVRO_CONVERTER,
    BLOCK_GZIP_FORMAT,
    BYTEARRAY_FORMAT,
    CONVERTER_ALIASES,
    CONVERTER_PREFIXES,
    CONVERTER_SETTINGS,
    EXTENSION_PREFIX,
    GLUE_CONVERTERS,
    ICEBERG_CATALOG_PREFIX,
    ICEBERG_CATALOG_URI,
    INT_MAX,
    JSON_FORMAT,
    LONG_MAX,
    PARQUET_FORMAT,
    PASSTHROUGH_PREFIXES,
    REGISTRY_CONVERTERS,
    REQUIRED,
    KeyDef,
    Support,
    Type,
)
from .config_providers import ResolvedConnectorConfig, resolve_config_providers
from .credentials_provider import DURATION_KEY, CredentialsProviderConfig, credentials_provider_config
from .credentials_provider import PREFIX as CREDENTIALS_PROVIDER_PREFIX
from .credentials_provider import SECRET_KEYS as CREDENTIALS_SECRET_KEYS
from .data_rules import rule_object_setting
from .data_rules import setting_problems as rule_setting_problems
from .errors import ConfigError, ConfigProblem
from .partitioner_config import partitioner_problems
from .properties import MalformedProperties, parse_properties
from .secrets import HIDDEN
from .worker_config import merge_worker_config, read_worker_config

SECRET_TYPES = (Type.PASSWORD,)


def read_connector_file(path: str | Path) -> dict[str, str]:
    """Read a connector config file into a flat map of string keys (values as written)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError([ConfigProblem("<file>", f"Cannot read connector config {path}: {exc.strerror}")]) from exc
    if path.suffix == ".properties" or not text.lstrip().startswith("{"):
        try:
            return parse_properties(text)
        except MalformedProperties as exc:
            raise ConfigError([ConfigProblem("<file>", f"{path} is not a valid properties file: {exc}")]) from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError([ConfigProblem("<file>", f"{path} is not valid JSON: {exc}")]) from exc
    return flatten_connect_json(document)


def flatten_connect_json(document: Mapping[str, Any]) -> dict[str, Any]:
    """``{"name": n, "config": {...}}`` (Connect's REST form) or a flat map -> flat map."""
    if not isinstance(document, Mapping):
        raise ConfigError([ConfigProblem("<file>", "A connector config must be a JSON object")])
    if isinstance(document.get("config"), Mapping):
        flat = dict(document["config"])
        if "name" in document:
            if "name" in flat and flat["name"] != document["name"]:
                # Connect's REST API refuses this too.
                raise ConfigError(
                    [
                        ConfigProblem(
                            "name",
                            f"Connector name configuration ({flat['name']}) doesn't "
                            f"match connector name ({document['name']})",
                        )
                    ]
                )
            flat["name"] = document["name"]
        return flat
    return dict(document)


# ---------------------------------------------------------------------------------------------------
# Typed values


def parse_value(key: KeyDef, raw: Any) -> Any:
    """Parse a raw value as Kafka's ConfigDef would; raises ValueError with ConfigDef's message."""
    if raw is None:
        return None
    if key.type in (Type.STRING, Type.CLASS, Type.PASSWORD):
        return str(raw).strip() if key.type == Type.CLASS else str(raw)
    if key.type == Type.BOOLEAN:
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("true", "false"):
            return text == "true"
        raise ValueError("Expected value to be either true or false")
    if key.type in (Type.INT, Type.LONG):
        limit = INT_MAX if key.type == Type.INT else LONG_MAX
        if isinstance(raw, bool):
            raise ValueError(f"Not a number of type {key.type.value}")
        try:
            number = int(str(raw).strip())
        except ValueError:
            raise ValueError(f"Not a number of type {key.type.value}") from None
        if not -limit - 1 <= number <= limit:
            raise ValueError(f"Not a number of type {key.type.value}")
        return number
    if key.type == Type.LIST:
        if isinstance(raw, (list, tuple)):
            return [str(v).strip() for v in raw]
        text = str(raw).strip()
        return [item.strip() for item in text.split(",")] if text else []
    raise AssertionError(key.type)


def _display(value: Any, definition: KeyDef | None = None) -> str:
    """A value as messages show it; a secret key's never (it may have come from a config provider)."""
    if definition is not None and definition.type in SECRET_TYPES:
        return HIDDEN
    if isinstance(value, list):
        return ",".join(value)
    if isinstance(value, bool):
        return str(value).lower()
    return without_url_password(str(value))


# The password of a URL's user info (``http://user:password@host``, as s3.proxy.url allows).
_URL_PASSWORD = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^/@:\s]*:)[^/@\s]*@")


def without_url_password(text: str) -> str:
    """``text`` with the password of any URL in it hidden: a URL's user info may carry one."""
    return _URL_PASSWORD.sub(lambda m: m.group("head") + HIDDEN + "@", text)


@dataclass(frozen=True)
class ConverterConfig:
    """One of ``key.converter`` / ``value.converter`` with its prefixed settings."""

    class_name: str
    schema_registry_url: str | None
    schemas_enable: bool
    settings: Mapping[str, Any] = field(default_factory=dict)

    @property
    def uses_schema_registry(self) -> bool:
        """Whether the converter reads ids of a Confluent schema registry: Confluent's converters, and AWS Glue's
        Avro converter when its secondaryDeserializer reads records Confluent's serializer framed."""
        if self.class_name in GLUE_CONVERTERS:
            return self.settings.get("secondaryDeserializer") is not None
        return self.class_name in REGISTRY_CONVERTERS


@dataclass(frozen=True)
class SinkConfig:
    """A validated connector config. ``values`` holds every key, parsed, defaults filled in."""

    values: Mapping[str, Any]
    key_converter: ConverterConfig
    value_converter: ConverterConfig
    consumer_overrides: Mapping[str, str]
    explicit_keys: frozenset[str]
    # A Connect worker's consumer settings (``consumer.<key>`` in its properties), accepted in the connector
    # config too; ``consumer.override.<key>`` wins over them, as in Connect.
    worker_consumer_settings: Mapping[str, str] = field(default_factory=dict)
    # Settings of the dead letter queue's producer and admin client (Connect's producer/admin.override.*).
    producer_overrides: Mapping[str, str] = field(default_factory=dict)
    admin_overrides: Mapping[str, str] = field(default_factory=dict)
    # Set when the config is the Block-GZIP S3 sink's (spredfast): that sink's layout, format and cursor.
    block_gzip_sink: BlockGzipSinkSettings | None = None
    # s3.credentials.provider.class and the keys Connect hands to it (None only for an invalid config).
    credentials_provider: CredentialsProviderConfig | None = None
    # kafka_s3_assets.iceberg.catalog.<property> (prefix stripped): passed to the Iceberg catalog as written.
    iceberg_catalog_properties: Mapping[str, str] = field(default_factory=dict)
    # transforms, predicates and every key under them, as written (``transforms`` builds the chain of them).
    transform_settings: Mapping[str, Any] = field(default_factory=dict)
    # What validation accepted but reports: keys this project does not know, ignored transform keys.
    warnings: tuple[str, ...] = ()

    @functools.cached_property
    def transforms(self):
        """The connector's transform chain (``sink.transforms.TransformChain``; empty without ``transforms``)."""
        from .transforms.chain import parse_chain  # the transforms package reads this module's parse_value

        return parse_chain(self.transform_settings)

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    @property
    def name(self) -> str:
        return self.values["name"]

    @property
    def topics(self) -> list[str]:
        """The topics ``topics`` lists. A ``topics.regex`` config lists none: its topics are those on the broker
        that match, which only ``export.topic_subscription`` resolves (asking here for them is a bug)."""
        if str(self.values.get("topics.regex") or "").strip():
            raise RuntimeError(
                f"Connector {self.name} exports the topics matching topics.regex: resolve them with "
                "kafka_s3_assets.export.topic_subscription, not SinkConfig.topics"
            )
        return list(self.values["topics"])

    @property
    def consumer_group(self) -> str:
        """Kafka Connect's sink consumer group name, so lag tools keep working after migration."""
        return f"connect-{self.name}"

    @property
    def flush_size(self) -> int:
        return self.values["flush.size"]

    @property
    def format_class(self) -> str:
        return self.values["format.class"]

    @property
    def topics_dir(self) -> str:
        return self.values["topics.dir"]

    @property
    def bucket(self) -> str:
        return self.values["s3.bucket.name"]

    def __repr__(self) -> str:  # the dataclass repr would show every value, secrets included
        return f"SinkConfig({self.redacted()!r})"

    def redacted(self) -> dict[str, Any]:
        """Every explicitly set key, with secrets replaced, for logs and metadata."""
        out = {}
        for key in sorted(self.explicit_keys):
            value = self.values.get(key)
            definition = ALL_KEYS.get(key)
            secret = (definition is not None and definition.type in SECRET_TYPES) or key in CREDENTIALS_SECRET_KEYS
            if secret and value:
                value = "[hidden]"
            elif isinstance(value, str):
                value = without_url_password(value)
            out[key] = value
        return out


def resolved_connector_config(
    path: str | Path, worker_config: str | Path | None = None, env: Mapping[str, str] | None = None
) -> ResolvedConnectorConfig:
    """A connector config file over the settings of a Connect worker's properties file (if given), with
    every config provider placeholder resolved: what validation and the exports see."""
    return resolved_connector_document(read_connector_file(path), worker_config, env)


def resolved_connector_document(
    document: Mapping[str, Any], worker_config: str | Path | None = None, env: Mapping[str, str] | None = None
) -> ResolvedConnectorConfig:
    """As ``resolved_connector_config``, for a config given as a mapping (Connect's REST form or flat)
    rather than a file: a config written inline where the connector is declared."""
    connector = flatten_connect_json(document)
    if worker_config is None:
        return resolve_config_providers(connector, env)
    merged, sources = merge_worker_config(read_worker_config(worker_config), connector)
    return resolve_config_providers(merged, env, sources)


def load_connector_config(path: str | Path, worker_config: str | Path | None = None) -> SinkConfig:
    return validate_connector_config(resolved_connector_config(path, worker_config))


# Validated configs of this process, by content: one export needs the validated config in the CLI, the
# Dagster asset, its plan, its completeness check and each Spark task, and each has only the raw config.
_VALIDATED: dict[str, SinkConfig] = {}
_VALIDATED_MAX = 256  # connectors; beyond that the oldest is forgotten (and validated again if needed)
_VALIDATED_LOCK = threading.Lock()


def validate_connector_config(raw: Mapping[str, Any]) -> SinkConfig:
    """Parse, default and validate; raise one ConfigError listing every problem.

    A config is validated once per process: the same content again returns the same SinkConfig (treat it
    as read-only). A config with problems is checked again each time.
    """
    content = json.dumps({str(k): v for k, v in raw.items()}, sort_keys=True, default=repr)
    with _VALIDATED_LOCK:
        config = _VALIDATED.get(content)
    if config is None:
        config = _validate(raw)
        with _VALIDATED_LOCK:
            if len(_VALIDATED) >= _VALIDATED_MAX:
                del _VALIDATED[next(iter(_VALIDATED))]
            _VALIDATED[content] = config
    return config


def _validate(raw: Mapping[str, Any]) -> SinkConfig:
    if is_block_gzip_sink(raw):
        return _validate_block_gzip_sink(raw)
    problems: list[ConfigProblem] = []
    values: dict[str, Any] = {}
    converter_settings: dict[str, dict[str, Any]] = {p: {} for p in CONVERTER_PREFIXES}
    aliased: dict[str, set[str]] = {p: set() for p in CONVERTER_PREFIXES}  # settings set under another name
    consumer_overrides: dict[str, str] = {}
    worker_consumer_settings: dict[str, str] = {}
    client_overrides: dict[str, dict[str, str]] = {"producer.override.": {}, "admin.override.": {}}
    catalog_properties: dict[str, str] = {}
    unknown_keys: list[str] = []
    explicit = frozenset(str(k) for k in raw)
    transform_settings = {
        str(k): v for k, v in raw.items() if str(k) in TRANSFORM_LISTS or str(k).startswith(TRANSFORM_PREFIXES)
    }

    for key, value in raw.items():
        key = str(key)
        if key in ALL_KEYS:
            continue
        prefix = next((p for p in CONVERTER_PREFIXES if key.startswith(p)), None)
        if prefix is not None:
            setting = key[len(prefix) :]
            definition = CONVERTER_SETTINGS.get(setting) or _glue_converter_settings().get(setting)
            if definition is None and rule_object_setting(setting) is not None:
                # rule.executors.<name>.class / .param.* / .onFailure ..., read as Confluent reads them: strings.
                converter_settings[prefix][setting] = "" if value is None else str(value)
                continue
            if definition is None:
                problems.append(
                    ConfigProblem(key, f"Converter setting '{key}' is not supported yet by kafka_s3_assets")
                )
                continue
            try:
                parsed = parse_value(definition, value)
            except ValueError as exc:
                problems.append(
                    ConfigProblem(key, f"Invalid value {_display(value, definition)} for configuration {key}: {exc}")
                )
                continue
            message = definition.validator(key, parsed) if definition.validator is not None else None
            if message:
                problems.append(
                    ConfigProblem(
                        key, f"Invalid value {_display(parsed, definition)} for configuration {key}: {message}"
                    )
                )
            elif definition.support == Support.DEFAULT and parsed != definition.default:
                problems.append(
                    ConfigProblem(
                        key,
                        f"'{key}={_display(parsed, definition)}' is not supported yet by "
                        f"kafka_s3_assets (only the default "
                        f"'{_display(definition.default)}' is)",
                    )
                )
            else:
                # Another name of a setting (schema.registry.basic.auth.user.info, ...) is kept under the
                # setting's own name, so overrides given under that name replace it; set (not empty), it wins
                # over the setting's own name, as Confluent's client reads the deprecated user info first.
                name = CONVERTER_ALIASES.get(setting, setting)
                if name == setting:
                    if name not in aliased[prefix]:
                        converter_settings[prefix][name] = parsed
                elif parsed not in (None, ""):
                    converter_settings[prefix][name] = parsed
                    aliased[prefix].add(name)
                elif name not in converter_settings[prefix]:
                    converter_settings[prefix][name] = parsed
            continue
        if key.startswith("consumer.override."):
            consumer_overrides[key[len("consumer.override.") :]] = str(value)
            continue
        if key.startswith("consumer.") and key != "consumer.":
            worker_consumer_settings[key[len("consumer.") :]] = str(value)
            continue
        client_prefix = next((p for p in client_overrides if key.startswith(p)), None)
        if client_prefix is not None:
            client_overrides[client_prefix][key[len(client_prefix) :]] = str(value)
            continue
        if key.startswith(PASSTHROUGH_PREFIXES):
            continue
        if key.startswith(ICEBERG_CATALOG_PREFIX) and key != ICEBERG_CATALOG_PREFIX:
            catalog_properties[key[len(ICEBERG_CATALOG_PREFIX) :]] = str(value)
            continue
        if key.startswith(CREDENTIALS_PROVIDER_PREFIX):  # checked with the provider class, below
            continue
        if key.startswith(EXTENSION_PREFIX):  # our own prefix: nobody else defines keys under it, so a typo
            problems.append(ConfigProblem(key, f"Unknown kafka_s3_assets configuration key '{key}'{_nearest(key)}"))
        else:
            unknown_keys.append(key)  # accepted, as a Connect worker accepts them, and reported

    for prefix, found in converter_settings.items():
        problems.extend(ConfigProblem(prefix + setting, message) for setting, message in rule_setting_problems(found))

    for definition in ALL_KEYS.values():
        key = definition.name
        if key in raw and raw[key] is not None:
            try:
                value = parse_value(definition, raw[key])
            except ValueError as exc:
                problems.append(
                    ConfigProblem(key, f"Invalid value {_display(raw[key], definition)} for configuration {key}: {exc}")
                )
                continue
        elif definition.default is REQUIRED:
            problems.append(ConfigProblem(key, f'Missing required configuration "{key}" which has no default value.'))
            continue
        else:
            value = definition.default
        if definition.validator is not None:
            message = definition.validator(key, value)
            if message:
                problems.append(
                    ConfigProblem(
                        key, f"Invalid value {_display(value, definition)} for configuration {key}: {message}"
                    )
                )
                continue
        if definition.support == Support.DEFAULT and key in raw and value != definition.default:
            problems.append(
                ConfigProblem(
                    key,
                    f"'{key}={_display(value, definition)}' is not supported yet by kafka_s3_assets "
                    f"(only the default '{_display(definition.default)}' is)",
                )
            )
            continue
        values[key] = value

    credentials_provider, provider_problems = credentials_provider_config(
        raw, values.get("s3.credentials.provider.class"), values.get(DURATION_KEY)
    )
    problems.extend(provider_problems)
    problems.extend(_cross_checks(values, problems))
    key_converter = _converter(values, converter_settings, "key.converter")
    value_converter = _converter(values, converter_settings, "value.converter")
    problems.extend(_glue_converter_problems("key.converter", key_converter))
    problems.extend(_glue_converter_problems("value.converter", value_converter))
    from .transforms.chain import build_chain  # the transforms package reads this module's parse_value

    chain, chain_problems = build_chain(transform_settings)
    problems.extend(chain_problems)
    if problems:
        raise ConfigError(problems)
    warnings = [unknown_keys_warning(unknown_keys)] if unknown_keys else []
    warnings.extend(chain.warnings)
    return SinkConfig(
        values,
        key_converter,
        value_converter,
        consumer_overrides,
        explicit,
        worker_consumer_settings,
        client_overrides["producer.override."],
        client_overrides["admin.override."],
        credentials_provider=credentials_provider,
        iceberg_catalog_properties=catalog_properties,
        transform_settings=transform_settings,
        warnings=tuple(warnings),
    )


TRANSFORM_LISTS = ("transforms", "predicates")
TRANSFORM_PREFIXES = ("transforms.", "predicates.")


def unknown_keys_warning(keys: list[str]) -> str:
    """The warning listing the keys this project does not know: ignored, as a Connect worker ignores them,
    each with the known key it is closest to, so a typo stays easy to spot."""
    listed = "; ".join(f"'{key}'{_nearest(key)}" for key in sorted(keys))
    return (
        f"Ignored {len(keys)} configuration key(s) kafka_s3_assets does not know (Kafka Connect ignores them too): "
        f"{listed}"
    )


def _nearest(key: str) -> str:
    close = difflib.get_close_matches(key, list(ALL_KEYS), n=1, cutoff=0.8)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _validate_block_gzip_sink(raw: Mapping[str, Any]) -> SinkConfig:
    """The Block-GZIP S3 sink's config: its own keys checked by ``block_gzip_sink_config`` (problems name them),
    the Connect keys it shares with every connector checked here as usual."""
    translation = translate_block_gzip_sink(raw)
    problems = list(translation.problems)
    config = None
    try:
        config = _validate(translation.internal)
    except ConfigError as exc:
        problems.extend(exc.problems)
    if config is not None and config.transform_settings.get("transforms"):
        # Its objects hold the records' bytes as read (ByteArrayConverter): there is nothing to transform.
        problems.append(
            ConfigProblem(
                "transforms",
                f"'transforms={_display(config['transforms'])}' is not supported with {raw.get('connector.class')}: "
                "the Block-GZIP sink writes each record's bytes as read",
            )
        )
    if problems:
        raise ConfigError(problems)
    assert config is not None  # _validate returned it: its ConfigError has problems
    return replace(config, block_gzip_sink=translation.settings)


def _cross_checks(values: Mapping[str, Any], prior_problems: list[ConfigProblem]) -> list[ConfigProblem]:
    problems = []
    fmt = values.get("format.class")
    compression = values.get("s3.compression.type")
    if compression not in (None, "none"):
        # S3SinkConnectorValidator: gzip only for JSON and ByteArray, for each file that is written.
        checked = [("data", fmt)]
        if values.get("store.kafka.keys"):
            checked.append(("keys", values.get("keys.format.class")))
        if values.get("store.kafka.headers"):
            checked.append(("headers", values.get("headers.format.class")))
        for label, cls in checked:
            if cls is not None and cls not in (JSON_FORMAT, BYTEARRAY_FORMAT):
                problems.append(
                    ConfigProblem(
                        "s3.compression.type",
                        f"Compression Type {compression} not valid for {label} format class: ( {cls} ).",
                    )
                )
    if fmt == PARQUET_FORMAT and values.get("parquet.codec") in ("lzo", "lz4"):
        problems.append(
            ConfigProblem(
                "parquet.codec",
                f"Invalid value {values['parquet.codec']} for configuration "
                "parquet.codec: pyarrow cannot write it (lzo, or Hadoop-framed "
                "lz4); use lz4_raw, zstd, snappy, gzip, brotli or none",
            )
        )
    for key in ("keys.format.class", "headers.format.class"):
        if values.get(key) == BLOCK_GZIP_FORMAT:
            problems.append(
                ConfigProblem(
                    key,
                    f"Invalid value {BLOCK_GZIP_FORMAT} for configuration {key}: "
                    "Block-GZIP is a format for values only",
                )
            )
    if values.get("behavior.on.null.values", "").lower() == "write" and not values.get("store.kafka.keys"):
        problems.append(
            ConfigProblem(
                "behavior.on.null.values",
                "Writing Kafka record keys to storage is mandatory when tombstone writing is enabled.",
            )
        )
    # Keys that failed their own check are absent from ``values``: judge the rest against defaults, and
    # do not report a failed key a second time through its default.
    failed = {p.key for p in prior_problems}
    defaults = {k: d.default for k, d in ALL_KEYS.items() if d.default is not REQUIRED}
    problems.extend(p for p in partitioner_problems({**defaults, **values}) if p.key not in failed)
    if values.get("filename.offset.zero.pad.width") == 0:
        # Java builds "%00d", which throws DuplicateFormatFlagsException at the first commit.
        problems.append(
            ConfigProblem(
                "filename.offset.zero.pad.width",
                "Invalid value 0 for configuration filename.offset.zero.pad.width: "
                'the reference formats offsets with "%00d", which fails at runtime',
            )
        )
    if values.get("flush.size") is not None and values["flush.size"] < 1:
        # The reference has no validator, and a file would never rotate; say so up front.
        problems.append(
            ConfigProblem(
                "flush.size",
                f"Invalid value {values['flush.size']} for configuration flush.size: Value must be at least 1",
            )
        )
    problems.extend(_topics_problems(values, failed))
    problems.extend(_iceberg_problems(values))
    if values.get("directory.delim") == "":
        problems.append(
            ConfigProblem("directory.delim", "Invalid value for configuration directory.delim: must not be empty")
        )
    return problems


def _topics_problems(values: Mapping[str, Any], failed: set[str]) -> list[ConfigProblem]:
    """SinkConnectorConfig.validate: exactly one of topics and topics.regex (each error on both keys, as there),
    and the DLQ topic neither listed nor matched. A topics.regex that failed its own check is set all the same."""
    problems: list[ConfigProblem] = []
    topics = values.get("topics") or []
    regex = str(values.get("topics.regex") or "")
    has_topics = bool(topics)  # Connect: the value is not blank
    has_regex = bool(regex.strip()) or "topics.regex" in failed
    if has_topics and has_regex:
        message = "topics and topics.regex are mutually exclusive options, but both are set."
        problems += [ConfigProblem("topics", message), ConfigProblem("topics.regex", message)]
    elif not has_topics and not has_regex:
        message = "Must configure one of topics or topics.regex"
        problems += [ConfigProblem("topics", message), ConfigProblem("topics.regex", message)]
    elif has_topics and not [t for t in topics if t]:
        problems.append(
            ConfigProblem("topics", "Invalid value for configuration topics: at least one topic is required")
        )
    dlq_topic = (values.get("errors.deadletterqueue.topic.name") or "").strip()
    if dlq_topic and dlq_topic in topics:
        listed = "[" + ", ".join(dict.fromkeys(t for t in topics if t)) + "]"
        problems.append(
            ConfigProblem(
                "topics",
                f"The DLQ topic '{dlq_topic}' may not be included in the list of "
                f"topics ('topics={listed}') consumed by the connector",
            )
        )
    if dlq_topic and regex.strip() and "topics.regex" not in failed:
        from .transforms.java_regex import compile_java  # the transforms import this module

        if compile_java(regex).fullmatch(dlq_topic):  # Matcher.matches
            problems.append(
                ConfigProblem(
                    "topics.regex",
                    f"The DLQ topic '{dlq_topic}' may not be matched by the regex for the topics "
                    f"('topics.regex={regex}') consumed by the connector",
                )
            )
    return problems


def _iceberg_problems(values: Mapping[str, Any]) -> list[ConfigProblem]:
    """The Iceberg table registers the Parquet objects themselves as its data files: it needs ParquetFormat,
    and a catalog URL it can open (a SQLAlchemy URL or an Iceberg REST catalog's http(s) URL)."""
    uri = values.get(ICEBERG_CATALOG_URI)
    if uri is None:
        return []
    problems = []
    if values.get("format.class") != PARQUET_FORMAT:
        problems.append(
            ConfigProblem(
                ICEBERG_CATALOG_URI,
                f"The Iceberg table ({ICEBERG_CATALOG_URI}) registers "
                f"the exported Parquet objects as its data files: it "
                f"needs format.class={PARQUET_FORMAT}, not "
                f"{values.get('format.class')}",
            )
        )
    scheme, separator, rest = str(uri).partition("://")
    if not separator or not scheme or not rest.strip("/") or not scheme.replace("+", "").replace("-", "").isalnum():
        problems.append(
            ConfigProblem(
                ICEBERG_CATALOG_URI,
                f"Invalid value for configuration {ICEBERG_CATALOG_URI}: "
                "expected a SQLAlchemy URL (sqlite:///path/catalog.db, "
                "postgresql://host/db) or an Iceberg REST catalog URL "
                "(https://host/...)",
            )
        )
    for key in ("kafka_s3_assets.iceberg.catalog.name", "kafka_s3_assets.iceberg.namespace"):
        if not str(values.get(key) or "").strip():
            problems.append(ConfigProblem(key, f"Invalid value for configuration {key}: must not be empty"))
    table = values.get("kafka_s3_assets.iceberg.table")
    if table is not None and not str(table).strip():
        problems.append(
            ConfigProblem(
                "kafka_s3_assets.iceberg.table",
                "Invalid value for configuration "
                "kafka_s3_assets.iceberg.table: must not be empty (leave it out for the "
                "topic's name)",
            )
        )
    return problems


def _glue_converter_settings() -> Mapping[str, KeyDef]:
    # Imported here: the converters package imports this module.
    from .converters.glue import GLUE_CONVERTER_SETTINGS

    return GLUE_CONVERTER_SETTINGS


def _glue_converter_problems(prefix_key: str, converter: ConverterConfig) -> list[ConfigProblem]:
    """What an AWS Glue converter cannot work with, named by its key (the class key for the class itself)."""
    if converter.class_name not in GLUE_CONVERTERS:
        return []
    from .converters.glue import glue_setting_problems

    found = glue_setting_problems(
        converter.class_name, converter.settings, has_confluent_registry=bool(converter.schema_registry_url)
    )
    # Read-path settings implemented for Confluent's converters only (Confluent's deserializer would apply them
    # to the records the Glue converter's secondaryDeserializer reads).
    for setting, off in _CONFLUENT_READ_SETTINGS.items():
        value = converter.settings.get(setting)
        if value is not None and value != off:
            found.append(
                (
                    setting,
                    f"'{prefix_key}.{setting}={_display(value)}' is not supported yet by kafka_s3_assets with "
                    f"{converter.class_name} (only with Confluent's converters)",
                )
            )
    return [ConfigProblem(f"{prefix_key}.{setting}" if setting else prefix_key, message) for setting, message in found]


# Converter settings that change what Confluent's deserializers read, and their value that changes nothing.
_CONFLUENT_READ_SETTINGS: dict[str, Any] = {
    "use.latest.version": False,
    "use.latest.with.metadata": None,
    "avro.fail.on.trailing.data": False,
    "discard.type.doc.default": False,
}


def _converter(values, settings, prefix_key: str) -> ConverterConfig:
    found = settings[prefix_key + "."]
    return ConverterConfig(
        class_name=values.get(prefix_key) or AVRO_CONVERTER,
        schema_registry_url=found.get("schema.registry.url"),
        schemas_enable=found.get("schemas.enable", True),
        settings=found,
    )
