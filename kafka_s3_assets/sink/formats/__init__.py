"""Output formats: each turns the records of one object into bytes written to an ObjectOutput."""

from __future__ import annotations

from ..config_keys import AVRO_FORMAT, JSON_FORMAT
from .avro_format import AvroFormat
from .base import Format, RecordWriter
from .json_format import JsonFormat


def build_format(config) -> Format:
    name = config["format.class"]
    if name == AVRO_FORMAT:
        return AvroFormat(codec=config["avro.codec"])
    if name == JSON_FORMAT:
        return JsonFormat(compression=config["s3.compression.type"], level=config["s3.compression.level"])
    raise ValueError(f"format.class {name} is not supported yet")


__all__ = ["AvroFormat", "Format", "JsonFormat", "RecordWriter", "build_format"]
