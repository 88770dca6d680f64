"""Errors of the local schema registry, shaped like Confluent Schema Registry's.

Clients (confluent-kafka's ``SchemaRegistryClient`` among them) branch on the numeric
``error_code`` of the JSON error body, so the codes and the HTTP status derived from them
follow Confluent exactly. The messages follow Confluent's wording where it is known.
"""

from __future__ import annotations


class RegistryError(Exception):
    """A request the registry refuses, carrying Confluent's error code."""

    def __init__(self, error_code: int, message: str) -> None:
        super().__init__(message)
        self.error_code = error_code
        self.message = message

    @property
    def http_status(self) -> int:
        """Confluent's five-digit codes start with the HTTP status (40401 -> 404)."""
        return self.error_code // 100 if self.error_code >= 10000 else self.error_code

    def to_json(self) -> dict:
        return {"error_code": self.error_code, "message": self.message}


def subject_not_found(subject: str) -> RegistryError:
    return RegistryError(40401, f"Subject '{subject}' not found.")


def version_not_found(version: int | str) -> RegistryError:
    return RegistryError(40402, f"Version {version} not found.")


def schema_not_found(schema_id: int | str | None = None) -> RegistryError:
    if schema_id is None:
        return RegistryError(40403, "Schema not found")
    return RegistryError(40403, f"Schema {schema_id} not found")


def subject_soft_deleted(subject: str) -> RegistryError:
    return RegistryError(40404, f"Subject '{subject}' was soft deleted. Set permanent=true to delete permanently")


def subject_not_soft_deleted(subject: str) -> RegistryError:
    return RegistryError(40405, f"Subject '{subject}' was not deleted first before being permanently deleted")


def version_soft_deleted(subject: str, version: int) -> RegistryError:
    return RegistryError(
        40406,
        f"Subject '{subject}' Version {version} was soft deleted. Set permanent=true to delete permanently",
    )


def version_not_soft_deleted(subject: str, version: int) -> RegistryError:
    return RegistryError(
        40407,
        f"Subject '{subject}' Version {version} was not deleted first before being permanently deleted",
    )


def subject_compatibility_not_configured(subject: str) -> RegistryError:
    return RegistryError(40408, f"Subject '{subject}' does not have subject-level compatibility configured")


def incompatible_schema(subject: str, messages: list[str]) -> RegistryError:
    return RegistryError(
        409,
        # Java's List.toString: [a, b], each message as it is (no quoting or escaping).
        f'Schema being registered is incompatible with an earlier schema for subject "{subject}", details: '
        f"[{', '.join(messages)}]",
    )


def invalid_schema(detail: str) -> RegistryError:
    return RegistryError(42201, f"Invalid schema: {detail}")


def invalid_version(version: object) -> RegistryError:
    return RegistryError(
        42202,
        f"The specified version '{version}' is not a valid version id. "
        'Allowed values are between [1, 2^31-1] and the string "latest"',
    )


def invalid_compatibility_level(level: object) -> RegistryError:
    return RegistryError(
        42203,
        f"Invalid compatibility level '{level}'. Valid values are none, backward, forward, full, "
        "backward_transitive, forward_transitive, and full_transitive",
    )


def operation_not_permitted(message: str) -> RegistryError:
    return RegistryError(42205, message)


def reference_exists(message: str) -> RegistryError:
    return RegistryError(42206, f"One or more references exist to the schema {message}")


def bad_request(message: str) -> RegistryError:
    return RegistryError(400, message)


def route_not_found() -> RegistryError:
    return RegistryError(404, "HTTP 404 Not Found")


def method_not_allowed() -> RegistryError:
    return RegistryError(405, "HTTP 405 Method Not Allowed")
