"""kafka_s3_assets: Kafka topics exported to S3 with Kafka Connect S3 sink semantics, as Dagster assets
run by PySpark.

``kafka_s3_assets.KafkaS3SinkComponent`` (the Dagster component) is imported on first use, not here:
Spark executors import this package to run export tasks and must not pay for importing Dagster.
"""

_LAZY = {"KafkaS3SinkComponent": "kafka_s3_assets.defs.component"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    # `dg list components` finds components by dir() of the registered module.
    return sorted([*globals(), *_LAZY])
