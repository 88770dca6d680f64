"""The connector config of the Block-GZIP S3 sink (spredfast/kafka-connect-s3 and the DeviantArt original
it forked), taken unchanged and translated into the internal connector model.

That sink has its own keys (``s3.bucket``, ``s3.prefix``, ``compressed_block_size``, ``format``, ...) and
no ConfigDef: it reads what it knows and ignores the rest. Here each of its keys is checked, and every
problem names the key as the user wrote it. The translation gives the rest of the system an ordinary
config (bucket, endpoint, path style, the consumer group ``connect-<name>``, the error tolerance, our
``kafka_s3_assets.*`` keys) plus :class:`BlockGzipSinkSettings`, which selects that sink's own object layout,
record format, index and cursor (``block_gzip_sink_records``, ``block_gzip_sink_writer``).

Keys:

- ``s3.bucket`` (required), ``s3.prefix`` (default none), ``s3.endpoint``, ``s3.path_style`` (default false);
- ``local.buffer.dir``: where the JVM buffered files; accepted, no effect (nothing is buffered on disk);
- ``compressed_block_size``: uncompressed bytes per gzip member (default 67108864);
- ``format``: ``text`` (default; ``TrailingDelimiterFormat``) or ``binary`` (``ByteLengthFormat``), also by
  class name; ``format.include.keys`` (binary), ``format.key.delimiter`` / ``format.value.delimiter`` /
  ``format.key.encoding`` / ``format.value.encoding`` (text);
- ``key.converter`` / ``value.converter``: ``AlreadyBytesConverter``, or the byte-preserving Connect converters
  ``ByteArrayConverter`` and ``StringConverter``. That sink turns Connect data back into bytes with the
  converter named here; without ``key.converter`` it writes no keys. Converters that rebuild the bytes
  from structured data (JSON, Avro) are refused: their output could not be reproduced byte for byte;
- Connect's framework keys (``name``, ``topics``, ``tasks.max``, ``errors.*``, ``consumer.override.*``, ...)
  and our ``kafka_s3_assets.*`` keys, as in any connector config.

Any other key is an error naming it: a Confluent S3 sink key in this config would silently mean nothing.
"""

from __future__ import annotations

import codecs
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .config_keys import (
    BLOCK_GZIP_FORMAT,
    BYTEARRAY_CONVERTER,
    EXTENSION_KEYS,
    EXTENSION_PREFIX,
    FRAMEWORK_KEYS,
    LONG_MAX,
    PASSTHROUGH_PREFIXES,
    S3_CONNECTOR,
    S3_STORAGE,
    STRING_CONVERTER,
)
from .errors import ConfigProblem

SPREDFAST_CONNECTOR = "com.spredfast.kafka.connect.s3.sink.S3SinkConnector"
DEVIANTART_CONNECTOR = "com.deviantart.kafka_connect_s3.S3SinkConnector"
SPREDFAST_CONNECTORS = (SPREDFAST_CONNECTOR, DEVIANTART_CONNECTOR)

ALREADY_BYTES_CONVERTER = "com.spredfast.kafka.connect.s3.AlreadyBytesConverter"
# Converters whose round trip (Kafka bytes -> Connect data -> bytes) gives the bytes back: AlreadyBytes and
# ByteArray return them as they are; StringConverter decodes and re-encodes UTF-8.
SUPPORTED_CONVERTERS = (ALREADY_BYTES_CONVERTER, BYTEARRAY_CONVERTER, STRING_CONVERTER)

TEXT_FORMAT_CLASS = "com.spredfast.kafka.connect.s3.TrailingDelimiterFormat"
BINARY_FORMAT_CLASS = "com.spredfast.kafka.connect.s3.ByteLengthFormat"
FORMAT_ALIASES = {"text": "text", "binary": "binary", TEXT_FORMAT_CLASS: "text", BINARY_FORMAT_CLASS: "binary"}

DEFAULT_BLOCK_SIZE = 67108864
# Where our manifests (and export leases) go, under s3.prefix: beside that sink's dated directories, under
# a name its S3 source never takes for a data or index file.
MANIFESTS_DIR = "_kafka_s3_assets/manifests"

# Our keys that this translation sets itself from the sink's own keys.
_DERIVED_EXTENSION_KEYS = ("kafka_s3_assets.block.gzip.compressed.block.size",)
_FRAMEWORK_KEY_NAMES = {k.name for k in FRAMEWORK_KEYS} - {"key.converter", "value.converter", "connector.class"}
_EXTENSION_KEY_NAMES = {k.name for k in EXTENSION_KEYS} - set(_DERIVED_EXTENSION_KEYS)
_CONNECT_PREFIXES = PASSTHROUGH_PREFIXES + ("consumer.", "header.converter.")
_SINK_KEYS = (
    "s3.bucket",
    "s3.prefix",
    "s3.endpoint",
    "s3.path_style",
    "local.buffer.dir",
    "compressed_block_size",
    "format",
    "format.include.keys",
    "format.key.delimiter",
    "format.value.delimiter",
    "format.key.encoding",
    "format.value.encoding",
    "key.converter",
    "value.converter",
    "connector.class",
)


@dataclass(frozen=True)
class BlockGzipSinkSettings:
    """What selects and shapes that sink's objects. ``key_prefix`` is ``s3.prefix`` as that sink uses it:
    with a trailing ``/`` added unless empty or already there."""

    connector_class: str
    key_prefix: str
    block_size: int
    format: str  # text | binary
    include_keys: bool  # binary: each record's key before its value
    value_delimiter: bytes  # text: after each value
    key_delimiter: bytes | None  # text: keys (and this delimiter) are written only with a key delimiter
    key_converter: str | None  # None: that sink has no key bytes (a binary key slot stays empty)
    value_converter: str

    @property
    def topics_dir(self) -> str:
        """The prefix as a key segment, for the object naming: ``a/`` -> ``a``."""
        return self.key_prefix[:-1] if self.key_prefix.endswith("/") else self.key_prefix


@dataclass(frozen=True)
class Translation:
    internal: dict[str, Any]
    settings: BlockGzipSinkSettings
    problems: list[ConfigProblem]


def is_block_gzip_sink(raw: Mapping[str, Any]) -> bool:
    return str(raw.get("connector.class", "")).strip() in SPREDFAST_CONNECTORS


def translate(raw: Mapping[str, Any]) -> Translation:
    """That sink's config -> an internal config and the settings of its layout, with every problem."""
    problems: list[ConfigProblem] = []
    values = {str(k): v for k, v in raw.items()}
    internal: dict[str, Any] = {}
    for key, value in values.items():
        if key in _SINK_KEYS:
            continue
        if key in _FRAMEWORK_KEY_NAMES or key in _EXTENSION_KEY_NAMES or key.startswith(_CONNECT_PREFIXES):
            internal[key] = value
        elif key.startswith(("key.converter.", "value.converter.")):
            problems.append(
                ConfigProblem(
                    key,
                    f"Converter setting '{key}' is not supported by kafka_s3_assets for "
                    f"{values['connector.class']}: its converters here take no settings",
                )
            )
        elif key.startswith("metrics."):
            problems.append(
                ConfigProblem(
                    key,
                    f"'{key}' is not supported by kafka_s3_assets: that sink's metrics "
                    "reporters (Datadog) run in its JVM; exports report through Dagster",
                )
            )
        elif key.startswith(EXTENSION_PREFIX):
            problems.append(
                ConfigProblem(key, f"Unknown kafka_s3_assets configuration key '{key}' for {values['connector.class']}")
            )
        else:
            problems.append(
                ConfigProblem(
                    key,
                    f"Unknown configuration key '{key}' for {values['connector.class']} "
                    "(the Block-GZIP S3 sink's keys: " + ", ".join(_SINK_KEYS[:12]) + ")",
                )
            )

    bucket = str(values.get("s3.bucket") or "").strip()
    if not bucket:
        problems.append(
            ConfigProblem("s3.bucket", 'Missing required configuration "s3.bucket": S3 bucket must be configured')
        )
    prefix = str(values.get("s3.prefix") or "")
    key_prefix = prefix + "/" if prefix and not prefix.endswith("/") else prefix
    block_size = _long(values, "compressed_block_size", DEFAULT_BLOCK_SIZE, problems)
    fmt = _format(values, problems)
    include_keys = _java_boolean(values.get("format.include.keys"))
    value_delimiter = _delimiter(values, "value", "\n", problems)
    key_delimiter = _delimiter(values, "key", None, problems)
    if "format.key.encoding" in values and "format.key.delimiter" not in values:
        problems.append(
            ConfigProblem("format.key.encoding", "Key encoding specified without delimiter! (set format.key.delimiter)")
        )
    key_converter = _converter(values, "key.converter", None, problems)
    value_converter = _converter(values, "value.converter", ALREADY_BYTES_CONVERTER, problems)
    path_style = _path_style(values, problems)

    internal.update(
        {
            "connector.class": S3_CONNECTOR,
            "storage.class": S3_STORAGE,
            "format.class": BLOCK_GZIP_FORMAT,
            # Sensors and plans launch an export as soon as one record waits: each run writes one object.
            "flush.size": "1",
            "s3.bucket.name": bucket or "unset",
            "topics.dir": key_prefix[:-1] if key_prefix.endswith("/") else key_prefix,
            "file.delim": "-",
            "filename.offset.zero.pad.width": "12",
            "s3.path.style.access.enabled": "true" if path_style else "false",
            # Records are read as bytes; the sink's own converter rules apply in its record format.
            "key.converter": BYTEARRAY_CONVERTER,
            "value.converter": BYTEARRAY_CONVERTER,
        }
    )
    if values.get("s3.endpoint"):
        internal["store.url"] = str(values["s3.endpoint"]).strip()
    if "kafka_s3_assets.manifests.prefix" not in values:
        internal["kafka_s3_assets.manifests.prefix"] = key_prefix + MANIFESTS_DIR
    settings = BlockGzipSinkSettings(
        connector_class=str(values["connector.class"]).strip(),
        key_prefix=key_prefix,
        block_size=block_size,
        format=fmt,
        include_keys=include_keys,
        value_delimiter=b"\n" if value_delimiter is None else value_delimiter,
        key_delimiter=key_delimiter,
        key_converter=key_converter,
        value_converter=value_converter or ALREADY_BYTES_CONVERTER,
    )
    return Translation(internal, settings, problems)


def _java_boolean(value: Any) -> bool:
    """Java's Boolean.valueOf / parseBoolean, which that sink uses: "true" in any case, else false."""
    if value is None:
        return False
    return value is True or str(value).strip().lower() == "true"


def _long(values: Mapping[str, Any], key: str, default: int, problems: list[ConfigProblem]) -> int:
    if key not in values:
        return default
    try:
        number = int(str(values[key]).strip())
    except ValueError:
        number = None
    if number is None or not -LONG_MAX - 1 <= number <= LONG_MAX:
        problems.append(
            ConfigProblem(key, f"Invalid value {values[key]} for configuration {key}: Not a number of type LONG")
        )
        return default
    return number


def _format(values: Mapping[str, Any], problems: list[ConfigProblem]) -> str:
    name = str(values.get("format", "text")).strip()
    fmt = FORMAT_ALIASES.get(name)
    if fmt is None:
        problems.append(
            ConfigProblem(
                "format",
                f"Invalid value {name} for configuration format: text, binary, "
                f"{TEXT_FORMAT_CLASS} or {BINARY_FORMAT_CLASS} (a custom "
                "S3RecordFormat class cannot run here)",
            )
        )
        return "text"
    return fmt


def _delimiter(
    values: Mapping[str, Any], which: str, default: str | None, problems: list[ConfigProblem]
) -> bytes | None:
    """TrailingDelimiterFormat's delimiter: the string, encoded in its encoding (UTF-8 unless set)."""
    text = values.get(f"format.{which}.delimiter", default)
    encoding_key = f"format.{which}.encoding"
    encoding = str(values.get(encoding_key, "UTF-8")).strip()
    try:
        codec = codecs.lookup(encoding)
    except LookupError:
        problems.append(
            ConfigProblem(encoding_key, f"Invalid value {encoding} for configuration {encoding_key}: unknown charset")
        )
        return None if text is None else str(text).encode("utf-8")
    if codec.name in ("utf-16", "utf-32"):
        # Java's UTF-16 writes a byte order mark with every delimiter; name the byte order instead.
        problems.append(
            ConfigProblem(
                encoding_key,
                f"Invalid value {encoding} for configuration {encoding_key}: "
                "use UTF-16BE / UTF-16LE (or UTF-32BE / UTF-32LE)",
            )
        )
    return None if text is None else str(text).encode(codec.name)


def _converter(values: Mapping[str, Any], key: str, default: str | None, problems: list[ConfigProblem]) -> str | None:
    name = values.get(key)
    if name is None:
        return default
    name = str(name).strip()
    if name not in SUPPORTED_CONVERTERS:
        problems.append(
            ConfigProblem(
                key,
                f"Invalid value {name} for configuration {key}: supported with "
                f"{values['connector.class']}: "
                + ", ".join(SUPPORTED_CONVERTERS)
                + " (converters that re-serialize structured data cannot be reproduced "
                "byte for byte)",
            )
        )
        return default
    return name


def _path_style(values: Mapping[str, Any], problems: list[ConfigProblem]) -> bool:
    raw = values.get("s3.path_style")
    if raw is None:
        return False
    text = str(raw).strip().lower()
    if text not in ("true", "false"):
        # That sink reads anything but "true" as false; a typo would silently switch addressing styles.
        problems.append(
            ConfigProblem(
                "s3.path_style",
                f"Invalid value {raw} for configuration s3.path_style: Expected value to be either true or false",
            )
        )
    return text == "true"
