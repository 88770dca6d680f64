"""The schema registry lookups of the converters (a schema by id, a subject version for references, and the
versions of an id), on confluent-kafka's ``SchemaRegistryClient``.

Schemas come back with their type and references. A PROTOBUF schema always comes back as a base64
``FileDescriptorProto``: it is asked again with ``format=serialized``, as confluent-kafka's Protobuf serdes
ask (Confluent's registry answers ``.proto`` text without it). Only PROTOBUF schemas are asked for that
format, so registries that do not know it see it only where a Protobuf reader needs it anyway. The library
caches a schema without its format, so the serialized requests go through a second library client per URL.

confluent-kafka's client does the HTTP: retries per URL on connection errors and 408, 429, 500, 502,
503, 504, up to ``max.retries`` times after an exponential backoff with full jitter (``retries.wait.ms``
doubling up to ``retries.max.wait.ms``); basic auth; a static bearer token with the Confluent Cloud
``target-sr-cluster`` and ``Confluent-Identity-Pool-Id`` headers; TLS with a CA bundle and a client
certificate as PEM files (``schema.registry.ssl.ca.location``, ``…certificate.location``,
``…key.location``); the request timeout. This module adds what it does not do:

* failover as Confluent's Java client (``RestService``/``UrlList``): each URL of ``schema.registry.url``
  gets its own library client, so each URL carries its own user info, the URL that last worked stays
  current, and an error names every URL that failed. (The library's own URL list starts again from the
  first URL on every request and sends the first URL's user info to all of them.)
* the settings as Kafka Connect's converters name them (``basic.auth.credentials.source``, …), checked
  up front with errors naming the setting; they pickle, to be shipped to Spark tasks;
* a lookup cache per process, shared by every client of the same registry and credentials, so all the
  records (and partition exports) a Spark worker handles cost one request per schema id. A schema id's
  schema never changes; its subject versions can grow, so a subject missing from the cached versions
  is looked up once more per client;
* our errors: they name the schema id, the request and the registry. Secrets (passwords, tokens, URL
  user info) never appear in ``repr``, in error messages, or in chained exceptions: errors are raised
  ``from None`` with redacted URLs and scrubbed registry messages.
"""

from __future__ import annotations

import base64
import hashlib
import os
import random
import ssl
import tempfile
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from confluent_kafka.schema_registry import RegisteredSchema as LibraryRegisteredSchema
from confluent_kafka.schema_registry import SchemaRegistryClient as LibraryClient
from confluent_kafka.schema_registry.common._httpx_compat import httpx  # the HTTP library the client uses
from confluent_kafka.schema_registry.error import SchemaRegistryError as LibraryError
from confluent_kafka.schema_registry.schema_registry_client import is_retriable

from ..sink.config_keys import converter_setting_value
from ..sink.converters import RegisteredSchema, SchemaReference
from ..sink.data_rules import rule_set_from_library
from ..sink.secrets import scrub
from .errors import SchemaNotFoundError, SchemaRegistryError
from .registry_tls import RegistryTls, TlsSettingError, registry_tls

PROTOBUF = "PROTOBUF"
SERIALIZED_FORMAT = "serialized"
LATEST_VERSION = -1

BASIC_AUTH_SOURCES = ("URL", "USER_INFO")
BEARER_AUTH_SOURCES = ("STATIC_TOKEN",)

# Converter settings (after the key.converter. / value.converter. prefix) read by from_converter_settings,
# each also under its other names (config_keys.CONVERTER_ALIASES: schema.registry.basic.auth.user.info, ...).
SETTING_FIELDS = {
    "basic.auth.credentials.source": "basic_auth_credentials_source",
    "basic.auth.user.info": "basic_auth_user_info",
    "bearer.auth.credentials.source": "bearer_auth_credentials_source",
    "bearer.auth.token": "bearer_auth_token",
    "bearer.auth.logical.cluster": "bearer_auth_logical_cluster",
    "bearer.auth.identity.pool.id": "bearer_auth_identity_pool_id",
    "schema.registry.ssl.ca.location": "ssl_ca_location",
    "schema.registry.ssl.certificate.location": "ssl_certificate_location",
    "schema.registry.ssl.key.location": "ssl_key_location",
    "schema.registry.ssl.key.password": "ssl_key_password",
    "max.retries": "max_retries",
    "retries.wait.ms": "retries_wait_ms",
    "retries.max.wait.ms": "retries_max_wait_ms",
    "schema.registry.url.randomize": "url_randomize",
    "proxy.host": "proxy_host",
    "proxy.port": "proxy_port",
}
# CachedSchemaRegistryClient.getHostnameVerifier: "none" (exactly) or empty accepts any host name. (Absent,
# Confluent's client accepts any host name too; here the host name is then checked, as Python's ssl does.)
ENDPOINT_IDENTIFICATION = "schema.registry.ssl.endpoint.identification.algorithm"
# Confluent's client settings in milliseconds, kept in seconds.
TIMEOUT_FIELDS = {"http.connect.timeout.ms": "connect_timeout_s", "http.read.timeout.ms": "read_timeout_s"}


class RegistryConfigError(ValueError):
    """Registry settings that cannot work; ``setting`` names the converter setting (without its prefix)."""

    def __init__(self, setting: str, message: str):
        super().__init__(message)
        self.setting = setting


def redact_url(url: str) -> str:
    """The URL without its user info (``http://user:pw@host`` -> ``http://host``)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rpartition("@")[2]  # host[:port] as written (IPv6 brackets, odd ports included)
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def split_urls(url: str) -> list[str]:
    """``schema.registry.url``: one or more URLs, comma separated (blanks around commas ignored)."""
    return [u.strip().rstrip("/") for u in url.split(",") if u.strip()]


@dataclass(frozen=True)
class RegistrySettings:
    """How to reach the registry. Pickles (shipped to Spark tasks); secrets never print."""

    url: str
    timeout_s: float = 10.0
    basic_auth_credentials_source: str = "URL"
    basic_auth_user_info: str | None = field(default=None, repr=False)
    bearer_auth_credentials_source: str | None = None
    bearer_auth_token: str | None = field(default=None, repr=False)
    bearer_auth_logical_cluster: str | None = None
    bearer_auth_identity_pool_id: str | None = None
    ssl_ca_location: str | None = None
    ssl_certificate_location: str | None = None
    ssl_key_location: str | None = None
    max_retries: int = 3
    retries_wait_ms: int = 1000
    retries_max_wait_ms: int = 20000
    url_randomize: bool = False
    proxy_host: str | None = None
    proxy_port: int = -1
    # http.connect.timeout.ms / http.read.timeout.ms; None: timeout_s.
    connect_timeout_s: float | None = None
    read_timeout_s: float | None = None
    ssl_key_password: str | None = field(default=None, repr=False)
    # PEM text read from Java truststores and keystores (schema.registry.ssl.truststore.*, ….keystore.*) or
    # given inline: written to private temporary files only while a library client loads them.
    ssl_ca_pem: str | None = None
    ssl_certificate_pem: str | None = None
    ssl_key_pem: str | None = field(default=None, repr=False)
    # schema.registry.ssl.endpoint.identification.algorithm empty or "none": the registry's host name is not
    # checked against its certificate (whose chain still is).
    ssl_check_hostname: bool = True

    def __post_init__(self) -> None:
        self._validate()

    @classmethod
    def from_converter_settings(
        cls, url: str, settings: Mapping[str, Any], timeout_s: float = 10.0
    ) -> RegistrySettings:
        """From a converter's settings (``ConverterConfig.settings``: ``basic.auth.user.info``, … without
        the ``value.converter.`` prefix). Raises RegistryConfigError naming the setting at fault.

        As Confluent's client, naming both ``basic.auth.credentials.source`` and
        ``bearer.auth.credentials.source`` is an error (the basic source's default, URL, is not naming it).
        """
        if converter_setting_value(settings, "basic.auth.credentials.source") and converter_setting_value(
            settings, "bearer.auth.credentials.source"
        ):
            raise RegistryConfigError(
                "bearer.auth.credentials.source",
                "Only one of 'basic.auth.credentials.source' and 'bearer.auth.credentials.source' may be specified",
            )
        values: dict[str, Any] = {}
        for key, attr in SETTING_FIELDS.items():
            value = converter_setting_value(settings, key)
            if value is not None:
                values[attr] = value
        for key, attr in TIMEOUT_FIELDS.items():
            value = converter_setting_value(settings, key)
            if value is not None:
                values[attr] = int(value) / 1000
        algorithm = settings.get(ENDPOINT_IDENTIFICATION)
        if algorithm is not None and str(algorithm) in ("", "none"):
            values["ssl_check_hostname"] = False
        try:
            tls = registry_tls(settings)
        except TlsSettingError as exc:
            raise RegistryConfigError(exc.setting, str(exc)) from None
        if tls.ca_pem is not None or tls.ca_location is not None:
            if values.get("ssl_ca_location"):
                raise RegistryConfigError(
                    "schema.registry.ssl.truststore.location",
                    "Set one of schema.registry.ssl.truststore.* and schema.registry.ssl.ca.location",
                )
            values["ssl_ca_pem"] = tls.ca_pem
            values["ssl_ca_location"] = tls.ca_location
        if tls.has_client_certificate:
            if values.get("ssl_certificate_location"):
                raise RegistryConfigError(
                    "schema.registry.ssl.keystore.location",
                    "Set one of schema.registry.ssl.keystore.* and schema.registry.ssl.certificate.location",
                )
            _put_client_certificate(values, tls)
        return cls(url, timeout_s, **values)

    @property
    def urls(self) -> list[str]:
        return split_urls(self.url)

    def _validate(self) -> None:
        urls = self.urls
        if not urls:
            raise RegistryConfigError("schema.registry.url", "No schema registry URL")
        for url in urls:
            parts = urlsplit(url)
            try:
                parts.port  # noqa: B018 - parsing it is the check
            except ValueError:
                valid = False
            else:
                valid = parts.scheme in ("http", "https") and bool(parts.hostname)
            if not valid:
                raise RegistryConfigError(
                    "schema.registry.url",
                    f"Invalid schema registry URL '{redact_url(url)}': expected http(s)://host[:port][/path]",
                )
        if self.basic_auth_credentials_source not in BASIC_AUTH_SOURCES:
            raise RegistryConfigError(
                "basic.auth.credentials.source",
                f"basic.auth.credentials.source={self.basic_auth_credentials_source} is not "
                f"supported: use {' or '.join(BASIC_AUTH_SOURCES)}",
            )
        if self.bearer_auth_credentials_source is not None:
            if self.bearer_auth_credentials_source not in BEARER_AUTH_SOURCES:
                raise RegistryConfigError(
                    "bearer.auth.credentials.source",
                    f"bearer.auth.credentials.source={self.bearer_auth_credentials_source} is "
                    f"not supported: use {' or '.join(BEARER_AUTH_SOURCES)}",
                )
            if not self.bearer_auth_token:
                raise RegistryConfigError(
                    "bearer.auth.token", "bearer.auth.credentials.source=STATIC_TOKEN needs bearer.auth.token"
                )
        elif self.basic_auth_credentials_source == "USER_INFO":
            if not self.basic_auth_user_info or ":" not in self.basic_auth_user_info:
                raise RegistryConfigError(
                    "basic.auth.user.info",
                    "basic.auth.credentials.source=USER_INFO needs basic.auth.user.info as user:password",
                )
        if (self.ssl_key_location or self.ssl_key_pem) and not (
            self.ssl_certificate_location or self.ssl_certificate_pem
        ):
            raise RegistryConfigError(
                "schema.registry.ssl.key.location",
                "schema.registry.ssl.key.location needs schema.registry.ssl.certificate.location",
            )
        for name in ("max_retries", "retries_wait_ms", "retries_max_wait_ms"):
            if getattr(self, name) < 0:
                raise RegistryConfigError(name.replace("_", "."), f"{name.replace('_', '.')} must be at least 0")
        if self.timeout_s <= 0:
            raise RegistryConfigError("kafka_s3_assets.registry.timeout.ms", "The registry timeout must be positive")
        for name, key in (("connect_timeout_s", "http.connect.timeout.ms"), ("read_timeout_s", "http.read.timeout.ms")):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise RegistryConfigError(key, f"{key} must be positive")

    @property
    def proxy(self) -> str | None:
        """RestService.isValidProxyConfig: a proxy when ``proxy.host`` is set and ``proxy.port`` > 0 (otherwise
        none, silently, as there). An HTTP proxy: https registries are reached through a CONNECT tunnel."""
        if not self.proxy_host or not self.proxy_port or self.proxy_port <= 0:
            return None
        host = self.proxy_host.strip()
        if "://" in host:  # Confluent's client takes a scheme://host too (its Apache client's URI)
            host = urlsplit(host).hostname or host
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"  # an IPv6 address
        return f"http://{host}:{self.proxy_port}"

    def secrets(self) -> list[str]:
        """Every secret these settings hold, longest first: scrubbed from anything we print."""
        found: set[str] = set()
        for value in (self.ssl_key_password, self.ssl_key_pem):
            if value:
                found.add(value)
        for value in (self.basic_auth_user_info, self.bearer_auth_token):
            if value:
                found.add(value)
                if ":" in value:
                    found.add(value.split(":", 1)[1])
        for url in self.urls:
            parts = urlsplit(url)
            if parts.password:
                found.update((parts.password, unquote(parts.password)))
            if parts.username is not None:
                if not parts.password:  # a token passed as the user name
                    found.update((parts.username, unquote(parts.username)))
                found.add(f"{parts.username}:{parts.password or ''}")
                found.add(f"{unquote(parts.username)}:{unquote(parts.password or '')}")
        found |= {base64.b64encode(s.encode()).decode() for s in list(found)}
        return sorted((s for s in found if s), key=len, reverse=True)

    def cache_identity(self) -> tuple:
        """What a cached lookup depends on: the registry (URLs, logical cluster) and who asks."""
        fingerprint = hashlib.sha256("\0".join(self.secrets()).encode()).hexdigest()
        return (
            tuple(redact_url(u) for u in self.urls),
            self.bearer_auth_logical_cluster,
            self.bearer_auth_identity_pool_id,
            fingerprint,
        )

    def __repr__(self) -> str:
        auth = (
            f"bearer={self.bearer_auth_credentials_source}"
            if self.bearer_auth_credentials_source
            else f"basic={self.basic_auth_credentials_source}"
        )
        client_certificate = self.ssl_certificate_location or self.ssl_certificate_pem
        tls = (
            ", tls=client-cert"
            if client_certificate
            else (", tls=ca" if self.ssl_ca_location or self.ssl_ca_pem else "")
        )
        proxy = f", proxy={self.proxy}" if self.proxy else ""
        if not self.ssl_check_hostname:
            tls += ", no hostname check"
        return (
            f"RegistrySettings(url={', '.join(redact_url(u) for u in self.urls)!r}, {auth}{tls}{proxy}, "
            f"max_retries={self.max_retries}, timeout_s={self.timeout_s})"
        )

    __str__ = __repr__


# ---------------------------------------------------------------------------------------------------
# The per-process lookup cache


class _LookupCache:
    """Schema by id, schema by subject version, and (subject, version) pairs by id, for one registry and
    identity; thread-safe."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.schemas: dict[int, RegisteredSchema] = {}
        self.subject_versions: dict[tuple[str, int], RegisteredSchema] = {}
        self.versions: dict[int, tuple[tuple[str, int], ...]] = {}


_CACHES: dict[tuple, _LookupCache] = {}
_CACHES_LOCK = threading.Lock()


def _shared_cache(identity: tuple) -> _LookupCache:
    with _CACHES_LOCK:
        cache = _CACHES.get(identity)
        if cache is None:
            cache = _CACHES[identity] = _LookupCache()
        return cache


def clear_shared_caches() -> None:
    """Forget every cached lookup of this process (tests; a registry that was reset)."""
    with _CACHES_LOCK:
        _CACHES.clear()


# ---------------------------------------------------------------------------------------------------
# The client


class _Retriable(Exception):
    """This URL failed in a way worth trying the next one for (after the library's retries)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _put_client_certificate(values: dict[str, Any], tls: RegistryTls) -> None:
    if tls.certificate_location is not None:  # a PEM keystore file: the key and the certificates in one
        values["ssl_certificate_location"] = tls.certificate_location
    if tls.certificate_pem is not None:
        values["ssl_certificate_pem"] = tls.certificate_pem
    if tls.key_pem is not None:
        values["ssl_key_pem"] = tls.key_pem
    if tls.key_password is not None:
        values.setdefault("ssl_key_password", tls.key_password)


@contextmanager
def _pem_files(settings: RegistrySettings) -> Iterator[dict[str, str]]:
    """The settings' PEM texts as files in a private temporary directory, for as long as a library client
    reads them (it loads them into its SSL context when it is made)."""
    texts = {"ca": settings.ssl_ca_pem, "certificate": settings.ssl_certificate_pem, "key": settings.ssl_key_pem}
    if not any(texts.values()):
        yield {}
        return
    with tempfile.TemporaryDirectory(prefix="kafka_s3_assets-registry-tls-") as directory:  # mode 0700
        paths = {}
        for name, text in texts.items():
            if text:
                path = os.path.join(directory, f"{name}.pem")
                descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(descriptor, "w", encoding="ascii") as out:
                    out.write(text)
                paths[name] = path
        yield paths


def _library_client(settings: RegistrySettings, url: str) -> LibraryClient:
    with _pem_files(settings) as files:
        client = LibraryClient(_library_config(settings, url, files))
    if not settings.ssl_check_hostname:
        # The library has no setting for it: its HTTP client verifies with this SSL context, which keeps
        # verifying the certificate chain (CERT_REQUIRED) without matching the host name.
        client._rest_client.verify.check_hostname = False
    return client


def _library_config(settings: RegistrySettings, url: str, files: Mapping[str, str] | None = None) -> dict[str, Any]:
    """confluent-kafka's client configuration for one of our URLs (given without its user info: the
    credentials go in ``basic.auth.user.info``, so no library message or request log can show them).
    ``files``: the paths of the settings' PEM texts (``_pem_files``)."""
    s = settings
    files = files or {}
    timeout: Any = s.timeout_s
    if s.connect_timeout_s is not None or s.read_timeout_s is not None:
        timeout = httpx.Timeout(
            s.timeout_s, connect=s.connect_timeout_s or s.timeout_s, read=s.read_timeout_s or s.timeout_s
        )
    config: dict[str, Any] = {
        "url": redact_url(url),
        "timeout": timeout,
        "max.retries": s.max_retries,
        "retries.wait.ms": s.retries_wait_ms,
        "retries.max.wait.ms": s.retries_max_wait_ms,
    }
    if s.proxy:
        config["proxy"] = s.proxy
    ca = files.get("ca") or s.ssl_ca_location
    if ca:
        config["ssl.ca.location"] = ca
    certificate = files.get("certificate") or s.ssl_certificate_location
    if certificate:
        config["ssl.certificate.location"] = certificate
    key = files.get("key") or s.ssl_key_location
    if key:
        config["ssl.key.location"] = key
    if s.ssl_key_password:
        config["ssl.key.password"] = s.ssl_key_password
    parts = urlsplit(url)
    if s.bearer_auth_credentials_source == "STATIC_TOKEN":
        config.update(
            {
                "bearer.auth.credentials.source": "STATIC_TOKEN",
                "bearer.auth.token": s.bearer_auth_token,
                # The library requires a logical cluster with a static token; a registry that is not
                # Confluent Cloud ignores an empty target-sr-cluster header.
                "bearer.auth.logical.cluster": s.bearer_auth_logical_cluster or "",
            }
        )
        if s.bearer_auth_identity_pool_id:
            config["bearer.auth.identity.pool.id"] = s.bearer_auth_identity_pool_id
    elif s.basic_auth_credentials_source == "USER_INFO":
        config["basic.auth.user.info"] = s.basic_auth_user_info
    elif parts.username is not None:  # URL: the user info of this URL, if any
        config["basic.auth.user.info"] = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
    return config


def _is_tls_failure(exc: BaseException) -> bool:
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ssl.SSLError) or "SSL" in str(cause):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


class SchemaRegistryClient:
    """Implements ``converters.SchemaSource`` against a Confluent-compatible registry."""

    def __init__(self, settings: RegistrySettings):
        self._settings = settings
        self._secrets = settings.secrets()
        self._urls = [redact_url(url) for url in settings.urls]
        try:
            self._clients = [_library_client(settings, url) for url in settings.urls]
        except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError: unreadable PEM files
            raise SchemaRegistryError(
                f"Cannot set up the schema registry client for {self._shown()} (check "
                f"schema.registry.ssl.* and the credentials): {self._brief(exc)}"
            ) from None
        # Clients for format=serialized requests, made when a PROTOBUF schema first needs one.
        self._serialized_clients: list[LibraryClient | None] = [None] * len(self._clients)
        # UrlList: the first URL, or a random one with schema.registry.url.randomize.
        self._current = random.randrange(len(self._clients)) if settings.url_randomize else 0
        self._current_lock = threading.Lock()
        self._cache = _shared_cache(settings.cache_identity())
        self._rechecked: set[tuple[int, str]] = set()

    def __repr__(self) -> str:
        return f"SchemaRegistryClient({self._shown()})"

    # -- the SchemaSource API --

    def schema_by_id(self, schema_id: int) -> RegisteredSchema:
        """The schema of ``schema_id``, with its type and references (PROTOBUF: a base64 FileDescriptorProto)."""
        with self._cache.lock:
            cached = self._cache.schemas.get(schema_id)
        if cached is not None:
            return cached
        path = f"/schemas/ids/{schema_id}"
        schema = self._request(path, lambda client: client.get_schema(schema_id))
        if schema is not None and _schema_type(schema) == PROTOBUF:
            schema = self._request(
                f"{path}?format={SERIALIZED_FORMAT}",
                lambda client: client.get_schema(schema_id, fmt=SERIALIZED_FORMAT),
                serialized=True,
            )
        if schema is None:
            raise SchemaNotFoundError(f"Schema {schema_id} not found in the schema registry at {self._shown()}")
        found = self._registered(schema_id, schema, f"schema {schema_id}")
        with self._cache.lock:
            self._cache.schemas[schema_id] = found
        return found

    def schema_by_subject_version(self, subject: str, version: int) -> RegisteredSchema:
        """The schema of version ``version`` of ``subject`` (-1: the latest), as a schema reference names it
        (PROTOBUF: a base64 FileDescriptorProto).

        A numbered version is found even when soft-deleted (``deleted=true``, as confluent-kafka resolves
        references), and cached like an id; -1 is the latest live version, asked every time.
        """
        key = (subject, version)
        if version != LATEST_VERSION:
            with self._cache.lock:
                cached = self._cache.subject_versions.get(key)
            if cached is not None:
                return cached
        wanted: int | str = "latest" if version == LATEST_VERSION else version
        path = f"/subjects/{quote(subject, safe='')}/versions/{wanted}"
        deleted = version != LATEST_VERSION
        found = self._request(path, lambda client: client.get_version(subject, wanted, deleted=deleted))
        if found is not None and _schema_type(found.schema) == PROTOBUF:
            number = found.version if isinstance(found.version, int) else wanted  # the latest may move on
            found = self._request(
                f"/subjects/{quote(subject, safe='')}/versions/{number}?format={SERIALIZED_FORMAT}",
                lambda client: client.get_version(subject, number, deleted=deleted, fmt=SERIALIZED_FORMAT),
                serialized=True,
            )
        if found is None:
            raise SchemaNotFoundError(
                f"Version {version} of subject '{subject}' not found in the schema registry at {self._shown()}"
            )
        what = f"version {version} of subject '{subject}'"
        registered = self._registered_version(found, what)
        if version != LATEST_VERSION:
            with self._cache.lock:
                self._cache.subject_versions[key] = registered
        return registered

    def latest_with_metadata(self, subject: str, metadata: dict[str, str]) -> RegisteredSchema:
        """The latest version of ``subject`` whose metadata properties hold ``metadata``, soft-deleted versions
        included (``GET /subjects/{subject}/metadata?key=…&value=…&deleted=true``), as Confluent's
        deserializers look it up for ``use.latest.with.metadata``. Asked every time (callers cache it)."""
        path = f"/subjects/{quote(subject, safe='')}/metadata"

        def ask(client: LibraryClient, fmt: str | None = None) -> Any:
            # Not the library's get_latest_with_metadata: it quotes keys and values before its HTTP client
            # quotes the query again (a space arrives as %20), and it keeps the answer forever.
            query: dict[str, Any] = {"deleted": "true", "key": list(metadata), "value": list(metadata.values())}
            if fmt is not None:
                query["format"] = fmt
            response = client._rest_client.get(f"subjects/{quote(subject, safe='')}/metadata", query)
            return LibraryRegisteredSchema.from_dict(response)

        found = self._request(path, ask)
        if found is not None and _schema_type(found.schema) == PROTOBUF:
            found = self._request(
                f"{path}?format={SERIALIZED_FORMAT}", lambda client: ask(client, SERIALIZED_FORMAT), serialized=True
            )
        what = f"the latest version of subject '{subject}' with metadata {metadata}"
        if found is None:
            raise SchemaNotFoundError(
                f"No version of subject '{subject}' with metadata {metadata} in the schema registry at {self._shown()}"
            )
        return self._registered_version(found, what)

    def _registered_version(self, found: Any, what: str) -> RegisteredSchema:
        """The library's ``RegisteredSchema`` (an answer by subject and version) as ours, with its version."""
        if not isinstance(found.schema_id, int):
            raise SchemaRegistryError(
                f"Unexpected answer from the schema registry at {self._shown()} for {what}: no schema id"
            )
        registered = self._registered(found.schema_id, found.schema, what)
        version = found.version if isinstance(found.version, int) else None
        return replace(registered, version=version)

    def _registered(self, schema_id: int, schema: Any, what: str) -> RegisteredSchema:
        """The library's ``Schema`` as ours; an answer without a schema text or with malformed references fails."""
        if not isinstance(schema.schema_str, str):
            raise SchemaRegistryError(
                f"Unexpected answer from the schema registry at {self._shown()} for {what}: no 'schema' text"
            )
        try:
            references = tuple(
                SchemaReference(str(r.name), str(r.subject), int(r.version)) for r in schema.references or ()
            )
        except (TypeError, ValueError, AttributeError):
            raise SchemaRegistryError(
                f"Unexpected answer from the schema registry at {self._shown()} for {what}: malformed references"
            ) from None
        return RegisteredSchema(
            schema_id,
            schema.schema_str,
            _schema_type(schema),
            references,
            rule_set_from_library(getattr(schema, "rule_set", None)),
        )

    def version_in_subject(self, schema_id: int, subject: str) -> int | None:
        """The version of schema ``schema_id`` in ``subject``, or None when the subject does not hold it.

        Works alike for every schema type: the registry gives one id to one schema (with its type and
        references), so the versions of the id are the versions holding the schema. Soft-deleted versions
        count, as they do for Confluent's converters (``POST /subjects/{subject}?deleted=true`` with the
        schema they fetched).
        """
        with self._cache.lock:
            versions = self._cache.versions.get(schema_id)
        if versions is None or (subject not in dict(versions) and (schema_id, subject) not in self._rechecked):
            versions = self.versions_of_id(schema_id, refresh=True)
            self._rechecked.add((schema_id, subject))
        return dict(versions).get(subject)

    def versions_of_id(self, schema_id: int, *, refresh: bool = False) -> tuple[tuple[str, int], ...]:
        """(subject, version) pairs holding schema ``schema_id`` (``GET /schemas/ids/{id}/versions``)."""
        if not refresh:
            with self._cache.lock:
                cached = self._cache.versions.get(schema_id)
            if cached is not None:
                return cached
        found = (
            self._request(
                f"/schemas/ids/{schema_id}/versions?deleted=true",
                lambda client: client.get_schema_versions(schema_id, deleted=True),
            )
            or []
        )
        try:
            versions = tuple((str(v.subject), int(v.version)) for v in found if v.subject is not None)
        except (TypeError, ValueError):
            raise SchemaRegistryError(
                f"Unexpected answer from the schema registry at {self._shown()} for the versions of schema {schema_id}"
            ) from None
        with self._cache.lock:
            self._cache.versions[schema_id] = versions
        return versions

    # -- failover across URLs, and our errors --

    def _request(self, path: str, call, *, serialized: bool = False) -> Any | None:
        """``call(library client)``, None for 404; fails over across URLs, raises SchemaRegistryError.

        ``serialized``: the call asks ``format=serialized``, on the library clients kept for that format.
        """
        reasons = []
        for _ in range(len(self._clients)):
            index = self._current_index()
            try:
                return self._call(index, path, call, serialized)
            except _Retriable as failure:
                reasons.append(f"{self._urls[index]}: {failure.reason}")
                self._fail_over(index)
        raise SchemaRegistryError(
            f"Schema registry unreachable at {self._shown()}: GET {path} failed after "
            f"{self._settings.max_retries} retries per URL ({'; '.join(reasons)})"
        )

    def _call(self, index: int, path: str, call, serialized: bool = False) -> Any | None:
        url = self._urls[index]
        try:
            return call(self._serialized_client(index) if serialized else self._clients[index])
        except LibraryError as exc:
            status = exc.http_status_code
            if status == 404:
                return None
            # scrubbed whole: a cut could leave part of a secret
            message = self._scrub(str(exc.error_message or ""))[:300]
            if is_retriable(status):
                raise _Retriable(f"{status} {message}".strip()) from None
            hint = ""
            if status in (401, 403):
                hint = (
                    " (check the registry credentials: basic.auth.credentials.source / basic.auth.user.info / "
                    "bearer.auth.token, or user info in schema.registry.url)"
                )
            raise SchemaRegistryError(
                f"Schema registry at {url} answered {status} for GET {path}{hint}: {message}"
            ) from None
        except httpx.TransportError as exc:
            # The library has retried it already. A TLS failure is a configuration problem: no other URL
            # of the same registry will do better, so it is not failed over.
            if _is_tls_failure(exc):
                raise SchemaRegistryError(
                    f"TLS with the schema registry at {url} failed (check schema.registry.ssl.*): {self._brief(exc)}"
                ) from None
            raise _Retriable(self._brief(exc)) from None
        except (ValueError, AttributeError, TypeError):  # a success status whose body is not the expected JSON
            raise SchemaRegistryError(
                f"Schema registry at {url} answered GET {path} with a body that is not the expected JSON"
            ) from None

    def _serialized_client(self, index: int) -> LibraryClient:
        with self._current_lock:
            client = self._serialized_clients[index]
            if client is None:
                client = _library_client(self._settings, self._settings.urls[index])
                self._serialized_clients[index] = client
            return client

    def _brief(self, exc: BaseException) -> str:
        name = "ConnectionError" if isinstance(exc, httpx.ConnectError) else type(exc).__name__
        return f"{name}: {self._scrub(str(exc))[:300]}"

    def _scrub(self, text: str) -> str:
        return scrub(text, self._secrets) or ""

    def _shown(self) -> str:
        return ", ".join(self._urls)

    def _current_index(self) -> int:
        with self._current_lock:
            return self._current

    def _fail_over(self, failed: int) -> None:
        """UrlList.fail: move past the failed URL, unless another request already did."""
        with self._current_lock:
            if self._current == failed:
                self._current = (failed + 1) % len(self._clients)


def _schema_type(schema: Any) -> str:
    """The library's ``schema_type`` (None or absent means AVRO, as for Confluent's clients), upper case."""
    return str(getattr(schema, "schema_type", None) or "AVRO").upper()
