"""The state and rules of the local schema registry, without any HTTP.

Everything a Confluent-compatible registry decides lives here: global schema ids, per-subject
versions, soft and permanent deletes, compatibility configuration. The HTTP layer
(:mod:`registry_server`) only translates requests into these calls, which keeps the rules
unit-testable without a server.

The store is not thread-safe: the server serialises calls with one lock. Every mutation
bumps :attr:`RegistryStore.revision`, so the caller knows when to persist
:meth:`RegistryStore.to_snapshot`.

Semantics follow Confluent Schema Registry (``KafkaSchemaRegistry``):

* the same schema (compared after parsing) registered again in a subject returns the
  existing version; in another subject it gets a new version but the same global id;
* versions are numbered from 1, one more than the highest version ever recorded in the
  subject, soft-deleted ones included; a permanent delete forgets versions entirely;
* soft delete first, then ``permanent=true``; soft-deleting a subject's last live version
  also drops its subject-level compatibility;
* a schema id stays readable (``GET /schemas/ids/N``) while any version, even a
  soft-deleted one, uses it, because consumers still need it to decode old records;
* AVRO, JSON and PROTOBUF schemas alike may name ``references`` (``{name, subject, version}``):
  each must resolve to a live version when a schema is registered (else 42201, as Confluent),
  version -1 is stored as the subject's latest version then, the same schema with other
  references is another schema, and a version that a schema references cannot be deleted
  (42206). References resolve depth-first, dependencies first, the first one per name winning;
* ``format=serialized`` returns a PROTOBUF schema as a base64 ``FileDescriptorProto``
  (:mod:`registry_protobuf`); other formats and types return the schema as stored.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field, replace
from typing import Any

from kafka_s3_assets.devstack import registry_errors as errors
from kafka_s3_assets.devstack.registry_compat import (
    COMPATIBILITY_LEVELS,
    DEFAULT_COMPATIBILITY,
    AcceptEverythingChecker,
    CompatibilityChecker,
    CompatibilityRule,
)
from kafka_s3_assets.devstack.registry_schemas import (
    AVRO,
    PROTOBUF,
    ParsedSchema,
    normalize_schema_type,
    parse_schema,
)

LATEST = "latest"
SNAPSHOT_FORMAT = 1
SERIALIZED_FORMAT = "serialized"  # format=serialized: PROTOBUF as a base64 FileDescriptorProto

# Config fields accepted besides the compatibility level and returned as given.
_EXTRA_CONFIG_FIELDS = (
    "compatibilityGroup",
    "defaultMetadata",
    "overrideMetadata",
    "defaultRuleSet",
    "overrideRuleSet",
    "normalize",
    "validateFields",
    "alias",
)


@dataclass(frozen=True)
class SchemaRequest:
    """The body of a register, lookup or compatibility request."""

    schema: str | None
    schema_type: str = AVRO
    references: tuple[dict, ...] = ()
    metadata: dict | None = None
    rule_set: dict | None = None
    id: int | None = None  # only an importing registry honours it: refused here
    version: int | None = None

    @classmethod
    def from_json(cls, body: Any) -> SchemaRequest:
        if not isinstance(body, dict):
            raise errors.invalid_schema("the request body must be a JSON object")
        schema = body.get("schema")
        if schema is not None and not isinstance(schema, str):
            raise errors.invalid_schema("'schema' must be a string")
        references = body.get("references") or []
        if not isinstance(references, list) or not all(
            isinstance(r, dict)
            and isinstance(r.get("name"), str)
            and isinstance(r.get("subject"), str)
            and isinstance(r.get("version"), int)
            for r in references
        ):
            raise errors.invalid_schema("'references' must be a list of {name, subject, version} objects")
        for key in ("id", "version"):
            if body.get(key) is not None and not isinstance(body.get(key), int):
                raise errors.invalid_schema(f"'{key}' must be an integer")
        schema_id = body.get("id")
        return cls(
            schema=schema,
            schema_type=normalize_schema_type(body.get("schemaType")),
            references=tuple({"name": r["name"], "subject": r["subject"], "version": r["version"]} for r in references),
            metadata=body.get("metadata") or None,
            rule_set=body.get("ruleSet") or None,
            id=schema_id if schema_id is not None and schema_id >= 0 else None,
            version=body.get("version") if (body.get("version") or 0) > 0 else None,
        )


@dataclass
class SchemaRecord:
    """One schema under one global id (shared by every subject that registered it)."""

    id: int
    guid: str
    schema_type: str
    schema: str
    references: list[dict]
    metadata: dict | None
    rule_set: dict | None
    identity: str  # equal for schemas that are "the same" to the registry

    def to_json(self, schema: str | None = None) -> dict:
        """The API's view; ``schema`` replaces the stored text (another ``format``)."""
        body: dict[str, Any] = {}
        if self.schema_type != AVRO:  # Confluent omits the type for AVRO
            body["schemaType"] = self.schema_type
        if self.references:
            body["references"] = [dict(r) for r in self.references]
        if self.metadata:
            body["metadata"] = self.metadata
        if self.rule_set:
            body["ruleSet"] = self.rule_set
        body["schema"] = self.schema if schema is None else schema
        return body


@dataclass
class VersionRecord:
    subject: str
    version: int
    schema_id: int
    deleted: bool = False


@dataclass(frozen=True)
class SubjectVersion:
    """A version of a subject together with its schema, as the API returns it."""

    subject: str
    version: int
    schema: SchemaRecord
    deleted: bool

    @property
    def id(self) -> int:
        return self.schema.id

    def to_json(self, schema: str | None = None) -> dict:
        return {
            "subject": self.subject,
            "version": self.version,
            "id": self.schema.id,
            "guid": self.schema.guid,
            **self.schema.to_json(schema),
        }


@dataclass
class RegistryStore:
    """Subjects, versions, schemas and configuration of one registry."""

    checker: CompatibilityChecker = field(default_factory=AcceptEverythingChecker)
    revision: int = 0
    _schemas: dict[int, SchemaRecord] = field(default_factory=dict)
    _ids_by_identity: dict[str, int] = field(default_factory=dict)
    _subjects: dict[str, dict[int, VersionRecord]] = field(default_factory=dict)
    _next_id: int = 1
    _global_config: dict = field(default_factory=lambda: {"compatibilityLevel": DEFAULT_COMPATIBILITY})
    _subject_configs: dict[str, dict] = field(default_factory=dict)
    _parsed_cache: dict[int, ParsedSchema] = field(default_factory=dict)

    # ------------------------------------------------------------------ registration

    def register(self, subject: str, request: SchemaRequest, *, normalize: bool = False) -> SubjectVersion:
        """Register ``request`` under ``subject`` (or return the version that already has it)."""
        _check_subject_name(subject)
        versions = self._subjects.get(subject, {})
        live = self._versions_of(subject, include_deleted=False)
        if not (request.schema or "").strip():
            # Confluent re-registers the latest schema when the body carries none.
            if not live:
                raise errors.invalid_schema("empty schema")
            latest = self._schemas[live[-1].schema_id]
            request = SchemaRequest(
                schema=latest.schema,
                schema_type=latest.schema_type,
                references=tuple(latest.references),
                metadata=request.metadata or latest.metadata,
                rule_set=request.rule_set or latest.rule_set,
                id=request.id,
                version=request.version,
            )
        request = self._pin_references(request, include_deleted=False)
        parsed = self._parse(request, normalize=normalize or self._normalize_by_config(subject))
        identity = _identity(parsed, request)
        known_id = self._ids_by_identity.get(identity)

        # Checked before the id, as Confluent does: re-registering an existing schema is a lookup.
        if request.id is None and known_id is not None:
            for version in reversed(live):
                if version.schema_id == known_id:
                    return self._view(version)

        if request.id is not None:  # choosing ids is for a registry in IMPORT mode, never this one
            raise errors.operation_not_permitted(f"Subject {subject} is not in import mode")
        problems = self._incompatibilities(
            parsed, live, self._compatibility_level(subject), latest_only_unless_transitive=True
        )
        if problems:
            raise errors.incompatible_schema(subject, problems)

        new_version = max(versions, default=0) + 1
        if request.version is not None and request.version != new_version:
            raise errors.invalid_schema("Version is not one more than previous version")

        schema_id = known_id
        if schema_id is None:
            schema_id = self._next_id
        record = self._schemas.get(schema_id)
        if record is None:
            record = SchemaRecord(
                id=schema_id,
                guid=str(uuid.uuid4()),
                schema_type=parsed.schema_type,
                schema=parsed.text,
                references=[dict(r) for r in request.references],
                metadata=request.metadata,
                rule_set=request.rule_set,
                identity=identity,
            )
            self._schemas[schema_id] = record
            self._parsed_cache[schema_id] = parsed
            self._ids_by_identity.setdefault(identity, schema_id)
        self._next_id = max(self._next_id, schema_id + 1)

        subject_versions = self._subjects.setdefault(subject, {})
        # Like Confluent: an earlier soft-deleted version carrying the same id is superseded.
        for old in list(subject_versions.values()):
            if old.deleted and old.schema_id == schema_id:
                del subject_versions[old.version]
        created = VersionRecord(subject=subject, version=new_version, schema_id=schema_id)
        subject_versions[new_version] = created
        self._changed()
        return self._view(created)

    def lookup(
        self,
        subject: str,
        request: SchemaRequest,
        *,
        normalize: bool = False,
        include_deleted: bool = False,
    ) -> SubjectVersion:
        """The version of ``subject`` holding ``request``'s schema (POST /subjects/{subject})."""
        if not self._has_subject(subject, include_deleted=include_deleted):
            raise errors.subject_not_found(subject)
        request = self._pin_references(request, include_deleted=True)
        parsed = self._parse(request, normalize=normalize, include_deleted=True)
        known_id = self._ids_by_identity.get(_identity(parsed, request))
        if known_id is not None:
            for version in reversed(self._versions_of(subject, include_deleted=include_deleted)):
                if version.schema_id == known_id:
                    return self._view(version)
        raise errors.schema_not_found()

    # ------------------------------------------------------------------ reads

    def schema_by_id(self, schema_id: int) -> SchemaRecord:
        record = self._schemas.get(schema_id)
        if record is None or not self._id_in_use(schema_id):
            raise errors.schema_not_found(schema_id)
        return record

    def schema_by_guid(self, guid: str) -> SchemaRecord:
        for record in self._schemas.values():
            if record.guid == guid and self._id_in_use(record.id):
                return record
        raise errors.schema_not_found(guid)

    def schema_text(self, record: SchemaRecord, fmt: str | None) -> str:
        """The schema in the ``format`` asked for: only PROTOBUF has another one, ``serialized``."""
        if record.schema_type == PROTOBUF and (fmt or "").strip().lower() == SERIALIZED_FORMAT:
            serialized = self._parsed(record).serialized
            if serialized is not None:
                return serialized
        return record.schema

    def referenced_by(self, subject: str, version: str | int, *, include_deleted: bool = False) -> list[int]:
        """Ids of the schemas whose references name this subject version (GET .../referencedby)."""
        target = self.get_version(subject, version, include_deleted=True)
        ids = set()
        for versions in self._subjects.values():
            for record in versions.values():
                if record.deleted and not include_deleted:
                    continue
                schema = self._schemas[record.schema_id]
                if any(r["subject"] == subject and r["version"] == target.version for r in schema.references):
                    ids.add(schema.id)
        return sorted(ids)

    def versions_of_id(
        self, schema_id: int, *, subject: str | None = None, include_deleted: bool = False
    ) -> list[tuple[str, int]]:
        """(subject, version) pairs using ``schema_id`` (GET /schemas/ids/{id}/versions)."""
        self.schema_by_id(schema_id)
        pairs = []
        for name in sorted(self._subjects):
            if subject is not None and name != subject:
                continue
            for version in self._versions_of(name, include_deleted=include_deleted):
                if version.schema_id == schema_id:
                    pairs.append((name, version.version))
        return pairs

    def subjects(self, *, include_deleted: bool = False, deleted_only: bool = False, prefix: str = "") -> list[str]:
        """Subjects with at least one version matching the filter (GET /subjects)."""
        result = []
        for name in sorted(self._subjects):
            if not name.startswith(prefix):
                continue
            versions = self._subjects[name].values()
            if deleted_only:
                matches = any(v.deleted for v in versions)
            else:
                matches = any(include_deleted or not v.deleted for v in versions)
            if matches:
                result.append(name)
        return result

    def versions(self, subject: str, *, include_deleted: bool = False, deleted_only: bool = False) -> list[int]:
        if not self._has_subject(subject, include_deleted=include_deleted or deleted_only):
            raise errors.subject_not_found(subject)
        if deleted_only:
            return [v.version for v in self._versions_of(subject, include_deleted=True) if v.deleted]
        return [v.version for v in self._versions_of(subject, include_deleted=include_deleted)]

    def get_version(self, subject: str, version: str | int, *, include_deleted: bool = False) -> SubjectVersion:
        """GET /subjects/{subject}/versions/{version} with ``version`` a number or "latest"."""
        wanted = parse_version(version)
        if not self._has_subject(subject, include_deleted=include_deleted):
            raise errors.subject_not_found(subject)
        candidates = self._versions_of(subject, include_deleted=include_deleted)
        if wanted == LATEST:
            if not candidates:
                raise errors.version_not_found(version)
            return self._view(candidates[-1])
        for candidate in candidates:
            if candidate.version == wanted:
                return self._view(candidate)
        raise errors.version_not_found(wanted)

    def latest_with_metadata(
        self, subject: str, properties: dict[str, str], *, include_deleted: bool = False
    ) -> SubjectVersion:
        """Newest version whose metadata properties contain ``properties``."""
        if not self._has_subject(subject, include_deleted=include_deleted):
            raise errors.subject_not_found(subject)
        for version in reversed(self._versions_of(subject, include_deleted=include_deleted)):
            metadata = self._schemas[version.schema_id].metadata or {}
            own = metadata.get("properties") or {}
            if all(own.get(k) == v for k, v in properties.items()):
                return self._view(version)
        raise errors.schema_not_found()

    # ------------------------------------------------------------------ deletes

    def delete_subject(self, subject: str, *, permanent: bool = False) -> list[int]:
        """Soft-delete every live version, or forget a soft-deleted subject (permanent)."""
        if not self._has_subject(subject, include_deleted=True):
            raise errors.subject_not_found(subject)
        versions = self._subjects[subject]
        if permanent:
            if any(not v.deleted for v in versions.values()):
                raise errors.subject_not_soft_deleted(subject)
            targets = sorted(versions)
        else:
            targets = [v.version for v in self._versions_of(subject, include_deleted=False)]
            if not targets:
                raise errors.subject_soft_deleted(subject)
        for number in targets:
            self._refuse_if_referenced(subject, number)
        if permanent:
            del self._subjects[subject]
        else:
            for number in targets:
                versions[number].deleted = True
        self._forget_subject_settings(subject)
        self._changed()
        return targets

    def delete_version(self, subject: str, version: str | int, *, permanent: bool = False) -> int:
        wanted = parse_version(version)
        if not self._has_subject(subject, include_deleted=True):
            raise errors.subject_not_found(subject)
        versions = self._subjects[subject]
        number = wanted if isinstance(wanted, int) else max(versions)  # parse_version: a number or LATEST
        record = versions.get(number)
        if record is None:
            raise errors.version_not_found(version)
        if not permanent and record.deleted:
            raise errors.version_soft_deleted(subject, number)
        self._refuse_if_referenced(subject, number)
        if permanent:
            if not record.deleted:
                raise errors.version_not_soft_deleted(subject, number)
            del versions[number]
            if not versions:
                del self._subjects[subject]
        else:
            record.deleted = True
            if not self._has_subject(subject, include_deleted=False):
                self._forget_subject_settings(subject)
        self._changed()
        return number

    # ------------------------------------------------------------------ compatibility

    def check_compatibility(
        self,
        subject: str,
        version: str | int | None,
        request: SchemaRequest,
        *,
        normalize: bool = False,
    ) -> list[str]:
        """Reasons ``request`` is incompatible; empty when compatible.

        ``version`` None checks the way registration would (POST .../versions), otherwise
        against that one version ("latest" with no versions yet is trivially compatible).
        """
        parsed = self._parse(request, normalize=normalize)
        level = self._compatibility_level(subject)
        if version is None:
            # "against all versions, depending on the level": transitive levels compare with
            # every live version, the others with the latest, exactly like registration.
            previous = self._versions_of(subject, include_deleted=False)
            return self._incompatibilities(parsed, previous, level, latest_only_unless_transitive=True)
        wanted = parse_version(version)
        if wanted == LATEST:
            live = self._versions_of(subject, include_deleted=False)
            return self._incompatibilities(parsed, live[-1:], level, latest_only_unless_transitive=False)
        target = self.get_version(subject, wanted)
        record = self._subjects[subject][target.version]
        return self._incompatibilities(parsed, [record], level, latest_only_unless_transitive=False)

    # ------------------------------------------------------------------ config

    def global_config(self) -> dict:
        return dict(self._global_config)

    def set_global_config(self, body: Any) -> dict:
        update = _config_update(body)
        self._global_config = {**self._global_config, **_stored_config(update)}
        self._changed()
        return update

    def delete_global_config(self) -> dict:
        old = dict(self._global_config)
        self._global_config = {"compatibilityLevel": DEFAULT_COMPATIBILITY}
        self._changed()
        return old

    def subject_config(self, subject: str, *, default_to_global: bool = False) -> dict:
        if subject in self._subject_configs:
            return dict(self._subject_configs[subject])
        if default_to_global:
            return self.global_config()
        raise errors.subject_compatibility_not_configured(subject)

    def set_subject_config(self, subject: str, body: Any) -> dict:
        _check_subject_name(subject)
        update = _config_update(body)
        current = self._subject_configs.get(subject, {})
        self._subject_configs[subject] = {**current, **_stored_config(update)}
        self._changed()
        return update

    def delete_subject_config(self, subject: str) -> dict:
        if subject in self._subject_configs:
            old = self._subject_configs.pop(subject)
            self._changed()
            return old
        if not self._has_subject(subject, include_deleted=False):
            raise errors.subject_not_found(subject)
        return {}

    def to_snapshot(self) -> dict:
        """Everything needed to rebuild the store, as plain JSON data."""
        return {
            "format": SNAPSHOT_FORMAT,
            "next_id": self._next_id,
            "schemas": [
                {
                    "id": r.id,
                    "guid": r.guid,
                    "schemaType": r.schema_type,
                    "schema": r.schema,
                    "references": r.references,
                    "metadata": r.metadata,
                    "ruleSet": r.rule_set,
                    "identity": r.identity,
                }
                for r in sorted(self._schemas.values(), key=lambda r: r.id)
            ],
            "subjects": {
                name: [
                    {"version": v.version, "id": v.schema_id, "deleted": v.deleted}
                    for v in sorted(versions.values(), key=lambda v: v.version)
                ]
                for name, versions in sorted(self._subjects.items())
            },
            "config": self._global_config,
            "subject_configs": self._subject_configs,
        }

    @classmethod
    def from_snapshot(cls, snapshot: dict, checker: CompatibilityChecker | None = None) -> RegistryStore:
        if snapshot.get("format") != SNAPSHOT_FORMAT:
            raise ValueError(f"unsupported registry snapshot format {snapshot.get('format')!r}")
        store = cls(checker=checker or AcceptEverythingChecker())
        for item in snapshot["schemas"]:
            record = SchemaRecord(
                id=item["id"],
                guid=item["guid"],
                schema_type=item["schemaType"],
                schema=item["schema"],
                references=item["references"],
                metadata=item["metadata"],
                rule_set=item["ruleSet"],
                identity=item["identity"],
            )
            store._schemas[record.id] = record
            store._ids_by_identity.setdefault(record.identity, record.id)
        for name, versions in snapshot["subjects"].items():
            store._subjects[name] = {
                v["version"]: VersionRecord(name, v["version"], v["id"], v["deleted"]) for v in versions
            }
        store._next_id = snapshot["next_id"]
        store._global_config = snapshot["config"]
        store._subject_configs = snapshot["subject_configs"]
        return store

    # ------------------------------------------------------------------ internals

    def _changed(self) -> None:
        self.revision += 1

    def _view(self, version: VersionRecord) -> SubjectVersion:
        return SubjectVersion(
            subject=version.subject,
            version=version.version,
            schema=self._schemas[version.schema_id],
            deleted=version.deleted,
        )

    def _versions_of(self, subject: str, *, include_deleted: bool) -> list[VersionRecord]:
        versions = self._subjects.get(subject, {})
        return [versions[n] for n in sorted(versions) if include_deleted or not versions[n].deleted]

    def _has_subject(self, subject: str, *, include_deleted: bool) -> bool:
        return bool(self._versions_of(subject, include_deleted=include_deleted))

    def _id_in_use(self, schema_id: int) -> bool:
        return any(v.schema_id == schema_id for versions in self._subjects.values() for v in versions.values())

    def _ids_referencing(self, subject: str, version: int) -> list[int]:
        ids = set()
        for versions in self._subjects.values():
            for record in versions.values():
                schema = self._schemas[record.schema_id]
                if any(r["subject"] == subject and r["version"] == version for r in schema.references):
                    ids.add(schema.id)
        return sorted(ids)

    def _refuse_if_referenced(self, subject: str, version: int) -> None:
        if self._ids_referencing(subject, version):
            raise errors.reference_exists(f"{{subject={subject},version={version}}}")

    def _forget_subject_settings(self, subject: str) -> None:
        self._subject_configs.pop(subject, None)

    def _config_in_scope(self, subject: str) -> dict:
        return self._subject_configs.get(subject) or self._global_config

    def _compatibility_level(self, subject: str) -> str:
        return self._config_in_scope(subject).get("compatibilityLevel", DEFAULT_COMPATIBILITY)

    def _normalize_by_config(self, subject: str) -> bool:
        return bool(self._config_in_scope(subject).get("normalize"))

    def _parse(self, request: SchemaRequest, *, normalize: bool, include_deleted: bool = False) -> ParsedSchema:
        if request.schema is None or not request.schema.strip():
            raise errors.invalid_schema("empty schema")
        referenced = self._resolved_references(request.references, include_deleted=include_deleted)
        return parse_schema(
            request.schema_type,
            request.schema,
            [text for _, text in referenced],
            normalize=normalize,
            named_references=referenced,
        )

    def _pin_references(self, request: SchemaRequest, *, include_deleted: bool) -> SchemaRequest:
        """Version -1 in a reference means the latest version, and is stored as that number (Confluent)."""
        if not any(r["version"] == -1 for r in request.references):
            return request
        pinned = []
        for reference in request.references:
            if reference["version"] == -1:
                target = self._referenced_version(reference, include_deleted=include_deleted)
                reference = {**reference, "version": target.version}
            pinned.append(reference)
        return replace(request, references=tuple(pinned))

    def _referenced_version(self, reference: dict, *, include_deleted: bool) -> SubjectVersion:
        try:
            return self.get_version(
                reference["subject"],
                LATEST if reference["version"] == -1 else reference["version"],
                include_deleted=include_deleted,
            )
        except errors.RegistryError as exc:
            raise errors.invalid_schema(
                f"reference '{reference['name']}' to subject '{reference['subject']}' "
                f"version {reference['version']} cannot be resolved: {exc.message}"
            ) from exc

    def _resolved_references(
        self, references: tuple[dict, ...] | list[dict], *, include_deleted: bool
    ) -> list[tuple[str, str]]:
        """(name, text) of the referenced schemas, each after its own references (dependencies first).

        As Confluent resolves them: depth-first, and the first schema found under a name wins. A new
        schema's references must be live versions; a stored schema's may be soft-deleted.
        """
        resolved: list[tuple[str, str]] = []
        seen: set[str] = set()

        def visit(refs: tuple[dict, ...] | list[dict]) -> None:
            for reference in refs:
                if reference["name"] in seen:
                    continue
                seen.add(reference["name"])
                target = self._referenced_version(reference, include_deleted=include_deleted)
                visit(target.schema.references)
                resolved.append((reference["name"], target.schema.schema))

        visit(references)
        return resolved

    def _parsed(self, record: SchemaRecord) -> ParsedSchema:
        if record.id not in self._parsed_cache:
            referenced = self._resolved_references(record.references, include_deleted=True)
            self._parsed_cache[record.id] = parse_schema(
                record.schema_type,
                record.schema,
                [text for _, text in referenced],
                named_references=referenced,
            )
        return self._parsed_cache[record.id]

    def _incompatibilities(
        self,
        new: ParsedSchema,
        previous: list[VersionRecord],
        level: str,
        *,
        latest_only_unless_transitive: bool,
    ) -> list[str]:
        """Compare ``new`` with ``previous`` (oldest first) as ``level`` requires.

        Registration compares with the latest version only unless the level is transitive;
        the compatibility endpoint passes exactly the versions to compare with.
        """
        rule = CompatibilityRule.for_level(level)
        if not rule.directions or not previous:
            return []
        if latest_only_unless_transitive and not rule.transitive:
            targets = previous[-1:]
        else:
            targets = previous
        problems: list[str] = []
        for version in reversed(targets):
            existing = self._parsed(self._schemas[version.schema_id])
            if existing.schema_type != new.schema_type:
                problems.append(
                    f"Incompatible schema type {new.schema_type}, version {version.version} is {existing.schema_type}"
                )
                continue
            for direction in rule.directions:
                problems.extend(self.checker.incompatibilities(new, existing, direction))
        return problems


def parse_version(version: str | int) -> int | str:
    """A version path segment: a number in [1, 2^31-1], or "latest" (also spelled -1)."""
    if isinstance(version, str) and version.lower() == LATEST:
        return LATEST
    try:
        number = int(version)
    except (TypeError, ValueError):
        raise errors.invalid_version(version) from None
    if number == -1:
        return LATEST
    if not 1 <= number <= 2**31 - 1:
        raise errors.invalid_version(version)
    return number


def _check_subject_name(subject: str) -> None:
    if not subject or not subject.strip() or any(ord(c) < 32 for c in subject):
        raise errors.RegistryError(42208, f"The specified subject '{subject}' is not valid.")


def _identity(parsed: ParsedSchema, request: SchemaRequest) -> str:
    """Schemas are the same when type, parsed form, references, metadata and rules agree."""
    return json.dumps(
        [
            parsed.schema_type,
            parsed.canonical,
            list(request.references),
            request.metadata,
            request.rule_set,
        ],
        sort_keys=True,
        separators=(",", ":"),
    )


def _config_update(body: Any) -> dict:
    """Validate a PUT /config body; return it as Confluent echoes it back."""
    if not isinstance(body, dict):
        raise errors.RegistryError(42203, "The config body must be a JSON object")
    level = body.get("compatibility", body.get("compatibilityLevel"))
    update: dict[str, Any] = {}
    if level is not None:
        if not isinstance(level, str) or level.upper() not in COMPATIBILITY_LEVELS:
            raise errors.invalid_compatibility_level(level)
        update["compatibility"] = level.upper()
    for key in _EXTRA_CONFIG_FIELDS:
        if key in body:
            update[key] = body[key]
    if not update:
        raise errors.invalid_compatibility_level(None)
    return update


def _stored_config(update: dict) -> dict:
    """A PUT body in the shape GET /config returns (``compatibilityLevel``)."""
    stored = {k: v for k, v in update.items() if k != "compatibility"}
    if "compatibility" in update:
        stored["compatibilityLevel"] = update["compatibility"]
    return stored
