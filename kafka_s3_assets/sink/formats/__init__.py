"""Output formats: each turns the records of one object into bytes written to an ObjectOutput."""

from __future__ import annotations

from typing import Any

from ..config_keys import AVRO_FORMAT, BYTEARRAY_FORMAT, JSON_FORMAT, PARQUET_FORMAT
from .avro_format import AvroFormat
from .base import Format, RecordWriter
from .block_gzip_format import BLOCK_GZIP_FORMAT, BLOCK_SIZE_KEY, DEFAULT_BLOCK_SIZE, BlockGzipFormat
from .bytearray_format import ByteArrayFormat
from .json_format import JsonFormat
from .parquet_format import DEFAULT_ROW_GROUP_BYTES, ParquetFormat


def _setting(config, key: str, default: Any) -> Any:
    """A key's value, or ``default`` when the config (a SinkConfig or a plain dict) lacks it or holds None."""
    try:
        value = config[key]
    except KeyError:
        return default
    return default if value is None else value


def build_format(config, class_key: str = "format.class") -> Format:
    """The format named by ``config[class_key]``: ``format.class``, ``keys.format.class`` or
    ``headers.format.class``. The other format settings (compression, separators, codecs) are shared
    by the three, as in the reference."""
    name = config[class_key]
    compression = _setting(config, "s3.compression.type", "none")
    level = int(_setting(config, "s3.compression.level", -1))
    if name == AVRO_FORMAT:
        return AvroFormat(
            codec=_setting(config, "avro.codec", "null"),
            validate_datums=_setting(config, "kafka_s3_assets.avro.validate.datums", True),
        )
    decimal_format = _setting(config, "json.decimal.format", "BASE64")
    if name == JSON_FORMAT:
        return JsonFormat(compression=compression, level=level, decimal_format=decimal_format)
    if name == BYTEARRAY_FORMAT:
        # The separator is taken as given (None: a newline), never trimmed or unescaped.
        return ByteArrayFormat(
            extension=_setting(config, "format.bytearray.extension", ".bin"),
            separator=_setting(config, "format.bytearray.separator", None),
            compression=compression,
            level=level,
        )
    if name == PARQUET_FORMAT:
        part_size = int(_setting(config, "s3.part.size", DEFAULT_ROW_GROUP_BYTES))
        return ParquetFormat(
            codec=_setting(config, "parquet.codec", "snappy"), row_group_bytes=min(DEFAULT_ROW_GROUP_BYTES, part_size)
        )
    if name == BLOCK_GZIP_FORMAT:
        return BlockGzipFormat(
            block_size=int(_setting(config, BLOCK_SIZE_KEY, DEFAULT_BLOCK_SIZE)),
            level=level,
            json_format=JsonFormat("none", decimal_format=decimal_format),
        )
    raise ValueError(f"{class_key} {name} is not supported yet")


__all__ = [
    "AvroFormat",
    "BLOCK_GZIP_FORMAT",
    "BLOCK_SIZE_KEY",
    "BlockGzipFormat",
    "ByteArrayFormat",
    "Format",
    "JsonFormat",
    "ParquetFormat",
    "RecordWriter",
    "build_format",
]
