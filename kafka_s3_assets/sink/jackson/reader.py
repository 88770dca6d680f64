"""Jackson's streaming parser driven as ``JsonNodeDeserializer`` drives it (``ObjectMapper.readTree``):
white space, the token stream, containers and their nesting limit, literals, what cannot start a value,
and where each error points (at the character read, at the token's start, or past it, as Jackson 2.21
does)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .chars import char_desc, identifier_part, identifier_start, java_char
from .encodings import decode
from .errors import CONSTRAINTS_EXCEPTION, EOF_EXCEPTION, PARSE_EXCEPTION, SOURCE, JacksonError
from .numbers import NumberScanning, check_big_decimal
from .strings import StringScanning

_VALID_TOKENS = "(JSON String, Number, Array, Object or token 'null', 'true' or 'false')"
_MAX_DEPTH = 1000
_MAX_ERROR_TOKEN_LENGTH = 256


def read_tree(
    data: bytes,
    integer: Callable[[str], Any],
    decimal: Callable[[str], Any],
    obj: Callable[[list[tuple[str, Any]]], Any],
) -> tuple[bool, Any]:
    """Reads the first JSON value of ``data``: (False, None) when there is none (empty or blank), else
    (True, value) where null is None, booleans and strings are themselves, arrays are lists, and
    ``integer(text)``, ``decimal(text)`` (``text`` as written, leading zeros dropped) and
    ``obj(members)`` (names in first-seen order, each with its last value) make the rest."""
    units, utf8, start, decode_error = decode(data)
    return _Reader(units, utf8, start, decode_error, integer, decimal, obj).read()


class _Context:
    """A ``JsonReadContext``: root, array or object, where it started, how many entries it has seen."""

    __slots__ = ("kind", "parent", "index", "row", "column", "depth")

    def __init__(self, kind: str, parent: _Context | None, row: int, column: int):
        self.kind, self.parent, self.row, self.column = kind, parent, row, column
        self.index = -1
        self.depth: int = 0 if parent is None else parent.depth + 1

    def expect_comma(self) -> bool:
        self.index += 1
        return self.kind != "root" and self.index > 0

    @property
    def type_desc(self) -> str:
        return {"root": "root", "array": "Array", "object": "Object"}[self.kind]

    def start_location(self) -> str:
        return SOURCE.format(self.row, self.column)


class _Reader(NumberScanning, StringScanning):
    """Jackson's streaming parser for one input, driven as ``JsonNodeDeserializer`` drives it."""

    def __init__(
        self, units: Sequence[int], utf8: bool, start: int, decode_error: JacksonError | None, integer, decimal, obj
    ):
        self.buf = units
        self._decode_error = decode_error
        self.end = len(units)
        self.pos = start
        self.utf8 = utf8
        self.row = 1
        self.row_start = 0
        self._token_row, self._token_column = 1, 0
        self.token: str | None = None  # Jackson's current token, named in some end-of-input messages
        self.context = _Context("root", None, 1, 0)
        self._integer, self._decimal, self._obj = integer, decimal, obj
        self._pending: tuple[str, Any] | None = None  # a value parsed after a name, for the next token

    # -- errors ------------------------------------------------------------------------------

    def _error(self, message: str, java_class: str = PARSE_EXCEPTION, back: int = 0) -> JacksonError:
        """An error located where the input stands (``back`` characters before: an error about the
        character just read names that character's place)."""
        location = SOURCE.format(self.row, self.pos - back - self.row_start + 1)
        return JacksonError(java_class, f"{message}\n at {location}")

    def _token_error(self, message: str) -> JacksonError:
        """An error located where the current token started."""
        return JacksonError(PARSE_EXCEPTION, f"{message}\n at {SOURCE.format(self._token_row, self._token_column)}")

    def _eof(self, detail: str) -> JacksonError:
        return self._error(f"Unexpected end-of-input{detail}", EOF_EXCEPTION)

    def _eof_in_token(self) -> JacksonError:
        """``_reportInvalidEOF()``: names the current token (``null`` before the first)."""
        return self._eof(f" in {self.token or 'null'}")

    def _unexpected(self, c: int, comment: str | None) -> JacksonError:
        message = f"Unexpected character ({char_desc(c)})"
        return self._error(message + (f": {comment}" if comment is not None else ""), back=1)

    def _invalid_token(self, matched: str) -> JacksonError:
        """``_reportInvalidToken``: the bad token is what was matched plus the identifier characters that
        follow (each consumed, decoded from UTF-8, the first one that is not also consumed)."""
        text = [matched]
        length = len(matched)
        while not self._at_end():
            c = self.buf[self.pos]
            self.pos += 1
            if self.utf8:
                c = self._decode_char_for_error(c)
            if not identifier_part(c):
                break
            text.append(java_char(c & 0xFFFF))
            length += 1
            if length >= _MAX_ERROR_TOKEN_LENGTH:
                text.append("...")
                break
        return self._token_error(f"Unrecognized token '{''.join(text)}': was expecting {_VALID_TOKENS}")

    def _invalid_initial(self, c: int) -> JacksonError:
        return self._error(f"Invalid UTF-8 start byte 0x{c:x}")

    def _invalid_other(self, c: int) -> JacksonError:
        return self._error(f"Invalid UTF-8 middle byte 0x{c & 0xFFFFFFFF:x}")  # Integer.toHexString

    def _invalid_space(self, c: int) -> JacksonError:
        hint = (
            (" (consider enabling `JsonReadFeature.ALLOW_RS_CONTROL_CHAR` to allow use of Record Separators (\\u001E))")
            if c == 0x1E
            else ""
        )
        return self._error(
            f"Illegal character ({char_desc(c)}): only regular white space (\\r, \\n, \\t) is "
            f"allowed between tokens{hint}"
        )

    # -- bytes and characters ----------------------------------------------------------------

    def _at_end(self) -> bool:
        """Whether the input is used up, where Jackson would load more: an error its reader met
        decoding what comes next is raised here."""
        if self.pos < self.end:
            return False
        if self._decode_error is not None:
            raise self._decode_error
        return True

    def _next_byte(self) -> int:
        if self._at_end():
            raise self._eof_in_token()
        c = self.buf[self.pos]
        self.pos += 1
        return c

    def _decode_char_for_error(self, first: int) -> int:
        """``_decodeCharForError``: the code point a UTF-8 sequence starting with ``first`` (already
        consumed) encodes, its continuation bytes consumed and checked."""
        c = first
        if c <= 0x7F:
            return c
        if c & 0xE0 == 0xC0:
            c, needed = c & 0x1F, 1
        elif c & 0xF0 == 0xE0:
            c, needed = c & 0x0F, 2
        elif c & 0xF8 == 0xF0:
            c, needed = c & 0x07, 3
        else:
            raise self._invalid_initial(c)
        for _ in range(needed):
            d = self._next_byte()
            if d & 0xC0 != 0x80:
                raise self._invalid_other(d)
            c = c << 6 | d & 0x3F
        return c

    def _skip_cr(self) -> None:
        if not self._at_end() and self.buf[self.pos] == 0x0A:
            self.pos += 1
        self.row += 1
        self.row_start = self.pos

    def _white_space(self, c: int) -> None:
        """A byte at most a space, between tokens: a line break counts, others but tab fail."""
        if c == 0x20:
            return
        if c == 0x0A:
            self.row += 1
            self.row_start = self.pos
        elif c == 0x0D:
            self._skip_cr()
        elif c != 0x09:
            raise self._invalid_space(c)

    def _comment(self) -> JacksonError:
        return self._unexpected(
            0x2F,
            "maybe a (non-standard) comment? (not recognized as one since Feature "
            "'ALLOW_COMMENTS' not enabled for parser)",
        )

    def _skip_ws_or_end(self) -> int:
        """The next character after white space, or -1 at the end of the input."""
        while not self._at_end():
            c = self.buf[self.pos]
            self.pos += 1
            if c > 0x20:
                if c == 0x2F:
                    raise self._comment()
                return c
            self._white_space(c)
        return -1

    def _skip_ws(self) -> int:
        """The next character after white space, inside an array or object (the end fails)."""
        c = self._skip_ws_or_end()
        if c < 0:
            raise self._error(f"Unexpected end-of-input within/between {self.context.type_desc} entries")
        return c

    def _skip_colon(self) -> int:
        got_colon = False
        while not self._at_end():
            c = self.buf[self.pos]
            self.pos += 1
            if c > 0x20:
                if c == 0x2F:
                    raise self._comment()
                if got_colon:
                    return c
                if c != 0x3A:
                    raise self._unexpected(c, "was expecting a colon to separate field name and value")
                got_colon = True
            else:
                self._white_space(c)
        raise self._eof(f" within/between {self.context.type_desc} entries")

    # -- the token stream --------------------------------------------------------------------

    def read(self) -> tuple[bool, Any]:
        """``ObjectMapper.readTree``: the first token, then the whole value it starts."""
        kind, value = self._next_token()
        if kind is None:
            return False, None
        return True, self._value(kind, value)

    def _value(self, kind: str, value: Any) -> Any:
        """The value a token starts, reading containers to their end (iteratively: 1000 levels)."""
        if kind not in ("START_ARRAY", "START_OBJECT"):
            return self._scalar(kind, value)
        stack: list[tuple[list, str | None]] = [([], None)]
        kinds = [kind]
        while True:
            token, value = self._next_token()
            assert token is not None  # in a container the end of the input raises (_next_token), never None
            items, name = stack[-1]
            if token == "FIELD_NAME":
                stack[-1] = (items, value)
                continue
            if token in ("END_ARRAY", "END_OBJECT"):
                done = items if kinds[-1] == "START_ARRAY" else self._obj(items)
                stack.pop()
                kinds.pop()
                if not stack:
                    return done
                self._add(stack[-1], kinds[-1], done)
                continue
            if token in ("START_ARRAY", "START_OBJECT"):
                stack.append(([], None))
                kinds.append(token)
                continue
            self._add(stack[-1], kinds[-1], self._scalar(token, value))

    @staticmethod
    def _add(entry: tuple[list, str | None], kind: str, value: Any) -> None:
        items, name = entry
        items.append(value if kind == "START_ARRAY" else (name, value))

    def _scalar(self, kind: str, value: Any) -> Any:
        if kind == "VALUE_STRING":
            return self._finish_string()
        if kind == "VALUE_NUMBER_INT":
            return self._integer(value)
        if kind == "VALUE_NUMBER_FLOAT":
            check_big_decimal(value)
            return self._decimal(value)
        return {"VALUE_TRUE": True, "VALUE_FALSE": False, "VALUE_NULL": None}[kind]

    def _next_token(self) -> tuple[str | None, Any]:
        if self._pending is not None:  # the value after a name, parsed with the name
            kind, value = self._pending
            self._pending = None
            if kind == "START_ARRAY":
                self._open("array")
            elif kind == "START_OBJECT":
                self._open("object")
            self.token = kind
            return kind, value
        c = self._skip_ws_or_end()
        if c < 0:
            if self.context.kind != "root":
                kind = "Array" if self.context.kind == "array" else "Object"
                raise self._eof(f": expected close marker for {kind} (start marker at {self.context.start_location()})")
            return None, None
        self._token_row, self._token_column = self.row, self.pos - self.row_start  # where the token starts
        if c in (0x5D, 0x7D):
            return self._close(c)
        if self.context.expect_comma():
            if c != 0x2C:
                raise self._unexpected(c, f"was expecting comma to separate {self.context.type_desc} entries")
            c = self._skip_ws()
        if self.context.kind != "object":
            self._token_row, self._token_column = self.row, self.pos - self.row_start
            kind, value = self._value_token(c)
            self.token = kind
            return kind, value
        name = self._parse_name(c)
        self.token = "FIELD_NAME"
        c = self._skip_colon()
        self._token_row, self._token_column = self.row, self.pos - self.row_start
        if c == 0x22:
            self._pending = ("VALUE_STRING", None)
        else:
            self._pending = self._value_token(c, after_name=True)
        return "FIELD_NAME", name

    def _open(self, kind: str) -> None:
        self.context = _Context(kind, self.context, self._token_row, self._token_column)
        if self.context.depth > _MAX_DEPTH:
            raise JacksonError(
                CONSTRAINTS_EXCEPTION,
                f"Document nesting depth ({self.context.depth}) exceeds the "
                f"maximum allowed ({_MAX_DEPTH}, from "
                f"`StreamReadConstraints.getMaxNestingDepth()`)",
            )

    def _close(self, c: int) -> tuple[str, None]:
        closing, opening = ("array", "object") if c == 0x5D else ("object", "array")
        if self.context.kind != closing:
            if self.context.kind == "root":
                raise self._error(
                    f"Unexpected close marker '{chr(c)}': no open {closing.capitalize()} to close", back=1
                )
            raise self._error(
                f"Unexpected close marker '{chr(c)}': expected '{']' if c == 0x7D else '}'}' "
                f"(for {opening.capitalize()} starting at {self.context.start_location()})",
                back=1,
            )
        parent = self.context.parent
        assert parent is not None  # only the root has none, and the root is never closed (refused above)
        self.context = parent
        self.token = "END_ARRAY" if c == 0x5D else "END_OBJECT"
        return self.token, None

    def _value_token(self, c: int, after_name: bool = False) -> tuple[str, Any]:
        """The token a value starts with ``c`` (numbers and literals read whole, strings later)."""
        if c == 0x22:
            return "VALUE_STRING", None
        if c == 0x7D and not after_name and not self.utf8:  # the reader-based parser's own case for "}"
            raise self._unexpected(c, "expected a value")
        if c == 0x5B:
            if not after_name:
                self._open("array")
            return "START_ARRAY", None
        if c == 0x7B:
            if not after_name:
                self._open("object")
            return "START_OBJECT", None
        if c == 0x74:
            self._match("true")
            return "VALUE_TRUE", None
        if c == 0x66:
            self._match("false")
            return "VALUE_FALSE", None
        if c == 0x6E:
            self._match("null")
            return "VALUE_NULL", None
        if c == 0x2D:
            return self._number(negative=True) if self.utf8 else self._number_in_chars(negative=True)
        if 0x30 <= c <= 0x39:
            return self._number(negative=False, first=c) if self.utf8 else self._number_in_chars(negative=False)
        raise self._unexpected_value(c)

    def _unexpected_value(self, c: int) -> JacksonError:
        """``_handleUnexpectedValue``: what cannot start a value."""
        if self.utf8 and (c == 0x5D and self.context.kind == "array" or c in (0x2C, 0x7D)):
            return self._unexpected(c, "expected a value")
        if c == 0x4E:
            self._match("NaN", 1)
            return self._error("Non-standard token 'NaN': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow")
        if c == 0x49:
            self._match("Infinity", 1)
            return self._error(
                "Non-standard token 'Infinity': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow"
            )
        if c == 0x2B:
            if self._at_end():
                return self._eof(" in a Number value")
            c2 = self.buf[self.pos]
            self.pos += 1
            return self._invalid_number_start(c2, negative=False, signed=True)
        if identifier_start(c):
            return self._invalid_token(java_char(c & 0xFFFF))
        return self._unexpected(c, f"expected a valid value {_VALID_TOKENS}")

    def _match(self, word: str, matched: int = 1) -> None:
        """``_matchToken``: the rest of ``word`` must follow, and then no identifier character."""
        for i in range(matched, len(word)):
            if self._at_end() or self.buf[self.pos] != ord(word[i]):
                raise self._invalid_token(word[:i])
            self.pos += 1
        if self._at_end():
            return
        c = self.buf[self.pos]
        if c >= 0x30 and c not in (0x5D, 0x7D):
            if self.utf8:  # decoded from where the pointer is: its first byte read again as a continuation
                c = self._decode_char_for_error(c)
            if identifier_part(c):
                raise self._invalid_token(word)
