"""Errors of the outside systems, each saying which system and what to check."""


class ExternalSystemError(Exception):
    """Base: something outside the project failed; nothing was committed past the last good object."""


class KafkaUnavailableError(ExternalSystemError):
    pass


class KafkaAuthenticationError(KafkaUnavailableError):
    """The broker refused the client's credentials (SASL)."""


class KafkaTlsError(KafkaUnavailableError):
    """No TLS session with the broker (its certificate not trusted, or ours refused)."""


class KafkaReadError(ExternalSystemError):
    pass


class BucketMissingError(ExternalSystemError):
    pass


class S3Error(ExternalSystemError):
    pass


class ManifestConflictError(ExternalSystemError):
    """Another writer committed a manifest at the same start offset first."""


class ConditionFailedError(ExternalSystemError):
    """A conditional S3 write or delete found the object changed (HTTP 412): someone else wrote it."""


class ObjectExistsError(ExternalSystemError):
    """A data object's key already holds other bytes: objects are only ever created, never replaced, so
    this one was not written (see ``clients.s3.MultipartOutput``)."""

    def __init__(self, bucket: str, key: str, message: str):
        super().__init__(message)
        self.bucket = bucket
        self.key = key


class SchemaRegistryError(ExternalSystemError):
    pass


class SchemaNotFoundError(SchemaRegistryError):
    """The registry answered that a schema id does not exist (404): the record's bytes name a schema
    nobody registered, which is the record's fault, not the registry's (AvroConverter's DataException)."""


class DeadLetterQueueError(ExternalSystemError):
    """Producing to the dead-letter queue topic failed; nothing covering the unsent records was committed."""
