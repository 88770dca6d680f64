"""A Confluent Schema Registry REST client for the converters: a schema by id, and its versions.

It behaves as Confluent's Java client (``RestService`` / ``RetryExecutor``) where it matters here:

* several URLs (``schema.registry.url`` comma separated): a request goes to the current URL and fails
  over to the next when that one is unreachable or keeps answering 408/429/5xx; the URL that last
  worked stays current;
* retries per URL on connection errors and 408, 429, 500, 502, 503, 504, up to ``max.retries`` times,
  after an exponential backoff with full jitter (``retries.wait.ms`` doubling up to
  ``retries.max.wait.ms``); other errors are not retried;
* basic auth from the URL's ``user:password@`` (``basic.auth.credentials.source=URL``, the default) or
  from ``basic.auth.user.info`` (``USER_INFO``); or a bearer token (``bearer.auth.credentials.source=
  STATIC_TOKEN`` with ``bearer.auth.token``), with the Confluent Cloud ``target-sr-cluster`` and
  ``Confluent-Identity-Pool-Id`` headers;
* TLS with a CA bundle and a client certificate, as PEM files (the Python-side equivalents of the Java
  trust and key stores): ``schema.registry.ssl.ca.location``, ``…certificate.location``,
  ``…key.location``.

Lookups are cached per process, shared by every client of the same registry and credentials, so all
the records (and partition exports) a Spark worker handles cost one request per schema id. A schema
id's schema never changes; its subject versions can grow, so a subject missing from the cached
versions is looked up once more per client.

Secrets (passwords, tokens, URL user info) never appear in ``repr``, in error messages, or in chained
exceptions: errors are raised ``from None`` with redacted URLs and scrubbed response bodies.
"""

from __future__ import annotations

import base64
import hashlib
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping
from urllib.parse import unquote, urlsplit, urlunsplit

import requests

from ..sink.converters import RegisteredSchema
from .errors import SchemaNotFoundError, SchemaRegistryError

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
ACCEPT = f"{CONTENT_TYPE}, application/vnd.schemaregistry+json; qs=0.9, application/json; qs=0.5"
BASIC_AUTH_SOURCES = ("URL", "USER_INFO")
BEARER_AUTH_SOURCES = ("STATIC_TOKEN",)
RETRIABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 504})  # RestService.isRestClientExceptionRetriable
HIDDEN = "[hidden]"

# Converter settings (after the key.converter. / value.converter. prefix) read by from_converter_settings.
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
    "max.retries": "max_retries",
    "retries.wait.ms": "retries_wait_ms",
    "retries.max.wait.ms": "retries_max_wait_ms",
}


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

    def __post_init__(self) -> None:
        self._validate()

    @classmethod
    def from_converter_settings(cls, url: str, settings: Mapping[str, Any], timeout_s: float = 10.0
                                ) -> "RegistrySettings":
        """From a converter's settings (``ConverterConfig.settings``: ``basic.auth.user.info``, … without
        the ``value.converter.`` prefix). Raises RegistryConfigError naming the setting at fault.

        As Confluent's client, naming both ``basic.auth.credentials.source`` and
        ``bearer.auth.credentials.source`` is an error (the basic source's default, URL, is not naming it).
        """
        if settings.get("basic.auth.credentials.source") and settings.get("bearer.auth.credentials.source"):
            raise RegistryConfigError("bearer.auth.credentials.source",
                                      "Only one of 'basic.auth.credentials.source' and "
                                      "'bearer.auth.credentials.source' may be specified")
        values = {attr: settings[key] for key, attr in SETTING_FIELDS.items() if settings.get(key) is not None}
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
                raise RegistryConfigError("schema.registry.url", f"Invalid schema registry URL '{redact_url(url)}': "
                                                                 "expected http(s)://host[:port][/path]")
        if self.basic_auth_credentials_source not in BASIC_AUTH_SOURCES:
            raise RegistryConfigError("basic.auth.credentials.source",
                                      f"basic.auth.credentials.source={self.basic_auth_credentials_source} is not "
                                      f"supported: use {' or '.join(BASIC_AUTH_SOURCES)}")
        if self.bearer_auth_credentials_source is not None:
            if self.bearer_auth_credentials_source not in BEARER_AUTH_SOURCES:
                raise RegistryConfigError("bearer.auth.credentials.source",
                                          f"bearer.auth.credentials.source={self.bearer_auth_credentials_source} is "
                                          f"not supported: use {' or '.join(BEARER_AUTH_SOURCES)}")
            if not self.bearer_auth_token:
                raise RegistryConfigError("bearer.auth.token",
                                          "bearer.auth.credentials.source=STATIC_TOKEN needs bearer.auth.token")
        elif self.basic_auth_credentials_source == "USER_INFO":
            if not self.basic_auth_user_info or ":" not in self.basic_auth_user_info:
                raise RegistryConfigError("basic.auth.user.info", "basic.auth.credentials.source=USER_INFO needs "
                                                                  "basic.auth.user.info as user:password")
        if self.ssl_key_location and not self.ssl_certificate_location:
            raise RegistryConfigError("schema.registry.ssl.key.location",
                                      "schema.registry.ssl.key.location needs schema.registry.ssl.certificate.location")
        for name in ("max_retries", "retries_wait_ms", "retries_max_wait_ms"):
            if getattr(self, name) < 0:
                raise RegistryConfigError(name.replace("_", "."), f"{name.replace('_', '.')} must be at least 0")
        if self.timeout_s <= 0:
            raise RegistryConfigError("kafka_s3_assets.registry.timeout.ms", "The registry timeout must be positive")

    def secrets(self) -> list[str]:
        """Every secret these settings hold, longest first: scrubbed from anything we print."""
        found: set[str] = set()
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
        return (tuple(redact_url(u) for u in self.urls), self.bearer_auth_logical_cluster,
                self.bearer_auth_identity_pool_id, fingerprint)

    def __repr__(self) -> str:
        auth = (f"bearer={self.bearer_auth_credentials_source}" if self.bearer_auth_credentials_source
                else f"basic={self.basic_auth_credentials_source}")
        tls = ", tls=client-cert" if self.ssl_certificate_location else (", tls=ca" if self.ssl_ca_location else "")
        return (f"RegistrySettings(url={', '.join(redact_url(u) for u in self.urls)!r}, {auth}{tls}, "
                f"max_retries={self.max_retries}, timeout_s={self.timeout_s})")

    __str__ = __repr__


def backoff_delay_s(retries_done: int, wait_ms: int, max_wait_ms: int, rng: Callable[[], float] = random.random
                    ) -> float:
    """RetryExecutor's full jitter: a random delay up to ``min(wait_ms * 2**retries_done, max_wait_ms)``."""
    ceiling_ms = min(wait_ms * (1 << min(retries_done, 30)), max_wait_ms)
    return 0.0 if ceiling_ms <= 0 else ceiling_ms * rng() / 1000


# ---------------------------------------------------------------------------------------------------
# The per-process lookup cache


class _LookupCache:
    """Schema by id and (subject, version) pairs by id, for one registry and identity; thread-safe."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.schemas: dict[int, RegisteredSchema] = {}
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


@dataclass(frozen=True)
class _Endpoint:
    url: str                                     # without user info: requests go to it, messages show it
    headers: dict[str, str] = field(repr=False)  # the credentials, if any


class _Retriable(Exception):
    """This URL failed in a way worth trying the next one for (after its own retries)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class SchemaRegistryClient:
    """Implements ``converters.SchemaSource`` against a Confluent-compatible registry."""

    def __init__(self, settings: RegistrySettings, *, sleep: Callable[[float], None] = time.sleep,
                 rng: Callable[[], float] = random.random):
        self._settings = settings
        self._secrets = settings.secrets()
        self._endpoints = [self._endpoint(url) for url in settings.urls]
        self._current = 0
        self._current_lock = threading.Lock()
        self._sleep = sleep
        self._rng = rng
        self._session = requests.Session()
        self._session.headers["Accept"] = ACCEPT
        # Passed with every request: requests lets $REQUESTS_CA_BUNDLE override a Session's own verify.
        self._tls: dict[str, Any] = {"verify": settings.ssl_ca_location or True}
        if settings.ssl_certificate_location:
            self._tls["cert"] = ((settings.ssl_certificate_location, settings.ssl_key_location)
                                 if settings.ssl_key_location else settings.ssl_certificate_location)
        self._cache = _shared_cache(settings.cache_identity())
        self._rechecked: set[tuple[int, str]] = set()

    def __repr__(self) -> str:
        return f"SchemaRegistryClient({self._shown()})"

    # -- the SchemaSource API --

    def schema_by_id(self, schema_id: int) -> RegisteredSchema:
        with self._cache.lock:
            cached = self._cache.schemas.get(schema_id)
        if cached is not None:
            return cached
        body = self._get(f"/schemas/ids/{schema_id}")
        if body is None:
            raise SchemaNotFoundError(f"Schema {schema_id} not found in the schema registry at {self._shown()}")
        if not isinstance(body, dict) or not isinstance(body.get("schema"), str):
            raise SchemaRegistryError(f"Unexpected answer from the schema registry at {self._shown()} for schema "
                                      f"{schema_id}: no 'schema' text")
        found = RegisteredSchema(schema_id, body["schema"], body.get("schemaType") or "AVRO")
        with self._cache.lock:
            self._cache.schemas[schema_id] = found
        return found

    def version_in_subject(self, schema_id: int, subject: str) -> int | None:
        """The version of schema ``schema_id`` in ``subject``, or None when the subject does not hold it."""
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
        body = self._get(f"/schemas/ids/{schema_id}/versions") or []
        try:
            versions = tuple((str(e["subject"]), int(e["version"])) for e in body)
        except (TypeError, KeyError, ValueError):
            raise SchemaRegistryError(f"Unexpected answer from the schema registry at {self._shown()} for the "
                                      f"versions of schema {schema_id}") from None
        with self._cache.lock:
            self._cache.versions[schema_id] = versions
        return versions

    # -- HTTP --

    def _get(self, path: str) -> Any | None:
        """The decoded JSON answer, None for 404; fails over across URLs, raises SchemaRegistryError."""
        reasons = []
        for _ in range(len(self._endpoints)):
            index, endpoint = self._current_endpoint()
            try:
                return self._get_with_retries(endpoint, path)
            except _Retriable as failure:
                reasons.append(f"{endpoint.url}: {failure.reason}")
                self._fail_over(index)
        raise SchemaRegistryError(f"Schema registry unreachable at {self._shown()}: GET {path} failed after "
                                  f"{self._settings.max_retries} retries per URL ({'; '.join(reasons)})")

    def _get_with_retries(self, endpoint: _Endpoint, path: str) -> Any | None:
        s = self._settings
        for retries_done in range(s.max_retries + 1):
            if retries_done:
                self._sleep(backoff_delay_s(retries_done - 1, s.retries_wait_ms, s.retries_max_wait_ms, self._rng))
            try:
                response = self._session.get(endpoint.url + path, headers=endpoint.headers, timeout=s.timeout_s,
                                             **self._tls)
            except requests.exceptions.SSLError as exc:  # a configuration problem: retrying cannot help
                raise SchemaRegistryError(f"TLS with the schema registry at {endpoint.url} failed (check "
                                          f"schema.registry.ssl.*): {self._brief(exc)}") from None
            except (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError) as exc:
                reason = self._brief(exc)
                continue
            except requests.RequestException as exc:
                raise SchemaRegistryError(f"GET {path} at the schema registry {endpoint.url} failed: "
                                          f"{self._brief(exc)}") from None
            status = response.status_code
            if status in RETRIABLE_STATUSES:
                reason = f"{status} {self._scrub(response.reason or '')}".strip()
                continue
            if status == 404:
                return None
            if status >= 400:
                raise SchemaRegistryError(self._refusal(endpoint, path, response)) from None
            try:
                return response.json()
            except ValueError:
                raise SchemaRegistryError(f"Schema registry at {endpoint.url} answered GET {path} with a body "
                                          f"that is not JSON") from None
        raise _Retriable(reason)

    def _refusal(self, endpoint: _Endpoint, path: str, response: requests.Response) -> str:
        hint = ""
        if response.status_code in (401, 403):
            hint = (" (check the registry credentials: basic.auth.credentials.source / basic.auth.user.info / "
                    "bearer.auth.token, or user info in schema.registry.url)")
        body = self._scrub(response.text)[:300]  # scrubbed whole: a cut could leave part of a secret
        return (f"Schema registry at {endpoint.url} answered {response.status_code} for GET {path}{hint}: "
                f"{body}")

    def _brief(self, exc: Exception) -> str:
        return f"{type(exc).__name__}: {self._scrub(str(exc))[:300]}"

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, HIDDEN)
        return text

    def _shown(self) -> str:
        return ", ".join(e.url for e in self._endpoints)

    def _current_endpoint(self) -> tuple[int, _Endpoint]:
        with self._current_lock:
            return self._current, self._endpoints[self._current]

    def _fail_over(self, failed: int) -> None:
        """UrlList.fail: move past the failed URL, unless another request already did."""
        with self._current_lock:
            if self._current == failed:
                self._current = (failed + 1) % len(self._endpoints)

    def _endpoint(self, url: str) -> _Endpoint:
        s = self._settings
        parts = urlsplit(url)
        headers: dict[str, str] = {}
        if s.bearer_auth_credentials_source == "STATIC_TOKEN":
            headers["Authorization"] = f"Bearer {s.bearer_auth_token}"
            if s.bearer_auth_logical_cluster:
                headers["target-sr-cluster"] = s.bearer_auth_logical_cluster
            if s.bearer_auth_identity_pool_id:
                headers["Confluent-Identity-Pool-Id"] = s.bearer_auth_identity_pool_id
        elif s.basic_auth_credentials_source == "USER_INFO":
            headers["Authorization"] = _basic(s.basic_auth_user_info or "")
        elif parts.username is not None:  # URL: the user info of this URL, if any
            headers["Authorization"] = _basic(f"{unquote(parts.username)}:{unquote(parts.password or '')}")
        return _Endpoint(redact_url(url), headers)


def _basic(user_info: str) -> str:
    return "Basic " + base64.b64encode(user_info.encode("utf-8")).decode("ascii")
