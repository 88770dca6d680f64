"""The embedded local stack: a Kafka broker (Apache Kafka), an S3 server and a schema registry.

``up()`` starts them as detached processes on free loopback ports and records them under a
state directory; ``down()`` stops exactly those processes. See :mod:`.stack` for the API and
:mod:`.cli` for ``kafka-s3-assets devstack up|down|status|env``.

The names below are imported lazily: ``python -m kafka_s3_assets.devstack.registry_server``
imports this package first and should not pay for boto3 or confluent-kafka.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = [
    "DevstackEndpoints",
    "DevstackError",
    "ServerStatus",
    "down",
    "read_endpoints",
    "running_devstack",
    "status",
    "up",
]

if TYPE_CHECKING:
    from kafka_s3_assets.devstack.stack import (
        DevstackEndpoints,
        DevstackError,
        ServerStatus,
        down,
        read_endpoints,
        running_devstack,
        status,
        up,
    )


def __getattr__(name: str) -> Any:
    if name in __all__:
        from kafka_s3_assets.devstack import stack

        return getattr(stack, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
