"""JSON Schema compatibility for the local registry, as Confluent Schema Registry decides it.

Confluent diffs the old ("original") and new ("update") schema and calls the result compatible when every
difference is in its (strict) set of compatible changes, :data:`COMPATIBLE_CHANGES`. BACKWARD diffs
(existing -> new), FORWARD diffs (new -> existing); FULL asks both (the store picks directions and versions).
Schemas are compared as Confluent's JSON Schema library loads them (:mod:`registry_json_compat_model`),
``$ref`` resolved to what it points to; the rules, by schema class:

* any class: a different class is ``TYPE_CHANGED`` (incompatible), except that anything may become ``{}``/
  ``true`` and ``false`` may become anything; ``$id``, ``title``, ``description`` and ``default`` changes are
  compatible;
* ``integer`` -> ``number`` is ``TYPE_EXTENDED`` (compatible), the reverse ``TYPE_NARROWED``; ``maximum``,
  ``minimum``, ``exclusiveMaximum``, ``exclusiveMinimum``, ``maxLength``, ``minLength``, ``maxItems``,
  ``minItems``, ``maxProperties``, ``minProperties``: added, decreased (max) or increased (min) is
  incompatible, removed or relaxed is compatible; ``multipleOf`` may only be removed or become a divisor of
  the old one; ``pattern`` may only be removed; ``uniqueItems`` may only be removed;
* objects: a property added to an open content model (no ``additionalProperties`` schema or ``false``, no
  ``patternProperties``) is incompatible unless its schema is ``{}``/``true`` (Confluent's strict rule, which
  treats any other new property as a possible clash with data the open model let through); to a closed
  model it is compatible unless required without a default; to a partially open model it must be covered by
  the matching ``patternProperties``/``additionalProperties`` schema. A property removed is compatible from an
  open model, must be covered by the update's partial model, and is incompatible from a closed model unless its
  schema was ``false``. A property becoming required is incompatible unless it has a default; ``required``
  removed is compatible; ``additionalProperties`` may become more permissive only; ``dependencies`` may only
  be removed or narrowed;
* arrays: the ``items`` schema and the tuple ``items`` positionally, with the same open/closed/partially open
  rules for added and removed positions (``additionalItems``);
* ``enum`` may be extended only; ``const`` may not change; ``not`` must be narrowed;
* ``oneOf``/``anyOf``/``allOf``: a criterion may change to ``anyOf`` (or between singletons, ...); a sum type
  (``oneOf``/``anyOf``) may gain subschemas and a product type (``allOf``) lose them; the old and new
  subschemas must then match one to one with compatible pairs (a maximum bipartite matching), else
  ``COMBINED_TYPE_SUBSCHEMAS_CHANGED``; a plain schema may become a ``oneOf``/``anyOf`` containing a
  compatible subschema, and an ``allOf`` may become one of its compatible subschemas.

Paths are Confluent's JSON pointers (``#/properties/a/maxLength``). Messages have Confluent's ``Difference``
shape, ``{errorType:"TYPE_CHANGED", description:"A type at path '#/properties/a' is different between the
new schema and the old schema'}`` (the closing quote is Confluent's), followed by ``{oldSchema: '...'}``.

Not covered: the draft 2019-09/2020-12 keywords (``unevaluatedProperties``/``unevaluatedItems``,
``prefixItems``, ``dependentRequired``/``dependentSchemas``, ``minContains``/``maxContains``): schemas of
those drafts are compared with the draft 7 rules, their newer keywords ignored; ``$ref`` by ``$id`` or anchor
(only JSON pointers, into the schema itself or into a referenced schema by its reference name, are followed);
Confluent's lenient policy. Confluent compares a decreased ``exclusiveMaximum`` against the new ``maximum``
(and fails without one); this reports ``EXCLUSIVE_MAXIMUM_DECREASED``. The registry hands a checker no
referenced schemas, so there a ``$ref`` to another subject's schema compares by its text.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from kafka_s3_assets.devstack.registry_compat import BACKWARD, FORWARD, java_hash_order
from kafka_s3_assets.devstack.registry_json_compat_model import (
    ARRAY,
    COMBINED,
    CONST,
    ENUM,
    FALSE,
    NOT,
    NUMBER,
    OBJECT,
    REFERENCE,
    STRING,
    Node,
    load,
)
from kafka_s3_assets.devstack.registry_schemas import ParsedSchema

# The Difference types Confluent's strict policy accepts (SchemaDiff.COMPATIBLE_CHANGES_STRICT).
COMPATIBLE_CHANGES = frozenset(
    """
    ID_CHANGED DESCRIPTION_CHANGED TITLE_CHANGED DEFAULT_CHANGED SCHEMA_REMOVED TYPE_EXTENDED
    MAX_LENGTH_INCREASED MAX_LENGTH_REMOVED MIN_LENGTH_DECREASED MIN_LENGTH_REMOVED PATTERN_REMOVED
    MAXIMUM_INCREASED MAXIMUM_REMOVED MINIMUM_DECREASED MINIMUM_REMOVED EXCLUSIVE_MAXIMUM_INCREASED
    EXCLUSIVE_MAXIMUM_REMOVED EXCLUSIVE_MINIMUM_DECREASED EXCLUSIVE_MINIMUM_REMOVED MULTIPLE_OF_REDUCED
    MULTIPLE_OF_REMOVED
    REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED REQUIRED_ATTRIBUTE_REMOVED DEPENDENCY_ARRAY_NARROWED
    DEPENDENCY_ARRAY_REMOVED DEPENDENCY_SCHEMA_REMOVED MAX_PROPERTIES_INCREASED MAX_PROPERTIES_REMOVED
    MIN_PROPERTIES_DECREASED MIN_PROPERTIES_REMOVED ADDITIONAL_PROPERTIES_ADDED ADDITIONAL_PROPERTIES_EXTENDED
    UNEVALUATED_PROPERTIES_ADDED UNEVALUATED_PROPERTIES_EXTENDED
    PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL
    REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL
    PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL
    PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
    PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
    MAX_ITEMS_INCREASED MAX_ITEMS_REMOVED MIN_ITEMS_DECREASED MIN_ITEMS_REMOVED MAX_CONTAINS_INCREASED
    MAX_CONTAINS_REMOVED MIN_CONTAINS_DECREASED MIN_CONTAINS_REMOVED UNIQUE_ITEMS_REMOVED ADDITIONAL_ITEMS_ADDED
    ADDITIONAL_ITEMS_EXTENDED UNEVALUATED_ITEMS_ADDED UNEVALUATED_ITEMS_EXTENDED
    ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL ITEM_ADDED_TO_CLOSED_CONTENT_MODEL
    ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL
    ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
    ENUM_ARRAY_EXTENDED COMBINED_TYPE_EXTENDED PRODUCT_TYPE_NARROWED SUM_TYPE_EXTENDED NOT_TYPE_NARROWED
    """.split()
)

# Which description each Difference type gets (Confluent groups them); the %s are "new"/"old".
_KEYWORD_ADDED_OR_REMOVED = set(
    """
    MAXIMUM_ADDED MINIMUM_ADDED EXCLUSIVE_MAXIMUM_ADDED EXCLUSIVE_MINIMUM_ADDED MULTIPLE_OF_ADDED MAX_LENGTH_ADDED
    MIN_LENGTH_ADDED PATTERN_ADDED REQUIRED_ATTRIBUTE_ADDED MAX_PROPERTIES_ADDED MIN_PROPERTIES_ADDED
    DEPENDENCY_ARRAY_ADDED DEPENDENCY_SCHEMA_ADDED MAX_ITEMS_ADDED MIN_ITEMS_ADDED MAX_CONTAINS_ADDED
    MIN_CONTAINS_ADDED UNIQUE_ITEMS_ADDED ADDITIONAL_ITEMS_REMOVED ADDITIONAL_PROPERTIES_REMOVED
    UNEVALUATED_PROPERTIES_REMOVED UNEVALUATED_ITEMS_REMOVED
    """.split()
)
_VALUE_INCREASED = set(
    """
    MIN_LENGTH_INCREASED MINIMUM_INCREASED EXCLUSIVE_MINIMUM_INCREASED MIN_PROPERTIES_INCREASED
    MULTIPLE_OF_EXPANDED MIN_ITEMS_INCREASED MIN_CONTAINS_INCREASED
    """.split()
)
_VALUE_DECREASED = set(
    """
    MAX_LENGTH_DECREASED MAXIMUM_DECREASED MAX_ITEMS_DECREASED MAX_CONTAINS_DECREASED EXCLUSIVE_MAXIMUM_DECREASED
    MAX_PROPERTIES_DECREASED
    """.split()
)
_TYPE_NARROWED = set(
    """
    ADDITIONAL_ITEMS_NARROWED ENUM_ARRAY_NARROWED SUM_TYPE_NARROWED ADDITIONAL_PROPERTIES_NARROWED
    UNEVALUATED_PROPERTIES_NARROWED UNEVALUATED_ITEMS_NARROWED
    """.split()
)
_VALUE_CHANGED = {"PATTERN_CHANGED", "MULTIPLE_OF_CHANGED", "DEPENDENCY_ARRAY_CHANGED"}
_TYPE_CHANGED = {
    "TYPE_CHANGED",
    "TYPE_NARROWED",
    "COMBINED_TYPE_CHANGED",
    "COMBINED_TYPE_SUBSCHEMAS_CHANGED",
    "ENUM_ARRAY_CHANGED",
}
_TYPE_EXTENDED = {"DEPENDENCY_ARRAY_EXTENDED", "PRODUCT_TYPE_EXTENDED", "SUM_TYPE_EXTENDED", "NOT_TYPE_EXTENDED"}
_ADDED_TO_OPEN = {
    "REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL",
    "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL",
    "OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL",
    "ITEM_ADDED_TO_OPEN_CONTENT_MODEL",
}


def _description(kind: str, path: str) -> str:
    at = f"at path '{path}'"
    if kind in _KEYWORD_ADDED_OR_REMOVED:
        return f"The keyword {at} in the %s schema is not present in the %s schema"
    if kind in _VALUE_INCREASED:
        return f"The value {at} in the %s schema is more than its value in the %s schema"
    if kind in _VALUE_DECREASED:
        return f"The value {at} in the %s schema is less than its value in the %s schema"
    if kind in _VALUE_CHANGED:
        return f"The value {at} is different between the %s and %s schema"
    if kind in _TYPE_NARROWED:
        return f"An array or combined type {at} has fewer elements in the %s schema than the %s schema"
    if kind in _TYPE_EXTENDED:
        return f"An array or combined type {at} has more elements in the %s schema than the %s schema"
    if kind in _TYPE_CHANGED:
        return f"A type {at} is different between the %s schema and the %s schema"
    if kind in _ADDED_TO_OPEN:
        return (
            f"The %s schema has an open content model and has a property or item {at} which is missing in the %s schema"
        )
    if kind == "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL":
        return (
            f"The %s schema has an unopen content model and has a required property {at} which is missing in the "
            "%s schema"
        )
    if kind in ("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", "ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL"):
        return f"The %s has a closed content model and is missing a property or item present {at} in the %s schema"
    if kind in (
        "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
        "ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
    ):
        return (
            f"A property or item is missing in the %s schema but present {at} in the %s schema and is not covered "
            "by its partially open content model"
        )
    if kind in (
        "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
        "ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
    ):
        return (
            f"The %s schema has a property or item {at} which is missing in the %s schema and is not covered by "
            "its partially open content model"
        )
    return ""


@dataclass(frozen=True)
class JsonDifference:
    """Confluent's JSON Schema ``Difference``: a type and a JSON pointer such as ``#/properties/a``."""

    type: str
    path: str

    @property
    def compatible(self) -> bool:
        return self.type in COMPATIBLE_CHANGES

    def describe(self, reader_label: str, writer_label: str) -> str:
        """Confluent's ``Difference.toString`` with its ``%s`` filled in (and its closing ``'}``)."""
        description = _description(self.type, self.path).replace("%s", reader_label, 1).replace("%s", writer_label, 1)
        return f'{{errorType:"{self.type}", description:"{description}\'}}'

    def __str__(self) -> str:
        return f"{self.type} {self.path}"


class JsonSchemaCompatibilityChecker:
    """The :class:`~kafka_s3_assets.devstack.registry_compat.CompatibilityChecker` for JSON."""

    def incompatibilities(self, new: ParsedSchema, existing: ParsedSchema, direction: str) -> list[str]:
        if direction == BACKWARD:
            original, update, labels = existing, new, ("new", "old")
        elif direction == FORWARD:
            original, update, labels = new, existing, ("old", "new")
        else:
            raise ValueError(f"Unknown compatibility direction {direction!r}")
        try:
            found = json_schema_differences(original.parsed, update.parsed)
        except Exception as exc:  # Confluent reports, rather than fails on, checker exceptions
            return [f"Unexpected exception during compatibility check: {exc}"]
        messages = [each.describe(*labels) for each in found if not each.compatible]
        if messages:
            old = json.dumps(existing.parsed, separators=(",", ":"), ensure_ascii=False)
            messages.append(f"{{oldSchema: '{old}'}}")
        return messages


def json_schema_differences(
    original: Any,
    update: Any,
    *,
    original_references: Mapping[str, Any] | None = None,
    update_references: Mapping[str, Any] | None = None,
) -> list[JsonDifference]:
    """Every difference, compatible or not, from ``original`` to ``update`` (parsed JSON), in Confluent's order.

    ``*_references`` are the referenced schemas (parsed JSON) by the name their ``$ref`` uses.
    """
    original_node = load(original, original_references)
    update_node = load(update, update_references)
    # Recursive schemas: a pair met again while being compared is taken as compatible, then the passes
    # repeat with the pairs found incompatible fed back until the answer stops changing (as Confluent does).
    seed: dict[tuple[int, int], list[JsonDifference]] = {}
    while True:
        state = _State(seed)
        context = _Context(state)
        context.compare(original_node, update_node)
        incompatible = {key: found for key, found in state.memo.items() if not all(each.compatible for each in found)}
        if not state.optimism_used or incompatible.keys() == seed.keys():
            return context.found
        seed = incompatible


# ------------------------------------------------------------------------------------------------


class _State:
    """What every context of one pass shares: the memo of compared pairs and the pairs in progress."""

    def __init__(self, seed: dict[tuple[int, int], list[JsonDifference]]) -> None:
        self.memo: dict[tuple[int, int], list[JsonDifference]] = {}
        self.in_progress: set[tuple[int, int]] = set()
        self.seed = seed
        self.optimism_used = False
        self.keep_alive: list[Node] = []  # ids stay unique while nodes are referenced


class _Context:
    def __init__(self, state: _State, path: list[str] | None = None) -> None:
        self.state = state
        self.path = list(path or [])
        self.found: list[JsonDifference] = []

    def sub(self) -> _Context:
        return _Context(self.state, self.path)

    @property
    def compatible(self) -> bool:
        return all(each.compatible for each in self.found)

    def add(self, kind: str, *extra: str) -> None:
        self.found.append(JsonDifference(kind, "#/" + "/".join([*self.path, *extra])))

    def at(self, segment: str) -> _Scope:
        return _Scope(self, segment)

    # ---- SchemaDiff.compare

    def compare(self, original: Node | None, update: Node | None) -> None:
        if original is None and update is None:
            return
        if original is None:
            self.add("SCHEMA_ADDED")
            return
        if update is None:
            self.add("SCHEMA_REMOVED")
            return
        original, update = _dereferenced(original), _dereferenced(update)
        key = (id(original), id(update))
        state = self.state
        relative = state.memo.get(key)
        if relative is None:
            if key in state.in_progress:
                relative = state.seed.get(key)
                if relative is None:
                    state.optimism_used = True
                    return
            else:
                state.in_progress.add(key)
                state.keep_alive += [original, update]
                try:
                    pair = _Context(state)
                    pair.compare_types(original, update)
                    relative = pair.found
                    state.memo[key] = relative
                finally:
                    state.in_progress.discard(key)
        prefix = "#/" + "/".join(self.path)
        for each in relative:
            if not self.path:
                self.found.append(each)
            elif len(each.path) <= 2:
                self.found.append(JsonDifference(each.type, prefix))
            else:
                self.found.append(JsonDifference(each.type, prefix + "/" + each.path[2:]))

    def compare_types(self, original: Node, update: Node) -> None:
        if original.cls != COMBINED and update.cls == COMBINED:
            if len(update.subschemas) == 1:
                sub = self.sub()
                sub.compare(original, update.subschemas[0])
                if sub.compatible:
                    self.found += sub.found
                    return
            elif update.criterion in ("anyOf", "oneOf"):
                for subschema in update.subschemas:
                    sub = self.sub()
                    sub.compare(original, subschema)
                    if sub.compatible:
                        self.found += sub.found
                        self.add("SUM_TYPE_EXTENDED")
                        return
        elif original.cls == COMBINED and update.cls != COMBINED:
            if len(original.subschemas) == 1:
                sub = self.sub()
                sub.compare(original.subschemas[0], update)
                if sub.compatible:
                    self.found += sub.found
                    return
            elif original.criterion == "allOf":
                for subschema in original.subschemas:
                    sub = self.sub()
                    sub.compare(subschema, update)
                    if sub.compatible:
                        self.found += sub.found
                        self.add("PRODUCT_TYPE_NARROWED")
                        return

        if original.cls != update.cls:
            if original.cls == FALSE or update.is_empty:
                return
            if original.connect_type == "bytes" and update.connect_type == "bytes":
                return
            self.add("TYPE_CHANGED")
            return

        if original.id != update.id:
            self.add("ID_CHANGED")
        if original.title != update.title:
            self.add("TITLE_CHANGED")
        if original.description != update.description:
            self.add("DESCRIPTION_CHANGED")
        if original.default != update.default:
            self.add("DEFAULT_CHANGED")
        compare = _BY_CLASS.get(original.cls)
        if compare is not None:
            compare(self, original, update)

    # ---- StringSchema, NumberSchema

    def compare_string(self, original: Node, update: Node) -> None:
        self.limit("maxLength", "MAX_LENGTH", original.max_length, update.max_length)
        self.limit("minLength", "MIN_LENGTH", original.min_length, update.min_length)
        if original.pattern is None and update.pattern is not None:
            self.add("PATTERN_ADDED", "pattern")
        elif original.pattern is not None and update.pattern is None:
            self.add("PATTERN_REMOVED", "pattern")
        elif original.pattern != update.pattern:
            self.add("PATTERN_CHANGED", "pattern")

    def compare_number(self, original: Node, update: Node) -> None:
        self.limit("maximum", "MAXIMUM", original.maximum, update.maximum)
        self.limit("minimum", "MINIMUM", original.minimum, update.minimum)
        self.limit("exclusiveMaximum", "EXCLUSIVE_MAXIMUM", original.exclusive_maximum, update.exclusive_maximum)
        self.limit("exclusiveMinimum", "EXCLUSIVE_MINIMUM", original.exclusive_minimum, update.exclusive_minimum)
        self.multiple_of(_decimal(original.multiple_of), _decimal(update.multiple_of))
        if original.requires_integer != update.requires_integer:
            self.add("TYPE_EXTENDED" if original.requires_integer else "TYPE_NARROWED")

    def limit(self, keyword: str, name: str, original: Any, update: Any) -> None:
        """A numeric keyword added, removed, increased or decreased."""
        if original == update:
            return
        if original is None:
            self.add(f"{name}_ADDED", keyword)
        elif update is None:
            self.add(f"{name}_REMOVED", keyword)
        elif original < update:
            self.add(f"{name}_INCREASED", keyword)
        elif original > update:
            self.add(f"{name}_DECREASED", keyword)

    def multiple_of(self, original: Decimal | None, update: Decimal | None) -> None:
        if original == update:
            return
        if original is None:
            self.add("MULTIPLE_OF_ADDED", "multipleOf")
        elif update is None:
            self.add("MULTIPLE_OF_REMOVED", "multipleOf")
        elif original != 0 and update % original == 0:
            self.add("MULTIPLE_OF_EXPANDED", "multipleOf")
        elif update != 0 and original % update == 0:
            self.add("MULTIPLE_OF_REDUCED", "multipleOf")
        else:
            self.add("MULTIPLE_OF_CHANGED", "multipleOf")

    # ---- EnumSchema, ConstSchema, NotSchema

    def compare_enum(self, original: Node, update: Node) -> None:
        if original.values == update.values:
            return
        if update.values >= original.values:
            self.add("ENUM_ARRAY_EXTENDED", "enum")
        elif original.values >= update.values:
            self.add("ENUM_ARRAY_NARROWED", "enum")
        else:
            self.add("ENUM_ARRAY_CHANGED", "enum")

    def compare_const(self, original: Node, update: Node) -> None:
        if original.values != update.values:
            self.add("ENUM_ARRAY_CHANGED", "const")

    def compare_not(self, original: Node, update: Node) -> None:
        with self.at("not"):
            sub = self.sub()
            sub.compare(update.must_not, original.must_not)  # reversed: a narrower "not" accepts more
            self.add("NOT_TYPE_NARROWED" if sub.compatible else "NOT_TYPE_EXTENDED")

    # ---- CombinedSchema

    def compare_combined(self, original: Node, update: Node) -> None:
        if self.criteria(original, update) == "COMBINED_TYPE_CHANGED":
            return
        originals = _distinct(original.subschemas)
        updates = _distinct(update.subschemas)
        if len(originals) < len(updates):
            self.add("PRODUCT_TYPE_EXTENDED" if update.criterion == "allOf" else "SUM_TYPE_EXTENDED")
        elif len(originals) > len(updates):
            self.add("SUM_TYPE_NARROWED" if original.criterion in ("anyOf", "oneOf") else "PRODUCT_TYPE_NARROWED")
        edges: dict[tuple[int, int], list[JsonDifference]] = {}
        for i, original_subschema in enumerate(originals):
            with self.at(f"{original.criterion}/{i}"):
                for j, update_subschema in enumerate(updates):
                    sub = self.sub()
                    sub.compare(original_subschema, update_subschema)
                    if sub.compatible:
                        edges[(i, j)] = sub.found
        matching = _maximum_matching(len(originals), len(updates), edges)
        for pair in sorted(matching):
            self.found += edges[pair]
        if len(matching) < min(len(originals), len(updates)):
            self.add("COMBINED_TYPE_SUBSCHEMAS_CHANGED")

    def criteria(self, original: Node, update: Node) -> str | None:
        if original.criterion == update.criterion:
            return None
        single_original, single_update = len(original.subschemas) == 1, len(update.subschemas) == 1
        if (
            update.criterion == "anyOf"
            or (single_original and single_update)
            or (single_original and update.criterion == "oneOf")
            or (single_update and original.criterion == "allOf")
        ):
            kind = "COMBINED_TYPE_EXTENDED"
        else:
            kind = "COMBINED_TYPE_CHANGED"
        self.add(kind)
        return kind

    # ---- ObjectSchema

    def compare_object(self, original: Node, update: Node) -> None:
        with self.at("required"):
            for name in java_hash_order(list(original.properties)):
                if name not in update.properties:
                    continue
                was, now = name in original.required, name in update.required
                if was and not now:
                    self.add("REQUIRED_ATTRIBUTE_REMOVED", name)
                elif now and not was:
                    with_default = update.properties[name].has_default
                    self.add(
                        "REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED" if with_default else "REQUIRED_ATTRIBUTE_ADDED", name
                    )
        with self.at("properties"):
            for name in java_hash_order(list(original.properties), list(update.properties)):
                with self.at(name):
                    self.compare_property(name, original, update)
        with self.at("dependencies"):
            before, after = original.property_dependencies, update.property_dependencies
            for name in java_hash_order(list(before), list(after)):
                if name not in after:
                    self.add("DEPENDENCY_ARRAY_REMOVED", name)
                elif name not in before:
                    self.add("DEPENDENCY_ARRAY_ADDED", name)
                elif before[name] != after[name]:
                    if after[name] >= before[name]:
                        self.add("DEPENDENCY_ARRAY_EXTENDED", name)
                    elif before[name] >= after[name]:
                        self.add("DEPENDENCY_ARRAY_NARROWED", name)
                    else:
                        self.add("DEPENDENCY_ARRAY_CHANGED", name)
            schemas_before, schemas_after = original.schema_dependencies, update.schema_dependencies
            for name in java_hash_order(list(schemas_before), list(schemas_after)):
                if name not in schemas_after:
                    self.add("DEPENDENCY_SCHEMA_REMOVED", name)
                elif name not in schemas_before:
                    self.add("DEPENDENCY_SCHEMA_ADDED", name)
                else:
                    with self.at(name):
                        self.compare(schemas_before[name], schemas_after[name])
        with self.at("additionalProperties"):
            if original.permits_additional != update.permits_additional:
                self.add(
                    "ADDITIONAL_PROPERTIES_ADDED" if update.permits_additional else "ADDITIONAL_PROPERTIES_REMOVED"
                )
            elif original.additional is None and update.additional is not None:
                self.add("ADDITIONAL_PROPERTIES_NARROWED")
            elif update.additional is None and original.additional is not None:
                self.add("ADDITIONAL_PROPERTIES_EXTENDED")
            else:
                self.compare(original.additional, update.additional)
        self.limit("maxProperties", "MAX_PROPERTIES", original.max_properties, update.max_properties)
        self.limit("minProperties", "MIN_PROPERTIES", original.min_properties, update.min_properties)

    def compare_property(self, name: str, original: Node, update: Node) -> None:
        before, after = original.properties.get(name), update.properties.get(name)
        if after is None:
            assert before is not None
            if _is_open(update):
                self.add("PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL")
                return
            partial = _partial_property_schema(update, name)
            if partial is not None:
                covered = self.covered(before, partial)
                self.add(
                    "PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
                    if covered
                    else "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
                )
            elif before.cls == FALSE:
                self.add("PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL")
            else:
                self.add("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL")
        elif before is None:
            required = name in update.required
            if _is_open(original):
                if after.is_empty:
                    self.add("PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL")
                elif required:
                    self.add(
                        "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL"
                        if after.has_default
                        else "REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"
                    )
                else:
                    self.add("OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL")
                return
            partial = _partial_property_schema(original, name)
            if partial is not None:
                covered = self.covered(partial, after)
                self.add(
                    "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
                    if covered
                    else "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
                )
            if required:
                self.add(
                    "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL"
                    if after.has_default
                    else "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL"
                )
            else:
                self.add("OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL")
        else:
            self.compare(before, after)

    def covered(self, original: Node, update: Node) -> bool:
        """Compare in a sub-context, keep its differences, and tell whether they are compatible."""
        sub = self.sub()
        sub.compare(original, update)
        self.found += sub.found
        return sub.compatible

    # ---- ArraySchema

    def compare_array(self, original: Node, update: Node) -> None:
        with self.at("items"):
            self.compare(original.all_items, update.all_items)
        self.compare_tuple_items(original, update)
        with self.at("additionalItems"):
            if original.permits_additional_items != update.permits_additional_items:
                self.add("ADDITIONAL_ITEMS_REMOVED" if original.permits_additional_items else "ADDITIONAL_ITEMS_ADDED")
            elif original.additional_items is None and update.additional_items is not None:
                self.add("ADDITIONAL_ITEMS_NARROWED")
            elif update.additional_items is None and original.additional_items is not None:
                self.add("ADDITIONAL_ITEMS_EXTENDED")
            else:
                self.compare(original.additional_items, update.additional_items)
        self.limit("maxItems", "MAX_ITEMS", original.max_items, update.max_items)
        self.limit("minItems", "MIN_ITEMS", original.min_items, update.min_items)
        if original.unique_items != update.unique_items:
            self.add("UNIQUE_ITEMS_REMOVED" if original.unique_items else "UNIQUE_ITEMS_ADDED", "uniqueItems")

    def compare_tuple_items(self, original: Node, update: Node) -> None:
        before, after = original.item_schemas or [], update.item_schemas or []
        for index in range(max(len(before), len(after))):
            with self.at(f"items/{index}"):
                if index < len(before) and index < len(after):
                    self.compare(before[index], after[index])
                elif index < len(before):
                    self.removed_item(before[index], update)
                else:
                    self.added_item(after[index], original)

    def removed_item(self, item: Node, update: Node) -> None:
        if _is_open_array(update):
            self.add("ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL")
        elif update.additional_items is not None:
            covered = self.covered(item, update.additional_items)
            self.add(
                "ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
                if covered
                else "ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
            )
        elif item.cls == FALSE:
            self.add("ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL")
        else:
            self.add("ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL")

    def added_item(self, item: Node, original: Node) -> None:
        if _is_open_array(original):
            self.add(
                "ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL"
                if item.is_empty
                else "ITEM_ADDED_TO_OPEN_CONTENT_MODEL"
            )
        elif original.additional_items is not None:
            covered = self.covered(original.additional_items, item)
            self.add(
                "ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
                if covered
                else "ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
            )
        else:
            self.add("ITEM_ADDED_TO_CLOSED_CONTENT_MODEL")


class _Scope:
    """``with context.at("segment"):`` -- the path one segment deeper."""

    def __init__(self, context: _Context, segment: str) -> None:
        self.context = context
        self.segment = segment

    def __enter__(self) -> None:
        self.context.path.append(self.segment)

    def __exit__(self, *exc: object) -> None:
        self.context.path.pop()


_BY_CLASS: dict[str, Callable[[_Context, Node, Node], None]] = {
    STRING: _Context.compare_string,
    NUMBER: _Context.compare_number,
    CONST: _Context.compare_const,
    ENUM: _Context.compare_enum,
    COMBINED: _Context.compare_combined,
    NOT: _Context.compare_not,
    OBJECT: _Context.compare_object,
    ARRAY: _Context.compare_array,
}


def _dereferenced(node: Node) -> Node:
    seen = 0
    while node.cls == REFERENCE:
        target = node.referred()
        if target is None:
            return node  # unresolved: compared as a reference (by its text, see _BY_CLASS[REFERENCE])
        node, seen = target, seen + 1
        if seen > 100:
            raise ValueError(f"$ref loop at {node.ref!r}")
    return node


def _compare_unresolved(context: _Context, original: Node, update: Node) -> None:
    if original.ref != update.ref:
        context.add("TYPE_CHANGED")


_BY_CLASS[REFERENCE] = _compare_unresolved


def _is_open(node: Node) -> bool:
    return node.permits_additional and node.additional is None and not node.pattern_properties


def _partial_property_schema(node: Node, name: str) -> Node | None:
    import re

    for pattern, schema in node.pattern_properties:
        if re.search(pattern, name):
            return schema
    return node.additional


def _is_open_array(node: Node) -> bool:
    return node.permits_additional_items and node.additional_items is None


def _distinct(subschemas: list[Node]) -> list[Node]:
    """Subschemas without repeats (Confluent collects them into a set of schemas)."""
    seen: dict[str, Node] = {}
    for each in subschemas:
        seen.setdefault(json.dumps(each.raw, sort_keys=True, default=str), each)
    return list(seen.values())


def _decimal(value: Any) -> Decimal | None:
    if value is None:
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None


def _maximum_matching(left: int, right: int, edges: Mapping[tuple[int, int], object]) -> set[tuple[int, int]]:
    """A maximum bipartite matching over ``edges`` (Kuhn's augmenting paths)."""
    match_of_right: dict[int, int] = {}

    def augment(i: int, visited: set[int]) -> bool:
        for j in range(right):
            if (i, j) in edges and j not in visited:
                visited.add(j)
                if j not in match_of_right or augment(match_of_right[j], visited):
                    match_of_right[j] = i
                    return True
        return False

    for i in range(left):
        augment(i, set())
    return {(i, j) for j, i in match_of_right.items()}
