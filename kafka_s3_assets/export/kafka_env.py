"""The deployment's Kafka client settings from ``KAFKA_<FIELD>`` environment variables
(``KAFKA_SECURITY_PROTOCOL``, ``KAFKA_SASL_PASSWORD``, …): the Dagster ``kafka`` resource's fields, for
code that runs without Dagster (the CLI). Kept free of Dagster and Spark imports for that reason."""

from __future__ import annotations

import os
from collections.abc import Mapping

# The Dagster kafka resource's client-setting fields; "security_protocol" is the setting "security.protocol".
KAFKA_SETTING_FIELDS = (
    "security_protocol",
    "sasl_mechanism",
    "sasl_username",
    "sasl_password",
    "sasl_jaas_config",
    "ssl_ca_location",
    "ssl_certificate_location",
    "ssl_key_location",
    "ssl_key_password",
    "ssl_keystore_location",
    "ssl_keystore_password",
)
KAFKA_ENV_PREFIX = "KAFKA_"


def env_variable(field: str) -> str:
    return KAFKA_ENV_PREFIX + field.upper()


def kafka_env_settings(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The set ``KAFKA_<FIELD>`` variables as client settings (``security.protocol`` → value)."""
    env = os.environ if env is None else env
    return {
        name.replace("_", "."): env[env_variable(name)] for name in KAFKA_SETTING_FIELDS if env.get(env_variable(name))
    }
