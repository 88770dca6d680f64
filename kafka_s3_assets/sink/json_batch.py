"""The batch path of schemaless JSON: a batch of ``JsonConverter`` (``schemas.enable=false``) values
turned into ``JsonFormat`` lines at once, with orjson, and appended to the open files in runs.

Record by record, a value is parsed by ``json.loads`` (``JsonSchemalessConverter``), wrapped in a
``SinkRecord``, partitioned, checked for rotation, walked by ``to_json_compatible`` and written by
``json.dumps(separators=(",", ":"), ensure_ascii=False)`` (``encode_json_value``), then compressed line
by line: ~20 us a record. Here each value is parsed by ``orjson.loads`` and written by ``orjson.dumps``
(~1.5 us), the lines of a run are compressed in one call, and the rotation decisions are the writer's
batch loop (``TopicPartitionWriter.write_batch``), taken per record on keys alone as for Avro batches.

Why a line is the record-by-record path's line, byte for byte (``encode_lines``): for a value orjson
parses (``v`` below),

* the two parsers agree. orjson accepts strict RFC 8259 JSON in UTF-8 only; whatever Python's parser
  takes beyond that (NaN and Infinity, a UTF-8 byte order mark, UTF-16 and UTF-32 text, encoded or
  escaped lone surrogates, numbers out of the double range, empty or whitespace-only values, nesting
  deeper than orjson's limit) orjson refuses, and such a value goes record by record. On what both
  accept they build the same value: the same strings, objects with their keys in first-seen order where
  a repeated key keeps its first place and its last value, integers exact and floats rounded correctly
  to the same double, -0.0 kept. One exception: orjson reads an integer beyond the 64-bit range as a
  float, so a value holding a run of 19 or more digits where a number's digits may start (strings
  included, unless the run follows a letter or a quote) goes record by record;
* the two writers agree on everything but floats: the same compact separators, the same escapes
  (``\\"``, ``\\\\``, ``\\n``, ``\\r``, ``\\t``, ``\\b``, ``\\f``, ``\\u00XX`` in lower case for the other
  control characters, nothing else: ``/``, DEL, U+2028 and non-ASCII text as they are), the same
  integers, ``true``, ``false``, ``null``. orjson writes at most 254 levels of nesting (a deeper value goes
  record by record), where the record-by-record path still writes it;
* floats are checked one by one: orjson writes the shortest digits that read back as the same double
  (Ryu), Python writes ``repr``, and the forms differ for small and large magnitudes (``1e-05`` against
  ``0.00001``, ``1e-07`` against ``1e-7``). Every float token of orjson's output is read back and
  printed by ``repr``; a line whose floats do not all print as orjson wrote them is written again with
  ``encode_json_value`` of the parsed value, which is the record-by-record line.

The tests (``unit/test_json_batch.py``) hold these claims against ``json`` on a corpus of the tricky
cases and on random values, floats and strings, and the whole export both ways.

Records the batch does not take (a null value, a value orjson refuses, one the checks above are not sure
of) go record by record in their place (``export.record_loop``), which raises the exact converter error,
or tolerates the record, as before.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate
from typing import Callable, Sequence

import orjson

from .batch_keys import Keyer, keyer_for
from .batch_path import PreparedBatch
from .formats.avro_container import BlockWriteError
from .formats.json_format import LINE_SEPARATOR, JsonFormat, JsonRecordWriter, encode_json_value
from .records import ConnectData, KafkaRecord, RecordBatch, SinkRecord

# A run of 19 digits or more where a number's digits may start (after what can precede an integer part,
# a fraction or an exponent; a line start is a "\n"): an integer orjson may read as a float (beyond 64
# bits), or a long mantissa. Runs inside strings after a letter or a quote (hex ids) are not suspects.
# Found with bytes.find on the text with every digit made a "0" (a regular expression scanning the
# batch for digit runs costs ~1.5 us a record; this ~0.05).
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_DIGIT_RUN = b"0" * 19
_BEFORE_NUMBER_DIGITS = frozenset(b" \t\n\r\f\v:,[.eE+-")
# A float token of orjson's output: after ``:`` (object member), ``[`` or ``,`` (array element) or a
# line start (a top-level value), with a fraction or an exponent (integers have neither). A match inside
# a string only costs a line written again: the check is read back, not a parse.
_FLOAT_TOKEN = re.compile(rb"[:,\[\n](-?[0-9]+(?:\.[0-9]+(?:e[-+]?[0-9]+)?|e[-+]?[0-9]+))")


@dataclass(frozen=True)
class JsonLines:
    """The JsonFormat lines of a batch's values: record ``i``'s line (separator included) is
    ``text[bounds[i]:bounds[i + 1]]``; empty for the records in ``uncertain`` (ascending), which must
    go record by record."""

    text: bytes
    bounds: list[int]
    uncertain: list[int]


def encode_lines(values: Sequence[bytes | None]) -> JsonLines:
    """The lines the record-by-record path writes for ``values`` (see the module's docstring)."""
    suspects = _suspects(values)
    loads, dumps = orjson.loads, orjson.dumps
    # The text starts with a separator, so that a top-level float of the first line follows a "\n" too.
    out = bytearray(LINE_SEPARATOR)
    bounds, uncertain = [1], []
    for i, value in enumerate(values):
        if value is None or i in suspects:
            uncertain.append(i)
        else:
            try:
                out += dumps(loads(value))  # appended at once: orjson's results kept alive cost ~2 us each
                out += LINE_SEPARATOR
            except (orjson.JSONDecodeError, orjson.JSONEncodeError):
                uncertain.append(i)
        bounds.append(len(out))
    tokens = _FLOAT_TOKEN.findall(out)
    if tokens and " ".join(map(repr, map(float, tokens))).encode() != b" ".join(tokens):
        return _floats_rewritten(values, out, bounds, uncertain)
    return JsonLines(bytes(out), bounds, uncertain)


def _suspects(values: Sequence[bytes | None]) -> set[int]:
    """The indexes of the values holding a long run of digits that may be a number's (one search of the
    whole batch; the byte before a run's first digit says where the run is)."""
    joined = b"\n" + b"\n".join([b"" if v is None else v for v in values])
    masked = joined.translate(_DIGITS_AS_ZERO)
    suspects: set[int] = set()
    starts = None  # value i is joined[starts[i]:starts[i + 1] - 1]
    at = masked.find(_DIGIT_RUN)
    while at != -1:
        if joined[at - 1] in _BEFORE_NUMBER_DIGITS:
            if starts is None:
                starts = list(accumulate([1 if v is None else len(v) + 1 for v in values], initial=1))
            suspects.add(bisect_right(starts, at) - 1)
        end = at + len(_DIGIT_RUN)
        while end < len(masked) and masked[end] == 0x30:  # to the end of the run: the next find starts a new one
            end += 1
        at = masked.find(_DIGIT_RUN, end)
    return suspects


def _floats_rewritten(values: Sequence[bytes | None], out: bytearray, bounds: list[int],
                      uncertain: list[int]) -> JsonLines:
    """The lines again, those with a float orjson prints otherwise than ``repr`` written by
    ``encode_json_value``, as the record-by-record path writes them; the others copied."""
    rewrite = sorted({bisect_right(bounds, match.start(1)) - 1 for match in _FLOAT_TOKEN.finditer(out)
                      if repr(float(match.group(1))).encode() != match.group(1)})
    still_uncertain = set(uncertain)
    text = bytearray()
    copied_to = 0  # out[:copied_to] is in text
    shift = {}  # record -> how much its line moved (lengths of the lines rewritten before it and its own)
    for i in rewrite:
        text += out[copied_to:bounds[i]]
        try:
            line = encode_json_value(orjson.loads(values[i])) + LINE_SEPARATOR
        except Exception:  # cannot happen for what orjson parses; the record path would decide
            line = b""
            still_uncertain.add(i)
        text += line
        copied_to = bounds[i + 1]
        shift[i + 1] = len(line) - (bounds[i + 1] - bounds[i])
    text += out[copied_to:]
    new_bounds, moved = [], 0
    for i, bound in enumerate(bounds):
        moved += shift.get(i, 0)
        new_bounds.append(bound + moved)
    return JsonLines(bytes(text), new_bounds, sorted(still_uncertain))


@dataclass(frozen=True)
class JsonValueBatch:
    """Consecutive records of one batch whose values are schemaless JSON, with their lines: record
    ``i``'s line is ``text[bounds[i]:bounds[i + 1]]``. What the writer's batch loop needs of a batch
    (offsets, the value schema (None: schemaless), the record that names a file), and its own rows
    (``batch_rows.BatchRows``): ``append`` writes a run of its lines."""

    topic: str
    partition: int
    offsets: Sequence[int]
    text: bytes
    bounds: Sequence[int]
    timestamps: Callable[[], Sequence[int | None]]  # the Kafka timestamps, read only when a partitioner needs them
    schema = None

    @classmethod
    def run_of(cls, batch: RecordBatch, lines: JsonLines, start: int, stop: int) -> "JsonValueBatch":
        """Records ``start`` to ``stop`` (exclusive) of ``batch``, none of them uncertain."""
        return cls(batch.topic, batch.partition, batch.offsets[start:stop], lines.text,
                   lines.bounds[start:stop + 1], lambda: batch.timestamps()[start:stop])

    def sink_record(self, index: int) -> SinkRecord:
        """The ``index``-th record as the record-by-record path sees it (for naming a file it opens)."""
        raw = KafkaRecord(self.topic, self.partition, self.offsets[index], None, None, None)
        return SinkRecord(raw, ConnectData(None, is_decoded=True))

    def column(self, path: str) -> None:
        return None  # nothing is decoded: no keyer reads values of schemaless JSON

    def append(self, writer: JsonRecordWriter, indexes: Sequence[int]) -> None:
        """Appends the lines of the records at ``indexes`` (in order) to ``writer``; a failed write raises
        ``BlockWriteError`` naming the last of them."""
        bounds = self.bounds
        if isinstance(indexes, range) and indexes.step == 1:
            text, run_bounds = self.text, bounds[indexes.start:indexes.stop + 1]
        else:
            text = b"".join([self.text[bounds[i]:bounds[i + 1]] for i in indexes])
            run_bounds = [0]
            for i in indexes:
                run_bounds.append(run_bounds[-1] + bounds[i + 1] - bounds[i])
        try:
            writer.write_lines(text, run_bounds)
        except Exception as exc:
            raise BlockWriteError(len(indexes) - 1, exc) from exc


class JsonBatchPath:
    """Whether a writer's schemaless JSON batches may take the batch path, and each batch's keys."""

    def __init__(self, keyer: Keyer):
        self._keyer = keyer

    @classmethod
    def for_writer(cls, settings, partitioner, formats) -> "JsonBatchPath | None":
        """The JSON batch path of a writer configured so: JsonFormat values, no keys or headers files, no
        scheduled rotation, a partitioner that does not read values (Default; TimeBased, Daily, Hourly
        with the Wallclock or Record extractor). None otherwise: its records go one by one."""
        keyer = keyer_for(partitioner, avro_values=False)
        if (keyer is not None and isinstance(formats.values, JsonFormat)
                and formats.keys is None and formats.headers is None
                and settings.rotate_schedule_interval_ms <= 0):
            return cls(keyer)
        return None

    def prepare(self, batch: JsonValueBatch, open_schemas: dict, now_ms: int) -> PreparedBatch | None:
        """Where each record of ``batch`` goes (its rows are its lines), if it can be appended to the
        writer's files (``open_schemas``: encoded partition -> schema of each open file) as record by
        record; None when an open file holds data with a schema (a record of it would rotate first)."""
        if any(schema is not None for schema in open_schemas.values()):
            return None
        keys = self._keyer(batch.offsets, batch.timestamps, None, batch.partition, now_ms, _no_columns)
        return None if keys is None else PreparedBatch(keys, batch)


def _no_columns(path: str) -> None:
    return None
