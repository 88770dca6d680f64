"""The Connect schema of a registry value schema id, looked up on the driver after a run, or of the schema
the connector's transforms gave the values written: what the Dagster surface shows as an export's columns."""

from __future__ import annotations

import json
import logging

from ..clients.schema_registry import SchemaRegistryClient
from ..sink.schema.avro_to_connect import to_connect_schema
from ..sink.schema.connect_schema import ConnectSchema
from ..sink.secrets import scrub
from .settings import ExportSettings

log = logging.getLogger(__name__)


def value_connect_schema(
    settings: ExportSettings, schema_id: int | None, schema_json: str | None = None
) -> ConnectSchema | None:
    """As AvroConverter makes it of the registered Avro schema; without an id, of ``schema_json`` (the Avro
    file schema of a value schema with no id: the connector's transforms made it); None without either, a
    registry, an Avro schema, or an answer (the export's results stand without it: logged)."""
    if schema_id is None and schema_json is not None:
        try:
            return to_connect_schema(json.loads(schema_json))
        except Exception as exc:  # a view of the data, never a reason to fail the export
            log.warning("Columns of the written value schema not shown: %s", exc)
            return None
    if schema_id is None or settings.registry is None:
        return None
    try:
        registered = SchemaRegistryClient(settings.registry).schema_by_id(schema_id)
        if registered.schema_type.upper() != "AVRO":
            return None
        return to_connect_schema(json.loads(registered.schema))
    except Exception as exc:  # the columns are a view of the data, never a reason to fail the export
        log.warning("Columns of value schema %s not shown: %s", schema_id, scrub(str(exc), settings.secrets()))
        return None
