"""What the scanning mixins (``numbers.NumberScanning``, ``strings.StringScanning``) use of the parser they
are mixed into, ``reader._Reader``: its input, position and error makers, declared on their base for the
type checker (which checks ``_Reader``'s definitions against these). At run time the base is ``object``, as
before: nothing here is executed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .errors import JacksonError
    from .reader import _Context

    # A plain class, not a Protocol: mypy takes an attribute a Protocol declares without a value as one its
    # explicit subclasses define, and cannot infer ``self.pos`` where a mixin both reads and sets it.
    class ScanningBase:
        buf: Sequence[int]  # the input: bytes of UTF-8, or UTF-16 code units
        pos: int
        end: int
        utf8: bool
        row: int
        row_start: int
        context: _Context

        def _error(self, message: str, java_class: str = ..., back: int = 0) -> JacksonError: ...

        def _eof(self, detail: str) -> JacksonError: ...

        def _eof_in_token(self) -> JacksonError: ...

        def _unexpected(self, c: int, comment: str | None) -> JacksonError: ...

        def _unexpected_value(self, c: int) -> JacksonError: ...

        def _invalid_initial(self, c: int) -> JacksonError: ...

        def _invalid_other(self, c: int) -> JacksonError: ...

        def _at_end(self) -> bool: ...

        def _next_byte(self) -> int: ...

        def _decode_char_for_error(self, first: int) -> int: ...

        def _match(self, word: str, matched: int = 1) -> None: ...
else:
    ScanningBase = object
