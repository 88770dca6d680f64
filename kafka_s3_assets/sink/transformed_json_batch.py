"""The JSON batch path for records that go through the connector's transforms: a batch of schemaless JSON
values (JsonConverter, ``schemas.enable=false``) under a chain of ``InsertField$Value`` and
``ReplaceField$Value`` without predicates (``transforms.columnar.columnar_chain``), made JsonFormat lines at
once (``json_lines.encode_lines`` with a per-record hook) and appended as the untransformed JSON batch path
appends its runs (``json_batch``, ``export.record_loop``).

Why a line is the record-by-record line, byte for byte. Record by record a value is read by the converter
(objects as ``HashMap``s: dicts in that map's order), shown to the chain as a schemaless value, each stage's
``apply`` runs its transform's schemaless function (``InsertField.schemaless``,
``ReplaceField.schemaless``: Connect's ``applySchemaless``, the resulting ``HashMap`` as a dict in its
iteration order), and JsonFormat writes the result (``jackson_writer``). Here ``json_lines`` reads the value
(orjson, objects put in ``HashMap`` order: the converter's value, or the record is left to the record path)
and the hook makes the chain's output of it: the plan those same functions of the same stages give, run in
order on a probe of the value's keys (``SchemalessJsonChain.plan``: made once per key sequence), filled with
the value's fields and the record's topic, partition, offset and timestamp (the batch's, which are the
record's). ``json_lines`` writes the result as Jackson writes it (orjson; lines it may write otherwise are
written again through the record path's reader, this hook and Jackson's writer). Nothing else of the record
path applies to these chains: they never drop a record nor change its topic or partition, and leave keys
and headers alone.

What the hook does not take goes record by record in its place: a value that is not a JSON object (the
transforms fail it, naming the record), and whatever a stage raises; with them, what ``json_lines`` leaves
(null values, values it is not sure of). So errors, ``errors.tolerance`` and the dead letter queue see those
records as before. The tests (``unit/test_transformed_json_batch.py``) hold the lines and the objects
against the record path, and the key orders the transforms give against the JVM's ``HashMap``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .json_lines import JsonLines, encode_lines
from .records import RecordBatch
from .transforms.chain import TransformChain
from .transforms.columnar import columnar_chain
from .transforms.insert import TIMESTAMP, InsertField
from .transforms.replace import ReplaceField


class NotAnObject(ValueError):
    """A value the chain's transforms would fail (they take maps only): left to the record path."""


class _Field:
    """A probe's value: the source value's field ``name``."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name


# The probe's coordinates: what InsertField puts for the record's topic, partition, offset and timestamp.
_TOPIC, _PARTITION, _OFFSET, _TIMESTAMP = (object() for _ in range(4))
_COORDINATES = {id(_TOPIC): 0, id(_PARTITION): 1, id(_OFFSET): 2, id(_TIMESTAMP): 3}
_PLANS_KEPT = 4096  # key sequences whose plan is kept (objects with ever other keys: memory stays bounded)

# Where each output field's value comes from: (name, True, source field) or (name, False, index into the
# record's (topic, partition, offset, timestamp, *constants)), in the output's order.
Plan = tuple[tuple[str, bool, Any], ...]


class SchemalessJsonChain:
    """The chain's stages, run on whole batches of schemaless JSON values (``lines``)."""

    def __init__(self, stages: tuple[InsertField | ReplaceField, ...]):
        self._stages = stages
        self._reads_timestamps = any(
            isinstance(stage, InsertField) and stage.specs[TIMESTAMP] is not None for stage in stages
        )
        self._plans: dict[tuple[tuple[str, ...], bool], tuple[Plan, tuple[Any, ...]]] = {}

    @classmethod
    def of(cls, chain: TransformChain) -> SchemalessJsonChain | None:
        """The chain's, when its records may take the JSON batch path; None otherwise (record by record)."""
        if not columnar_chain(chain):
            return None
        stages = []
        for stage in chain.stages:
            transform = stage.transform
            assert isinstance(transform, InsertField | ReplaceField)  # what columnar_chain accepts
            stages.append(transform)
        return cls(tuple(stages))

    def lines(self, batch: RecordBatch) -> JsonLines:
        """The JsonFormat lines of ``batch``'s values after the chain (``json_lines.JsonLines``: the records
        in ``uncertain`` go record by record)."""
        return encode_lines(batch.values, self.hook(batch))

    def hook(self, batch: RecordBatch) -> Callable[[int, Any], dict]:
        """What the chain makes of the value of ``batch``'s record ``i`` (see ``plan``)."""
        topic, partition, offsets = batch.topic, batch.partition, batch.offsets
        timestamps = batch.timestamps() if self._reads_timestamps else None
        plans, plan_of = self._plans, self.plan

        def transform(i: int, value: Any) -> dict:
            if type(value) is not dict:
                raise NotAnObject  # the transforms fail it: the record path raises their error, naming the record
            timestamp = None if timestamps is None else timestamps[i]
            key = (tuple(value), timestamp is not None)
            held = plans.get(key)
            if held is None:
                held = plan_of(*key)
            plan, constants = held
            extra = (topic, partition, offsets[i], timestamp, *constants)
            return {name: value[source] if field else extra[source] for name, field, source in plan}

        return transform

    def plan(self, keys: tuple[str, ...], has_timestamp: bool) -> tuple[Plan, tuple[Any, ...]]:
        """The plan of the chain's output for values of these keys (in this order), of records with a
        timestamp or without, and the constants it puts (static values).

        The stages' own schemaless functions make it, on a probe: a value of these keys whose every field
        holds a marker of its name, with markers for the coordinates. InsertField and ReplaceField never
        read a field's value (they copy it, by name), and what they put besides depends only on the record
        having a timestamp (a partition is always there), so the probe's output names the output fields in
        their order (the ``HashMap`` order the functions give, which depends on the keys alone) and where
        each value comes from; a record's output is that plan filled with its own values."""
        probe: Any = {key: _Field(key) for key in keys}
        for stage in self._stages:
            if isinstance(stage, InsertField):
                timestamp = _TIMESTAMP if has_timestamp else None
                probe = stage.schemaless(probe, _TOPIC, _PARTITION, _OFFSET, timestamp)  # type: ignore[arg-type]
            else:
                probe = stage.schemaless(probe)
        plan: list[tuple[str, bool, Any]] = []
        constants: list[Any] = []
        for name, marker in probe.items():
            if type(marker) is _Field:
                plan.append((name, True, marker.name))
            elif id(marker) in _COORDINATES:
                plan.append((name, False, _COORDINATES[id(marker)]))
            else:  # a static value
                plan.append((name, False, 4 + len(constants)))
                constants.append(marker)
        if len(self._plans) >= _PLANS_KEPT:
            self._plans.clear()
        held = self._plans[(keys, has_timestamp)] = (tuple(plan), tuple(constants))
        return held
