"""What the AWS Glue converters know of Glue's schema registry, without talking to it: a schema version as
``GetSchemaVersion`` answers it, and the error of a setting that cannot work. The client that asks Glue is
``kafka_s3_assets.clients.glue_schema_registry`` (the export builds it and hands it to the converter)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass


class GlueRegistryConfigError(ValueError):
    """A Glue converter setting that cannot work; ``key`` names it (without the converter prefix)."""

    def __init__(self, key: str, message: str):
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class GlueSchemaVersion:
    """What ``GetSchemaVersion`` answers about one schema version."""

    version_id: uuid.UUID
    definition: str
    data_format: str  # AVRO | JSON | PROTOBUF
    version_number: int | None
    schema_arn: str | None = None
    status: str | None = None

    @property
    def schema_name(self) -> str | None:
        """The schema's name: the last segment of its ARN (``arn:aws:glue:…:schema/<registry>/<name>``)."""
        return self.schema_arn.rsplit("/", 1)[-1] if self.schema_arn else None
