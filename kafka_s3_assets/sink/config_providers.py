"""Kafka Connect config providers: ``${provider:[path:]key}`` placeholders in config values, resolved
before validation as a Connect worker resolves them.

The grammar is Kafka's (``ConfigTransformer``): ``${``, the provider name up to the first ``:``, an
optional path up to the next ``:``, then the key up to ``}``. So ``${env:T}`` has no path,
``${file:/etc/s3.properties:secret}`` reads key ``secret`` of that file, and in ``${file:/a:b:c}`` the path
is ``/a`` and the key ``b:c`` (a path cannot hold a colon). A value may hold several placeholders and
text around them; a resolved value is not scanned again.

Kafka's three providers run here, always available under their usual names (a worker must list them
in ``config.providers``; here that is needed only to alias or configure them):

- ``file`` (``FileConfigProvider``): key ``key`` of the properties file ``path``;
- ``directory`` (``DirectoryConfigProvider``): the content of file ``key`` in directory ``path`` (as
  Kubernetes mounts secrets), byte for byte (no newline is stripped, as in Kafka);
- ``env`` (``EnvVarConfigProvider``): environment variable ``key``; a path is an error, as in Kafka.

``config.providers=a,b`` with ``config.providers.<name>.class`` and ``config.providers.<name>.param.<p>``
define providers as a Connect worker does: ``allowed.paths`` (file, directory: a comma-separated list of
existing absolute paths; others are refused) and ``allowlist.pattern`` (env: a regular expression the
whole variable name must match) are honoured. A class we cannot run (Vault, a cloud secrets manager)
is an error where a placeholder uses it.

One deliberate difference from Connect: a placeholder that cannot be resolved (unknown provider,
missing key, unreadable file, path outside ``allowed.paths``) is a config error naming the key and the
provider. Connect leaves it in the value, which would then be sent on as a topic name or an AWS key.
Messages name files, keys and variables, never a resolved value.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, Protocol

from .errors import ConfigError, ConfigProblem
from .properties import MalformedProperties, parse_properties
from .secret_keys import is_secret_key
from .secrets import HIDDEN

PLACEHOLDER = re.compile(r"\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}")
PROVIDERS_KEY = "config.providers"
PROVIDER_PREFIX = "config.providers."
PROVIDER_PACKAGE = "org.apache.kafka.common.config.provider."
FILE_PROVIDER = PROVIDER_PACKAGE + "FileConfigProvider"
DIRECTORY_PROVIDER = PROVIDER_PACKAGE + "DirectoryConfigProvider"
ENV_PROVIDER = PROVIDER_PACKAGE + "EnvVarConfigProvider"
BUILT_IN_PROVIDERS = {"file": FILE_PROVIDER, "env": ENV_PROVIDER, "directory": DIRECTORY_PROVIDER}
ALLOWED_PATHS = "allowed.paths"
ALLOWLIST_PATTERN = "allowlist.pattern"
PROVIDER_PARAMS = {
    FILE_PROVIDER: (ALLOWED_PATHS,),
    DIRECTORY_PROVIDER: (ALLOWED_PATHS,),
    ENV_PROVIDER: (ALLOWLIST_PATTERN,),
}


class LookupFailed(Exception):
    """A provider could not give a placeholder's value. The message never holds a value."""


@dataclass(frozen=True)
class Placeholder:
    text: str
    provider: str
    path: str
    key: str


def placeholders(value: str) -> list[Placeholder]:
    return [Placeholder(m.group(0), m.group(1), m.group(3) or "", m.group(4)) for m in PLACEHOLDER.finditer(value)]


def is_provider_key(key: str) -> bool:
    return key == PROVIDERS_KEY or key.startswith(PROVIDER_PREFIX)


class ResolvedConnectorConfig(dict):
    """A config whose placeholders are resolved and whose ``config.providers*`` keys are consumed.
    Resolving it again would expand a resolved value that happens to look like a placeholder, so
    ``resolve_config_providers`` returns it as it is. It travels inside the export settings to Spark
    tasks: its repr and str hide the values of secret keys."""

    def __repr__(self) -> str:
        return repr({k: HIDDEN if v and is_secret_key(str(k)) else v for k, v in self.items()})

    __str__ = __repr__


class AllowedPaths:
    """Kafka's ``allowed.paths``: a path is readable if, normalised, it lies under one of them."""

    def __init__(self, setting: str | None):
        self.roots: list[PurePath] | None = None
        if setting:
            self.roots = []
            for entry in setting.split(","):
                root = os.path.normpath(entry.strip())
                if not os.path.isabs(root):
                    raise ValueError(f"Path {root} is not absolute")
                if not os.path.exists(root):
                    raise ValueError(f"Path {root} does not exist")
                self.roots.append(PurePath(root))

    def check(self, path: str) -> str:
        if self.roots is None:
            return path
        normalised = os.path.normpath(path)
        if not any(PurePath(normalised).is_relative_to(root) for root in self.roots):
            raise LookupFailed(
                f"may not read {path}: it is outside its {ALLOWED_PATHS} ({', '.join(str(r) for r in self.roots)})"
            )
        return normalised


class ConfigProvider(Protocol):
    """A placeholder's provider (Kafka's ``ConfigProvider.get`` of one key): the value, or LookupFailed."""

    def lookup(self, path: str, key: str) -> str: ...


class FileProvider:
    def __init__(self, allowed: AllowedPaths):
        self._allowed = allowed
        self._files: dict[str, dict[str, str]] = {}

    def lookup(self, path: str, key: str) -> str:
        if not path:
            raise LookupFailed("needs the path of a properties file: ${file:/path/to/file.properties:key}")
        readable = self._allowed.check(path)
        if readable not in self._files:
            try:
                with open(readable, encoding="utf-8") as f:
                    self._files[readable] = parse_properties(f.read())
            except (OSError, UnicodeDecodeError, MalformedProperties) as exc:
                reason = (
                    exc.strerror
                    if isinstance(exc, OSError)
                    else "not UTF-8"
                    if isinstance(exc, UnicodeDecodeError)
                    else str(exc)
                )
                raise LookupFailed(f"could not read properties from file {path}: {reason}") from None
        properties = self._files[readable]
        if key not in properties:
            raise LookupFailed(f"found no key '{key}' in properties file {path}")
        return properties[key]


class DirectoryProvider:
    def __init__(self, allowed: AllowedPaths):
        self._allowed = allowed

    def lookup(self, path: str, key: str) -> str:
        if not path:
            raise LookupFailed("needs the path of a directory: ${directory:/path/to/dir:file}")
        directory = self._allowed.check(path)
        if not os.path.isdir(directory):
            raise LookupFailed(f"found no directory {path}")
        # Kafka matches the key against the names of the directory's regular files (symlinks followed).
        candidate = os.path.join(directory, key)
        if not key or "/" in key or key in (".", "..") or not os.path.isfile(candidate):
            raise LookupFailed(f"found no file '{key}' in directory {path}")
        try:
            with open(candidate, "rb") as f:
                return f.read().decode("utf-8", errors="replace")  # as Java's new String(bytes, UTF_8)
        except OSError as exc:
            raise LookupFailed(f"could not read file {candidate}: {exc.strerror}") from None


class EnvProvider:
    def __init__(self, env: Mapping[str, str], allowlist: re.Pattern | None):
        self._env = env
        self._allowlist = allowlist

    def lookup(self, path: str, key: str) -> str:
        if path:
            raise LookupFailed(f"Path is not supported for EnvVarConfigProvider, invalid value '{path}'")
        if self._allowlist is not None and not self._allowlist.fullmatch(key):
            raise LookupFailed(
                f"may not read environment variable '{key}': its {ALLOWLIST_PATTERN} "
                f"'{self._allowlist.pattern}' does not match it"
            )
        if key not in self._env:
            raise LookupFailed(f"found no environment variable '{key}'")
        return self._env[key]


class UnrunnableProvider:
    """A provider class of a Connect plugin (Vault, AWS/GCP/Azure secrets managers, ...): Java code that
    cannot run here. An error where a placeholder uses it, so that a worker config defining providers the
    connector does not use still works."""

    def __init__(self, class_name: str, class_key: str):
        self._class_name = class_name
        self._class_key = class_key

    def lookup(self, path: str, key: str) -> str:
        raise LookupFailed(
            f"cannot run here: its class {self._class_name} ({self._class_key}) is not one of "
            f"Kafka's {', '.join(c.rsplit('.', 1)[1] for c in BUILT_IN_PROVIDERS.values())}. "
            "Let your secret store write the value to a file, a mounted directory or an environment "
            "variable, and use ${file:…}, ${directory:…} or ${env:…}"
        )


def listed_providers(value: Any) -> list[str]:
    """The names in a ``config.providers`` value (comma-separated, or a JSON list)."""
    items = value if isinstance(value, (list, tuple)) else str(value or "").split(",")
    return [str(n).strip() for n in items if str(n).strip()]


def configured_providers(
    config: Mapping[str, Any], env: Mapping[str, str], origin=lambda key: ""
) -> tuple[dict[str, ConfigProvider], list[ConfigProblem]]:
    """The providers a config can use: Kafka's three under their usual names, and those it defines
    (which may reuse those names)."""
    problems: list[ConfigProblem] = []
    classes: dict[str, tuple[str, str]] = {}
    params: dict[str, dict[str, tuple[str, str]]] = {}
    for key, value in config.items():
        key = str(key)
        if not key.startswith(PROVIDER_PREFIX):
            continue
        name, _, setting = key[len(PROVIDER_PREFIX) :].partition(".")
        if setting == "class":
            classes[name] = (str(value).strip(), key)
        elif setting.startswith("param.") and len(setting) > len("param."):
            params.setdefault(name, {})[setting[len("param.") :]] = (str(value), key)
        else:
            problems.append(
                ConfigProblem(
                    key,
                    f"Unknown config provider setting '{key}'{origin(key)}: a provider "
                    f"has config.providers.{name or '<name>'}.class and "
                    f"config.providers.{name or '<name>'}.param.<parameter>",
                )
            )
    listed = listed_providers(config.get(PROVIDERS_KEY))
    for name in listed:
        if name not in classes:
            problems.append(
                ConfigProblem(
                    PROVIDERS_KEY,
                    f"Config provider '{name}' is listed in "
                    f"{PROVIDERS_KEY}{origin(PROVIDERS_KEY)} but "
                    f"{PROVIDER_PREFIX}{name}.class is not set",
                )
            )
    for name in [*classes, *(n for n in params if n not in classes)]:
        if name not in listed:
            key = classes[name][1] if name in classes else next(iter(params[name].values()))[1]
            problems.append(
                ConfigProblem(
                    key,
                    f"Config provider '{name}' is defined{origin(key)} but not listed in "
                    f"{PROVIDERS_KEY} (a Connect worker would not create it)",
                )
            )

    providers: dict[str, ConfigProvider] = {name: _provider(cls, {}, env) for name, cls in BUILT_IN_PROVIDERS.items()}
    for name in listed:
        if name not in classes:
            continue
        class_name, class_key = classes[name]
        given = params.get(name, {})
        if class_name not in PROVIDER_PARAMS:
            providers[name] = UnrunnableProvider(class_name, class_key)  # its parameters are its own business
            continue
        accepted = PROVIDER_PARAMS[class_name]
        for param, (_value, key) in given.items():
            if param not in accepted:
                problems.append(
                    ConfigProblem(
                        key,
                        f"Unknown parameter '{param}' of {class_name.rsplit('.', 1)[1]}"
                        f"{origin(key)}: it takes {', '.join(accepted)}",
                    )
                )
        try:
            providers[name] = _provider(class_name, {p: v for p, (v, _k) in given.items() if p in accepted}, env)
        except ValueError as exc:
            param = PROVIDER_PARAMS[class_name][0]
            key = given[param][1]
            problems.append(
                ConfigProblem(key, f"Invalid value {given[param][0]} for configuration {key}{origin(key)}: {exc}")
            )
    return providers, problems


def _provider(class_name: str, params: Mapping[str, str], env: Mapping[str, str]) -> ConfigProvider:
    if class_name == ENV_PROVIDER:
        pattern = params.get(ALLOWLIST_PATTERN)
        try:
            return EnvProvider(env, re.compile(pattern) if pattern is not None else None)
        except re.error as exc:
            raise ValueError(f"not a regular expression ({exc})") from None
    allowed = AllowedPaths(params.get(ALLOWED_PATHS))
    return FileProvider(allowed) if class_name == FILE_PROVIDER else DirectoryProvider(allowed)


def resolve_config_providers(
    config: Mapping[str, Any], env: Mapping[str, str] | None = None, sources: Mapping[str, str] | None = None
) -> ResolvedConnectorConfig:
    """Every placeholder of every value resolved, ``config.providers*`` keys consumed; one ConfigError
    listing every problem, each naming the key (and, in ``sources``, the file a key came from)."""
    if isinstance(config, ResolvedConnectorConfig):
        return config
    env = os.environ if env is None else env
    sources = sources or {}

    def origin(key: str) -> str:
        return f" (in {sources[key]})" if key in sources else ""

    providers, problems = configured_providers(config, env, origin)
    resolved = ResolvedConnectorConfig()
    for key, value in config.items():
        key = str(key)
        if is_provider_key(key):
            continue
        if isinstance(value, str):
            value = _substitute(key, value, providers, problems, origin(key))
        elif isinstance(value, (list, tuple)):
            value = [_substitute(key, v, providers, problems, origin(key)) if isinstance(v, str) else v for v in value]
        resolved[key] = value
    if problems:
        raise ConfigError(problems)
    return resolved


def _substitute(
    key: str, value: str, providers: Mapping[str, ConfigProvider], problems: list[ConfigProblem], origin: str
) -> str:
    def replacement(match: re.Match) -> str:
        [placeholder] = placeholders(match.group(0))
        provider = providers.get(placeholder.provider)
        if provider is None:
            defined = ", ".join(sorted(providers))
            problems.append(
                ConfigProblem(
                    key,
                    f"Cannot resolve {placeholder.text}{origin}: config provider "
                    f"'{placeholder.provider}' is not defined (defined: {defined}; "
                    f"define others with {PROVIDERS_KEY} and "
                    f"{PROVIDER_PREFIX}<name>.class)",
                )
            )
            return match.group(0)
        try:
            return provider.lookup(placeholder.path, placeholder.key)
        except LookupFailed as exc:
            problems.append(
                ConfigProblem(
                    key, f"Cannot resolve {placeholder.text}{origin}: config provider '{placeholder.provider}' {exc}"
                )
            )
            return match.group(0)

    return PLACEHOLDER.sub(replacement, value)
