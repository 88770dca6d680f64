"""AWS Glue Schema Registry lookups for the Glue converters: a schema version by its id (a UUID), with
``GetSchemaVersion`` on boto3's ``glue`` client, as the Glue SerDe library's deserializer does.

* The client is built from the converter's settings (``<prefix>region``, ``<prefix>endpoint``,
  ``<prefix>proxyUrl``) with the default credentials chain, as the library's converters do (environment,
  profile, container, instance profile, web identity); ``assumeRoleArn`` is not supported yet.
* Answers are cached per process, per registry endpoint and version id: a schema version never changes.
  (The library's cache refreshes after ``timeToLiveMillis`` and holds ``cacheSize`` versions; neither
  changes what a version id means.)
* Errors: a version Glue does not know (``EntityNotFoundException``) is :class:`GlueSchemaVersionNotFoundError`,
  a :class:`~.errors.SchemaNotFoundError` (the record's fault: the converter's DataException); anything
  else (no connection, access denied, throttling after botocore's retries) is :class:`GlueSchemaRegistryError`,
  a :class:`~.errors.SchemaRegistryError` naming the endpoint and region (a later run can succeed).
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from ..sink.converters.glue_types import GlueRegistryConfigError, GlueSchemaVersion
from .aws_sessions import new_boto3_session
from .errors import SchemaNotFoundError, SchemaRegistryError

REGION = "region"
ENDPOINT = "endpoint"
PROXY_URL = "proxyUrl"
CACHE_SIZE = "cacheSize"
TIME_TO_LIVE_MILLIS = "timeToLiveMillis"
DEFAULT_CACHE_SIZE = 200
DEFAULT_TIME_TO_LIVE_MILLIS = 24 * 60 * 60 * 1000


class GlueSchemaRegistryError(SchemaRegistryError):
    """Glue did not answer a schema version lookup (unreachable, refused, throttled)."""


class GlueSchemaVersionNotFoundError(SchemaNotFoundError):
    """Glue answered that the schema version id a record names does not exist."""

    def __init__(self, message: str, version_id: uuid.UUID):
        super().__init__(message)
        self.version_id = version_id


@dataclass(frozen=True)
class GlueRegistrySettings:
    """Where a Glue converter's registry is. Pickles: built on the driver, shipped to Spark tasks, where
    each process builds its own client."""

    region: str
    endpoint: str | None = None
    proxy_url: str | None = None
    cache_size: int = DEFAULT_CACHE_SIZE
    time_to_live_ms: int = DEFAULT_TIME_TO_LIVE_MILLIS
    timeout_s: float = 30.0

    @classmethod
    def from_converter_settings(
        cls, settings: Mapping[str, Any], env: Mapping[str, str] | None = None
    ) -> GlueRegistrySettings:
        """From the settings under ``key.converter.`` / ``value.converter.`` (prefix stripped). Without
        ``region``, the region comes from the default region chain (``$AWS_REGION``, ``$AWS_DEFAULT_REGION``,
        the profile), as in the library."""
        env = os.environ if env is None else env
        region = _text(settings.get(REGION)) or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
        if not region:
            region = boto3.session.Session().region_name
        if not region:
            raise GlueRegistryConfigError(
                REGION, "Region is not defined in the properties: set the converter's region (e.g. us-east-1)"
            )
        return cls(
            region=region,
            endpoint=_text(settings.get(ENDPOINT)),
            proxy_url=_text(settings.get(PROXY_URL)),
            cache_size=_integer(settings, CACHE_SIZE, DEFAULT_CACHE_SIZE, "Cache size property is not a valid size"),
            time_to_live_ms=_integer(
                settings,
                TIME_TO_LIVE_MILLIS,
                DEFAULT_TIME_TO_LIVE_MILLIS,
                "Time to live cache property is not a valid time",
            ),
        )

    def describe(self) -> str:
        return f"AWS Glue Schema Registry at {self.endpoint or 'the default endpoint'} in {self.region}"


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _integer(settings: Mapping[str, Any], key: str, default: int, message: str) -> int:
    value = settings.get(key)
    if value is None:
        return default
    try:
        return int(str(value).strip())
    except ValueError:
        raise GlueRegistryConfigError(key, f"{message} : {value}") from None


# One cache per process and registry (endpoint, region): every converter and Spark task of the process
# shares it, so a schema version costs one request per process.
_CACHES: dict[tuple[str | None, str], dict[uuid.UUID, GlueSchemaVersion]] = {}
_CACHES_LOCK = threading.Lock()


class GlueSchemaRegistryClient:
    """Schema versions by id from one Glue registry endpoint (see the module docstring)."""

    def __init__(self, settings: GlueRegistrySettings, *, client: Any = None):
        self.settings = settings
        self._client = client
        self._lock = threading.Lock()
        with _CACHES_LOCK:
            self._cache = _CACHES.setdefault((settings.endpoint, settings.region), {})

    def __getstate__(self) -> dict:  # the boto3 client does not pickle: each process builds its own
        return {"settings": self.settings}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["settings"])  # type: ignore[misc]

    def _glue(self) -> Any:
        with self._lock:
            if self._client is None:
                settings = self.settings
                config = Config(
                    connect_timeout=settings.timeout_s,
                    read_timeout=settings.timeout_s,
                    retries={"mode": "standard", "max_attempts": 3},
                    proxies={"http": settings.proxy_url, "https": settings.proxy_url} if settings.proxy_url else None,
                    user_agent_extra="kafka_s3_assets",
                )
                self._client = new_boto3_session().client(
                    "glue", region_name=settings.region, endpoint_url=settings.endpoint, config=config
                )
            return self._client

    def schema_version(self, version_id: uuid.UUID) -> GlueSchemaVersion:
        cached = self._cache.get(version_id)
        if cached is not None:
            return cached
        try:
            answer = self._glue().get_schema_version(SchemaVersionId=str(version_id))
        except ClientError as exc:
            error = exc.response.get("Error", {})
            code = error.get("Code", "")
            if code == "EntityNotFoundException":
                raise GlueSchemaVersionNotFoundError(
                    f"Schema version {version_id} not found in the {self.settings.describe()}", version_id
                ) from None
            raise GlueSchemaRegistryError(
                f"Failed to get schema version {version_id} from the {self.settings.describe()}: "
                f"{code} {error.get('Message', '')}".rstrip()
            ) from None
        except BotoCoreError as exc:
            raise GlueSchemaRegistryError(
                f"Failed to get schema version {version_id} from the {self.settings.describe()}: {exc}"
            ) from None
        if not answer.get("SchemaVersionId") or answer.get("SchemaDefinition") is None:
            raise GlueSchemaRegistryError(
                f"Schema definition is not present for the schema id = {version_id} in the {self.settings.describe()}"
            )
        version = GlueSchemaVersion(
            version_id=version_id,
            definition=answer["SchemaDefinition"],
            data_format=str(answer.get("DataFormat") or "AVRO").upper(),
            version_number=answer.get("VersionNumber"),
            schema_arn=answer.get("SchemaArn"),
            status=answer.get("Status"),
        )
        self._cache[version_id] = version
        return version


def glue_registry_for(settings: Mapping[str, Any]) -> GlueSchemaRegistryClient:
    """The client of the Glue registry a Glue converter's settings (prefix stripped) name."""
    return GlueSchemaRegistryClient(GlueRegistrySettings.from_converter_settings(settings))
