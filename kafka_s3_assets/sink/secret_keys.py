"""Which keys of a connector config hold secrets, whatever the value came from (written in the file, or
resolved by a config provider): PASSWORD keys of the sink and of the converters, the credentials
provider's secret settings (the assume-role external id), and the Kafka clients' password settings under
the prefixes Connect gives them."""

from __future__ import annotations

from typing import Any, Mapping

from .config_keys import ALL_KEYS, CONVERTER_PREFIXES, CONVERTER_SETTINGS, Type
from .credentials_provider import SECRET_KEYS as CREDENTIALS_PROVIDER_SECRET_KEYS
from .secrets import KAFKA_CLIENT_SECRET_KEYS

CLIENT_PREFIXES = ("consumer.override.", "producer.override.", "admin.override.", "consumer.")


def is_secret_key(key: str) -> bool:
    if key in CREDENTIALS_PROVIDER_SECRET_KEYS:
        return True
    definition = ALL_KEYS.get(key)
    if definition is not None:
        return definition.type == Type.PASSWORD
    for prefix in CONVERTER_PREFIXES:
        if key.startswith(prefix):
            setting = CONVERTER_SETTINGS.get(key[len(prefix):])
            return setting is not None and setting.type == Type.PASSWORD
    return any(key.startswith(p) and key[len(p):] in KAFKA_CLIENT_SECRET_KEYS for p in CLIENT_PREFIXES)


def secret_values(config: Mapping[str, Any]) -> list[str]:
    """The values of a config's secret keys, to scrub from anything printed."""
    return [str(v) for k, v in config.items() if v and is_secret_key(str(k))]
