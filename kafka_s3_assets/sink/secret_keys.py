"""Which keys of a connector config hold secrets, whatever the value came from (written in the file, or
resolved by a config provider): PASSWORD keys of the sink and of the converters, the credentials
provider's secret settings (the assume-role external id), the Kafka clients' password settings under
the prefixes Connect gives them, the Iceberg catalog's credential properties
(``kafka_s3_assets.iceberg.catalog.token``, ``….credential``, ``….s3.secret-access-key``, …) and the password
inside the Iceberg catalog's URL (``postgresql://user:password@host/db``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from .config_keys import (
    ALL_KEYS,
    CONVERTER_PREFIXES,
    CONVERTER_SETTINGS,
    ICEBERG_CATALOG_PREFIX,
    ICEBERG_CATALOG_URI,
    Type,
)
from .credentials_provider import SECRET_KEYS as CREDENTIALS_PROVIDER_SECRET_KEYS
from .data_rules import is_secret_setting as is_secret_rule_setting
from .secrets import KAFKA_CLIENT_SECRET_KEYS

CLIENT_PREFIXES = ("consumer.override.", "producer.override.", "admin.override.", "consumer.")
# Catalog properties (pyiceberg's names) that carry credentials: REST tokens and OAuth credentials, object
# store secret keys and session tokens, SQL passwords, Azure account keys and SAS tokens.
_CATALOG_SECRET_WORDS = re.compile(r"token|secret|credential|password|account-key|sas|private-key", re.IGNORECASE)


def is_secret_catalog_property(name: str) -> bool:
    """Whether an Iceberg catalog property (``kafka_s3_assets.iceberg.catalog.<name>``) holds a credential."""
    return bool(_CATALOG_SECRET_WORDS.search(name))


def is_secret_key(key: str) -> bool:
    if key in CREDENTIALS_PROVIDER_SECRET_KEYS:
        return True
    definition = ALL_KEYS.get(key)
    if definition is not None:
        return definition.type == Type.PASSWORD
    for prefix in CONVERTER_PREFIXES:
        if key.startswith(prefix):
            setting = CONVERTER_SETTINGS.get(key[len(prefix) :])
            if setting is None:
                return is_secret_rule_setting(key[len(prefix) :])  # rule executors' parameters
            return setting.type == Type.PASSWORD
    if key.startswith(ICEBERG_CATALOG_PREFIX):
        return is_secret_catalog_property(key[len(ICEBERG_CATALOG_PREFIX) :])
    return any(key.startswith(p) and key[len(p) :] in KAFKA_CLIENT_SECRET_KEYS for p in CLIENT_PREFIXES)


def url_password(url: Any) -> str | None:
    """The password of ``scheme://user:password@host/…``, or None."""
    try:
        return urlsplit(str(url)).password or None
    except ValueError:
        return None


def secret_values(config: Mapping[str, Any]) -> list[str]:
    """The values of a config's secret keys, to scrub from anything printed."""
    found = [str(v) for k, v in config.items() if v and is_secret_key(str(k))]
    password = url_password(config.get(ICEBERG_CATALOG_URI)) if config.get(ICEBERG_CATALOG_URI) else None
    return found + ([password] if password else [])
