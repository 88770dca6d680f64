"""A Confluent Schema Registry REST client for the converters: schema by id, and its version in a
subject, cached per process (so all records of a Spark task share one lookup per id)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import requests

from ..sink.converters import RegisteredSchema
from .errors import SchemaRegistryError

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


def redact_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.password or parts.username:
        host = parts.hostname or ""
        if parts.port:
            host += f":{parts.port}"
        return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    return url


@dataclass(frozen=True)
class RegistrySettings:
    url: str
    timeout_s: float = 10.0

    def __repr__(self) -> str:
        return f"RegistrySettings(url={redact_url(self.url)!r})"


class SchemaRegistryClient:
    def __init__(self, settings: RegistrySettings):
        self._base = settings.url.split(",")[0].rstrip("/")
        self._shown = redact_url(self._base)
        self._timeout = settings.timeout_s
        self._session = requests.Session()
        self._session.headers["Accept"] = CONTENT_TYPE
        self._by_id: dict[int, RegisteredSchema] = {}
        self._versions: dict[int, list[dict]] = {}
        self._lock = threading.Lock()

    def _get(self, path: str):
        url = self._base + path
        try:
            response = self._session.get(url, timeout=self._timeout)
        except requests.RequestException as exc:
            raise SchemaRegistryError(f"Schema registry unreachable at {self._shown}: {type(exc).__name__}") from None
        if response.status_code == 404:
            return None
        if response.status_code >= 400:
            raise SchemaRegistryError(f"Schema registry at {self._shown} answered {response.status_code} for "
                                      f"GET {path}: {response.text[:200]}")
        return response.json()

    def schema_by_id(self, schema_id: int) -> RegisteredSchema:
        with self._lock:
            cached = self._by_id.get(schema_id)
        if cached is not None:
            return cached
        body = self._get(f"/schemas/ids/{schema_id}")
        if body is None:
            raise SchemaRegistryError(f"Schema {schema_id} not found in the schema registry at {self._shown}")
        found = RegisteredSchema(schema_id, body["schema"], body.get("schemaType", "AVRO"))
        with self._lock:
            self._by_id[schema_id] = found
        return found

    def version_in_subject(self, schema_id: int, subject: str) -> int | None:
        with self._lock:
            versions = self._versions.get(schema_id)
        if versions is None:
            versions = self._get(f"/schemas/ids/{schema_id}/versions") or []
            with self._lock:
                self._versions[schema_id] = versions
        for entry in versions:
            if entry.get("subject") == subject:
                return int(entry["version"])
        return None
