"""Reading JSON bytes exactly as Kafka's ``JsonDeserializer`` reads them: Jackson's ``ObjectMapper.readTree``
with ``ALLOW_LEADING_ZEROS_FOR_NUMBERS`` and ``USE_BIG_DECIMAL_FOR_FLOATS`` and no other feature.

This is the record-by-record path's answer for every value Python's ``json`` does not read the same way
(``schemaless_json``): errors, and what Jackson accepts beyond strict JSON. It follows Jackson's parser
(``UTF8StreamJsonParser``, or ``ReaderBasedJsonParser`` for UTF-16 and UTF-32 text) step by step, so it
accepts and refuses the same inputs and fails with the same exception and message, location included:

* the encoding is detected from the first bytes (UTF-8 with or without its byte order mark, UTF-16 and
  UTF-32 of either order, with or without a mark); UTF-8 in strings is decoded leniently as Jackson
  decodes it (overlong forms read, code points past U+10FFFF folded into surrogates, encoded surrogates
  refused), and UTF-16 is decoded as Java's ``InputStreamReader`` does (malformed units become U+FFFD);
* only the first value is read: anything after it is ignored, but for a top-level number, which must be
  followed by white space (``1x`` fails, ``{"a":1}x`` and ``1 x`` read), and ``true``, ``false`` and
  ``null``, which must not run into a letter or digit; empty or blank input is no value at all (None);
* numbers may have leading zeros (``007`` reads 7); ``NaN``, ``Infinity``, a leading ``+`` or ``.``, a
  trailing ``.``, comments, single quotes, unquoted names and trailing commas are refused;
* limits: 1000 levels of nesting, 1000 digits in a number, 50000 characters in a name, 20000000 in a
  string; a float must make a ``java.math.BigDecimal`` (its exponent within int range);
* an object's repeated name keeps its first place and takes its last value.

Values come out through the callbacks of ``read_tree``, so the caller decides what numbers and objects
become (``schemaless_json`` makes Kafka Connect's values of them). Errors are ``JacksonError``: the Java
exception's class and ``getMessage()``.
"""

from __future__ import annotations

import unicodedata
from typing import Any, Callable, Sequence

_SOURCE = "[Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: {}, column: {}]"
_VALID_TOKENS = "(JSON String, Number, Array, Object or token 'null', 'true' or 'false')"
_MAX_DEPTH = 1000
_MAX_NUMBER_LENGTH = 1000
_MAX_NAME_LENGTH = 50000
_MAX_STRING_LENGTH = 20_000_000
_MAX_ERROR_TOKEN_LENGTH = 256
_MAX_NUMBER_IN_ERROR = 1000
_READER_CHUNK = 4000  # characters a Java reader hands Jackson's parser at a time
_FAST_BIG_DECIMAL_LENGTH = 500  # from this length on, Jackson parses a BigDecimal with FastDoubleParser

PARSE_EXCEPTION = "com.fasterxml.jackson.core.JsonParseException"
EOF_EXCEPTION = "com.fasterxml.jackson.core.io.JsonEOFException"
CONSTRAINTS_EXCEPTION = "com.fasterxml.jackson.core.exc.StreamConstraintsException"
NUMBER_FORMAT_EXCEPTION = "java.lang.NumberFormatException"
CHAR_CONVERSION_EXCEPTION = "java.io.CharConversionException"


class JacksonError(Exception):
    """What Jackson throws for the input: the Java exception class and its message."""

    def __init__(self, java_class: str, message: str):
        super().__init__(f"{java_class}: {message}")
        self.java_class = java_class
        self.message = message


def read_tree(data: bytes, integer: Callable[[str], Any], decimal: Callable[[str], Any],
              obj: Callable[[list[tuple[str, Any]]], Any]) -> tuple[bool, Any]:
    """Reads the first JSON value of ``data``: (False, None) when there is none (empty or blank), else
    (True, value) where null is None, booleans and strings are themselves, arrays are lists, and
    ``integer(text)``, ``decimal(text)`` (``text`` as written, leading zeros dropped) and
    ``obj(members)`` (names in first-seen order, each with its last value) make the rest."""
    units, utf8, start, decode_error = _decode(data)
    return _Reader(units, utf8, start, decode_error, integer, decimal, obj).read()


# -- encodings ------------------------------------------------------------------------------------

def _decode(data: bytes) -> tuple[Sequence[int], bool, int, JacksonError | None]:
    """The input as Jackson's bootstrapper sees it: (units, is UTF-8 bytes, where parsing starts, an error
    to raise where the parser reads past the units). UTF-16 and UTF-32 are decoded to UTF-16 code units
    (Java's readers)."""
    if len(data) >= 4:
        quad = int.from_bytes(data[:4], "big")
        if quad == 0x0000FEFF:
            return _chars(_utf32(data, 4, "big"))
        if quad == 0xFFFE0000:
            return _chars(_utf32(data, 4, "little"))
        if quad in (0x0000FFFE, 0xFEFF0000):
            raise JacksonError(CHAR_CONVERSION_EXCEPTION, "Unsupported UCS-4 endianness ({}) detected".format(
                "2143" if quad == 0x0000FFFE else "3412"))
        if quad >> 16 == 0xFEFF:
            return _utf16(data[2:], "big"), False, 0, None
        if quad >> 16 == 0xFFFE:
            return _utf16(data[2:], "little"), False, 0, None
        if quad >> 8 == 0xEFBBBF:
            return data, True, 3, None
        if quad >> 8 == 0:
            return _chars(_utf32(data, 0, "big"))
        if quad & 0x00FFFFFF == 0:
            return _chars(_utf32(data, 0, "little"))
        if quad & ~0x00FF0000 & 0xFFFFFFFF == 0:
            raise JacksonError(CHAR_CONVERSION_EXCEPTION, "Unsupported UCS-4 endianness (3412) detected")
        if quad & ~0x0000FF00 & 0xFFFFFFFF == 0:
            raise JacksonError(CHAR_CONVERSION_EXCEPTION, "Unsupported UCS-4 endianness (2143) detected")
        pair = quad >> 16
    elif len(data) >= 2:
        pair = int.from_bytes(data[:2], "big")
    else:
        return data, True, 0, None
    if pair & 0xFF00 == 0:
        return _utf16(data, "big"), False, 0, None
    if pair & 0x00FF == 0:
        return _utf16(data, "little"), False, 0, None
    return data, True, 0, None


def _chars(decoded: tuple[list[int], JacksonError | None]) -> tuple[list[int], bool, int, JacksonError | None]:
    return decoded[0], False, 0, decoded[1]


def _utf16(data: bytes, order: str) -> list[int]:
    """UTF-16 code units as Java's decoder yields them: a high surrogate with anything but a low one after
    it becomes one U+FFFD (both units), as does a lone low surrogate; at the end, a high surrogate and
    a dangling byte become one U+FFFD together."""
    units = [int.from_bytes(data[i:i + 2], order) for i in range(0, len(data) - 1, 2)]
    out: list[int] = []
    i = 0
    while i < len(units):
        unit = units[i]
        if 0xD800 <= unit < 0xDC00:
            if i + 1 >= len(units):  # the last unit: with a dangling byte, if any, one malformed sequence
                out.append(0xFFFD)
                return out
            out += (unit, units[i + 1]) if 0xDC00 <= units[i + 1] < 0xE000 else (0xFFFD,)
            i += 2
        else:
            out.append(0xFFFD if 0xDC00 <= unit < 0xE000 else unit)
            i += 1
    if len(data) % 2:
        out.append(0xFFFD)
    return out


def _utf32(data: bytes, skip: int, order: str) -> tuple[list[int], JacksonError | None]:
    """UTF-32 as Jackson's own ``UTF32Reader`` decodes it (to UTF-16 code units): a code point past
    U+10FFFF fails (reported less 0x10000), surrogate code points pass, trailing bytes fail. The reader
    hands the parser 4000 characters at a time, so an error is raised only when the parser asks for the
    chunk it is in: returned are the units before that chunk and the error."""
    out: list[int] = []
    for at in range(skip, len(data) - 3, 4):
        code = int.from_bytes(data[at:at + 4], order)
        if code > 0xFFFF:
            if code > 0x10FFFF:
                error = JacksonError(CHAR_CONVERSION_EXCEPTION, f"Invalid UTF-32 character 0x{code - 0x10000:x} (above "
                                                                f"0x0010ffff) at char #{len(out)}, byte #{at + 3})")
                return out[:len(out) - len(out) % _READER_CHUNK], error
            code -= 0x10000
            out += (0xD800 | code >> 10, 0xDC00 | code & 0x3FF)
        else:
            out.append(code)
    left = (len(data) - skip) % 4
    if left:
        return out, JacksonError(CHAR_CONVERSION_EXCEPTION, f"Unexpected EOF in the middle of a 4-byte UTF-32 "
                                                            f"char: got {left}, needed 4, at char #{len(out)}, "
                                                            f"byte #{left})")
    return out, None


# -- Java's character classes (for what Jackson shows of a bad token) -------------------------------

def _is_control(c: int) -> bool:
    return c < 0x20 or 0x7F <= c <= 0x9F


def _char_desc(c: int) -> str:
    """``ParserMinimalBase._getCharDesc(c)``: the character ``(char) c`` and the code as given (negative
    for a byte Jackson read signed)."""
    char = c & 0xFFFF
    if _is_control(char):
        return f"(CTRL-CHAR, code {c})"
    if c > 255:
        return f"'{_java_char(char)}' (code {c} / 0x{c:x})"
    return f"'{_java_char(char)}' (code {c})"


def _java_char(c: int) -> str:
    return chr(c)  # a lone surrogate stays one (it is written out with "surrogatepass")


def _identifier_start(c: int) -> bool:
    """``Character.isJavaIdentifierStart((char) c)``: letters, letter numbers, currency symbols,
    connector punctuation (Unicode categories as Python's tables have them)."""
    c &= 0xFFFF
    if c < 0x80:
        return chr(c).isalpha() or c in (0x24, 0x5F)
    category = unicodedata.category(chr(c))
    return category[0] == "L" or category in ("Nl", "Sc", "Pc")


def _identifier_part(c: int) -> bool:
    """``Character.isJavaIdentifierPart((char) c)``: an identifier start, a digit, a mark, or an
    identifier-ignorable character (most controls, format characters)."""
    c &= 0xFFFF
    if c < 0x80:
        return chr(c).isalnum() or c in (0x24, 0x5F) or c <= 0x08 or 0x0E <= c <= 0x1B or c == 0x7F
    if 0x80 <= c <= 0x9F:
        return True
    category = unicodedata.category(chr(c))
    return category[0] == "L" or category in ("Nl", "Sc", "Pc", "Nd", "Mc", "Mn", "Cf")


_HEX = {c: int(chr(c), 16) for c in b"0123456789abcdefABCDEF"}
_ESCAPES = {ord("b"): 0x08, ord("t"): 0x09, ord("n"): 0x0A, ord("f"): 0x0C, ord("r"): 0x0D,
            ord('"'): 0x22, ord("/"): 0x2F, ord("\\"): 0x5C}


class _Context:
    """A ``JsonReadContext``: root, array or object, where it started, how many entries it has seen."""

    __slots__ = ("kind", "parent", "index", "row", "column", "depth")

    def __init__(self, kind: str, parent: "_Context | None", row: int, column: int):
        self.kind, self.parent, self.row, self.column = kind, parent, row, column
        self.index = -1
        self.depth = 0 if parent is None else parent.depth + 1

    def expect_comma(self) -> bool:
        self.index += 1
        return self.kind != "root" and self.index > 0

    @property
    def type_desc(self) -> str:
        return {"root": "root", "array": "Array", "object": "Object"}[self.kind]

    def start_location(self) -> str:
        return _SOURCE.format(self.row, self.column)


class _Reader:
    """Jackson's streaming parser for one input, driven as ``JsonNodeDeserializer`` drives it."""

    def __init__(self, units: Sequence[int], utf8: bool, start: int, decode_error: JacksonError | None,
                 integer, decimal, obj):
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
        location = _SOURCE.format(self.row, self.pos - back - self.row_start + 1)
        return JacksonError(java_class, f"{message}\n at {location}")

    def _token_error(self, message: str) -> JacksonError:
        """An error located where the current token started."""
        return JacksonError(PARSE_EXCEPTION, f"{message}\n at {_SOURCE.format(self._token_row, self._token_column)}")

    def _eof(self, detail: str) -> JacksonError:
        return self._error(f"Unexpected end-of-input{detail}", EOF_EXCEPTION)

    def _eof_in_token(self) -> JacksonError:
        """``_reportInvalidEOF()``: names the current token (``null`` before the first)."""
        return self._eof(f" in {self.token or 'null'}")

    def _unexpected(self, c: int, comment: str | None) -> JacksonError:
        message = f"Unexpected character ({_char_desc(c)})"
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
            if not _identifier_part(c):
                break
            text.append(_java_char(c & 0xFFFF))
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
        hint = (" (consider enabling `JsonReadFeature.ALLOW_RS_CONTROL_CHAR` to allow use of Record Separators "
                "(\\u001E))") if c == 0x1E else ""
        return self._error(f"Illegal character ({_char_desc(c)}): only regular white space (\\r, \\n, \\t) is "
                           f"allowed between tokens{hint}")

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
        return self._unexpected(0x2F, "maybe a (non-standard) comment? (not recognized as one since Feature "
                                      "'ALLOW_COMMENTS' not enabled for parser)")

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
            _check_big_decimal(value)
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
                raise self._eof(f": expected close marker for {kind} (start marker at "
                                f"{self.context.start_location()})")
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
            raise JacksonError(CONSTRAINTS_EXCEPTION, f"Document nesting depth ({self.context.depth}) exceeds the "
                                                      f"maximum allowed ({_MAX_DEPTH}, from "
                                                      f"`StreamReadConstraints.getMaxNestingDepth()`)")

    def _close(self, c: int) -> tuple[str, None]:
        closing, opening = ("array", "object") if c == 0x5D else ("object", "array")
        if self.context.kind != closing:
            if self.context.kind == "root":
                raise self._error(f"Unexpected close marker '{chr(c)}': no open {closing.capitalize()} to close",
                                  back=1)
            raise self._error(f"Unexpected close marker '{chr(c)}': expected '{']' if c == 0x7D else '}'}' "
                              f"(for {opening.capitalize()} starting at {self.context.start_location()})", back=1)
        self.context = self.context.parent
        self.token = "END_ARRAY" if c == 0x5D else "END_OBJECT"
        return self.token, None

    def _value_token(self, c: int, after_name: bool = False) -> tuple[str, Any]:
        """The token a value starts with ``c`` (numbers and literals read whole, strings later)."""
        if c == 0x22:
            return "VALUE_STRING", None
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
            return self._error("Non-standard token 'Infinity': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` "
                               "to allow")
        if c == 0x2B:
            if self._at_end():
                return self._eof(" in a Number value")
            c2 = self.buf[self.pos]
            self.pos += 1
            return self._invalid_number_start(c2, negative=False, signed=True)
        if _identifier_start(c):
            return self._invalid_token(_java_char(c & 0xFFFF))
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
            if _identifier_part(c):
                raise self._invalid_token(word)

    # -- numbers -----------------------------------------------------------------------------

    def _invalid_number_start(self, c: int, negative: bool, signed: bool) -> JacksonError:
        if c == 0x49:
            if self._at_end():
                return self._eof(" in a Number value")
            c = self.buf[self.pos]
            self.pos += 1
            if self.utf8 and c >= 0x80:
                c -= 0x100  # this byte Jackson reads signed
            if c in (0x4E, 0x6E):
                sign = "-" if negative else "+"
                word = sign + ("INF" if c == 0x4E else "Infinity")
                self._match(word, 3)
                return self._error(f"Non-standard token '{word}': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` "
                                   f"to allow")
        if signed and not negative:
            return self._number_char(0x2B, "JSON spec does not allow numbers to have plus signs: enable "
                                           "`JsonReadFeature.ALLOW_LEADING_PLUS_SIGN_FOR_NUMBERS` to allow")
        comment = ("expected digit (0-9) to follow minus sign, for valid numeric value" if negative
                   else "expected digit (0-9) for valid numeric value")
        return self._number_char(c, comment)

    def _number_char(self, c: int, comment: str) -> JacksonError:
        return self._error(f"Unexpected character ({_char_desc(c)}) in numeric value: {comment}", back=1)

    def _skip_leading_zeros(self) -> int:
        """After a first ``0``: the digit the number goes on with (zeros skipped), or ``0``."""
        if self._at_end():
            return 0x30
        c = self.buf[self.pos]
        if not 0x30 <= c <= 0x39:
            return 0x30
        self.pos += 1
        if c == 0x30:
            while not self._at_end():
                c = self.buf[self.pos]
                if not 0x30 <= c <= 0x39:
                    return 0x30
                self.pos += 1
                if c != 0x30:
                    break
        return c

    def _number(self, negative: bool, first: int | None = None) -> tuple[str, str]:
        if negative:
            if self._at_end():
                raise self._eof_in_token()
            c = self.buf[self.pos]
            self.pos += 1
            if c <= 0x30:
                if c != 0x30:
                    if c == 0x2E:  # "-.5": a leading point is not allowed
                        raise self._unexpected_value(0x2E)
                    raise self._invalid_number_start(c, negative=True, signed=True)
                c = self._skip_leading_zeros()
            elif c > 0x39:
                raise self._invalid_number_start(c, negative=True, signed=True)
        else:
            c = first
            if c == 0x30:
                c = self._skip_leading_zeros()
        digits = [c]
        while True:
            if self._at_end():
                return self._integer_token(negative, digits, at_end=True)
            c = self.buf[self.pos]
            self.pos += 1
            if not 0x30 <= c <= 0x39:
                break
            digits.append(c)
        if c == 0x2E or c | 0x20 == 0x65:
            return self._float_token(negative, digits, c)
        self.pos -= 1
        return self._integer_token(negative, digits, at_end=False, following=c)

    def _integer_token(self, negative: bool, digits: list[int], at_end: bool, following: int = -1) -> tuple[str, str]:
        if not at_end and self.context.kind == "root":
            self._root_space(following)
        if len(digits) > _MAX_NUMBER_LENGTH:
            raise _number_too_long(len(digits))
        return "VALUE_NUMBER_INT", ("-" if negative else "") + bytes(digits).decode("ascii")

    def _float_token(self, negative: bool, digits: list[int], c: int) -> tuple[str, str]:
        int_length = len(digits)
        text = list(digits)
        fraction_length = exponent_length = 0
        at_end = False
        if c == 0x2E:
            text.append(c)
            while True:
                if self._at_end():
                    at_end = True
                    break
                c = self.buf[self.pos]
                self.pos += 1
                if not 0x30 <= c <= 0x39:
                    break
                fraction_length += 1
                text.append(c)
            if fraction_length == 0:
                raise self._number_char(c, "Decimal point not followed by a digit")
        if c | 0x20 == 0x65:
            text.append(c)
            c = self._next_byte_or_eof()
            if c in (0x2D, 0x2B):
                text.append(c)
                c = self._next_byte_or_eof()
            while 0x30 <= c <= 0x39:
                exponent_length += 1
                text.append(c)
                if self._at_end():
                    at_end = True
                    break
                c = self.buf[self.pos]
                self.pos += 1
            if exponent_length == 0:
                raise self._number_char(c, "Exponent indicator not followed by a digit")
        if not at_end:
            self.pos -= 1
            if self.context.kind == "root":
                self._root_space(c)
        length = int_length + fraction_length + exponent_length
        if length > _MAX_NUMBER_LENGTH:
            raise _number_too_long(length)
        return "VALUE_NUMBER_FLOAT", ("-" if negative else "") + bytes(text).decode("ascii")

    # Numbers of UTF-16 and UTF-32 text (Jackson's ``ReaderBasedJsonParser`` reads them its own way).

    def _number_in_chars(self, negative: bool) -> tuple[str, str]:
        """A scan of the number that stores its position only at a few points (its errors are located
        there) and, on a leading zero or at the end of the input, starts again with the careful
        ``_number_in_chars_again``, whose messages differ."""
        buf, end = self.buf, self.end
        ptr = self.pos
        start = ptr - 1  # the sign, or the first digit
        if negative:
            if ptr >= end:
                return self._number_in_chars_again(True, start)
            c = buf[ptr]
            ptr += 1
            if not 0x30 <= c <= 0x39:
                self.pos = ptr
                if c == 0x2E:
                    raise self._unexpected_value(0x2E)
                raise self._invalid_number_start(c, negative=True, signed=True)
            if c == 0x30:
                return self._number_in_chars_again(True, start)
        elif buf[start] == 0x30:
            return self._number_in_chars_again(False, start)
        int_length = 1
        while True:
            if ptr >= end:
                return self._number_in_chars_again(negative, start)
            c = buf[ptr]
            ptr += 1
            if not 0x30 <= c <= 0x39:
                break
            int_length += 1
        if c in (0x2E, 0x45, 0x65):
            self.pos = ptr
            fraction = exponent = 0
            if c == 0x2E:
                while True:
                    if ptr >= end:
                        return self._number_in_chars_again(negative, start)
                    c = buf[ptr]
                    ptr += 1
                    if not 0x30 <= c <= 0x39:
                        break
                    fraction += 1
                if fraction == 0:
                    raise self._number_char(c, "Decimal point not followed by a digit")
            if c in (0x45, 0x65):
                if ptr >= end:
                    return self._number_in_chars_again(negative, start)
                c = buf[ptr]
                ptr += 1
                if c in (0x2B, 0x2D):
                    if ptr >= end:
                        return self._number_in_chars_again(negative, start)
                    c = buf[ptr]
                    ptr += 1
                while 0x30 <= c <= 0x39:
                    exponent += 1
                    if ptr >= end:
                        return self._number_in_chars_again(negative, start)
                    c = buf[ptr]
                    ptr += 1
                if exponent == 0:
                    raise self._number_char(c, "Exponent indicator not followed by a digit")
            self.pos = ptr - 1
            if self.context.kind == "root":
                self._root_space(c)
            return self._number_text("VALUE_NUMBER_FLOAT", int_length + fraction + exponent, buf[start:ptr - 1])
        self.pos = ptr - 1
        if self.context.kind == "root":
            self._root_space(c)
        return self._number_text("VALUE_NUMBER_INT", int_length, buf[start:ptr - 1])

    def _number_in_chars_again(self, negative: bool, start: int) -> tuple[str, str]:
        buf, end = self.buf, self.end
        self.pos = start + 1 if negative else start
        text = [0x2D] if negative else []
        if self._at_end():
            raise self._eof("No digit following sign")
        c = buf[self.pos]
        self.pos += 1
        if c == 0x30:
            c = self._skip_leading_zeros()
        int_length = 0
        at_end = False
        while 0x30 <= c <= 0x39:
            int_length += 1
            text.append(c)
            if self._at_end():
                c, at_end = 0, True
                break
            c = buf[self.pos]
            self.pos += 1
        if int_length == 0:
            raise self._invalid_number_start(c, negative, signed=False)
        fraction = exponent = -1  # -1: no such part (and so counted in the float's length)
        if c == 0x2E:
            fraction = 0
            text.append(c)
            while True:
                if self._at_end():
                    at_end = True
                    break
                c = buf[self.pos]
                self.pos += 1
                if not 0x30 <= c <= 0x39:
                    break
                fraction += 1
                text.append(c)
            if fraction == 0:
                raise self._number_char(c, "Decimal point not followed by a digit")
        if c in (0x45, 0x65):
            exponent = 0
            text.append(c)
            if self._at_end():
                raise self._eof("expected a digit for number exponent")
            c = buf[self.pos]
            self.pos += 1
            if c in (0x2B, 0x2D):
                text.append(c)
                if self._at_end():
                    raise self._eof("expected a digit for number exponent")
                c = buf[self.pos]
                self.pos += 1
            while 0x30 <= c <= 0x39:
                exponent += 1
                text.append(c)
                if self._at_end():
                    at_end = True
                    break
                c = buf[self.pos]
                self.pos += 1
            if exponent == 0:
                raise self._number_char(c, "Exponent indicator not followed by a digit")
        if not at_end:
            self.pos -= 1
            if self.context.kind == "root":
                self._root_space(c)
        if fraction < 0 and exponent < 0:
            return self._number_text("VALUE_NUMBER_INT", int_length, text)
        return self._number_text("VALUE_NUMBER_FLOAT", int_length + fraction + exponent, text)

    @staticmethod
    def _number_text(kind: str, length: int, units: Sequence[int]) -> tuple[str, str]:
        if length > _MAX_NUMBER_LENGTH:
            raise _number_too_long(length)
        return kind, "".join(map(chr, units))

    def _next_byte_or_eof(self) -> int:
        if self._at_end():
            raise self._eof_in_token()
        c = self.buf[self.pos]
        self.pos += 1
        return c

    def _root_space(self, c: int) -> None:
        """``_verifyRootSpace``: a top-level number must be followed by white space."""
        self.pos += 1
        if c == 0x0D:
            self.pos -= 1
            return
        if c == 0x0A:
            self.row += 1
            self.row_start = self.pos
            return
        if c not in (0x20, 0x09):
            raise self._unexpected(c, "Expected space separating root-level values")

    # -- strings and names -------------------------------------------------------------------

    def _escape(self) -> int:
        """The character a backslash escape stands for (the backslash consumed)."""
        if self._at_end():
            raise self._eof(" in character escape sequence")
        c = self.buf[self.pos]
        self.pos += 1
        mapped = _ESCAPES.get(c)
        if mapped is not None:
            return mapped
        if c != 0x75:
            if self.utf8:
                c = self._decode_char_for_error(c) & 0xFFFF  # (char)
            raise self._error(f"Unrecognized character escape {_char_desc(c)}", back=1)
        value = 0
        for _ in range(4):
            if self._at_end():
                raise self._eof(" in character escape sequence")
            c = self.buf[self.pos]
            self.pos += 1
            digit = _HEX.get(c & 0xFF)  # CharTypes.charToHex masks: a UTF-16 unit counts by its low byte
            if digit is None:
                raise self._unexpected(c & 0xFF if self.utf8 else c, "expected a hex-digit for character escape "
                                                                     "sequence")
            value = value << 4 | digit
        return value

    def _eof_name(self) -> JacksonError:
        return self._eof(" in field name")

    def _finish_string(self) -> str:
        """The text of a string value whose opening quote was read."""
        out: list[int] = []
        buf = self.buf
        while True:
            if self._at_end():
                if self.utf8:
                    raise self._eof_in_token()
                raise self._eof(": was expecting closing quote for a string value")
            c = buf[self.pos]
            self.pos += 1
            if c == 0x22:
                break
            if c == 0x5C:
                out.append(self._escape())
            elif c < 0x20:
                raise self._error(f"Illegal unquoted character ({_char_desc(c)}): has to be escaped using "
                                  f"backslash to be included in string value", back=1)
            elif c >= 0x80 and self.utf8:
                self._utf8_char(c, out)
            else:
                out.append(c)
        if len(out) > _MAX_STRING_LENGTH:
            raise JacksonError(CONSTRAINTS_EXCEPTION, f"String value length ({len(out)}) exceeds the maximum "
                                                      f"allowed ({_MAX_STRING_LENGTH}, from "
                                                      f"`StreamReadConstraints.getMaxStringLength()`)")
        return _text(out)

    def _utf8_char(self, c: int, out: list[int]) -> None:
        """A multi-byte UTF-8 character of a string value (first byte ``c`` consumed), as UTF-16 units."""
        if c & 0xE0 == 0xC0:
            d = self._next_byte()
            if d & 0xC0 != 0x80:
                raise self._invalid_other(d)
            out.append((c & 0x1F) << 6 | d & 0x3F)
        elif c & 0xF0 == 0xE0:
            value = c & 0x0F
            for _ in range(2):
                d = self._next_byte()
                if d & 0xC0 != 0x80:
                    raise self._invalid_other(d)
                value = value << 6 | d & 0x3F
            if 0xD800 <= value <= 0xDFFF:
                raise self._error(f"Invalid UTF-8: Illegal surrogate character 0x{value:x}")
            out.append(value)
        elif c & 0xF8 == 0xF0:
            value = c & 0x07
            for _ in range(3):
                d = self._next_byte()
                if d & 0xC0 != 0x80:
                    raise self._invalid_other(d)
                value = value << 6 | d & 0x3F
            value -= 0x10000  # past U+10FFFF (or overlong) this folds into odd surrogates, as in Jackson
            out.append((0xD800 | value >> 10) & 0xFFFF)
            out.append(0xDC00 | value & 0x3FF)
        else:
            raise self._invalid_initial(c)

    def _parse_name(self, c: int) -> str:
        """A member name (``c``, its opening quote, read). Jackson collects a name's bytes to the closing
        quote (escaped characters put in as UTF-8) and decodes them only then (``_decode_name``)."""
        if c != 0x22:
            if self.utf8:
                c = self._decode_char_for_error(c) & 0xFFFF  # (char)
            raise self._unexpected(c, "was expecting double-quote to start field name")
        raw = bytearray()
        units: list[int] = []
        buf = self.buf
        if self._at_end():  # the UTF-8 parser says so when the name has not begun
            raise self._eof(": was expecting closing '\"' for name") if self.utf8 else self._eof_name()
        while True:
            if self._at_end():
                raise self._eof_name()
            c = buf[self.pos]
            self.pos += 1
            if c == 0x22:
                break
            if c == 0x5C:
                c = self._escape()
                if 0xD800 <= c < 0xE000 and self.utf8:  # checked in UTF-8 names only (not in values)
                    c = self._escaped_pair(c)
                if not self.utf8:
                    units.append(c)
                elif c < 0x80:
                    raw.append(c)
                elif c < 0x800:
                    raw += bytes((0xC0 | c >> 6, 0x80 | c & 0x3F))
                elif c < 0x10000:
                    raw += bytes((0xE0 | c >> 12, 0x80 | c >> 6 & 0x3F, 0x80 | c & 0x3F))
                else:
                    raw += chr(c).encode("utf-8")
            elif c < 0x20:
                raise self._error(f"Illegal unquoted character ({_char_desc(c)}): has to be escaped using "
                                  f"backslash to be included in name", back=1)
            elif self.utf8:
                raw.append(c)
            else:
                units.append(c)
        if self.utf8:
            units = self._decode_name(bytes(raw))
        if len(units) > _MAX_NAME_LENGTH:
            raise JacksonError(CONSTRAINTS_EXCEPTION, f"Name length ({len(units)}) exceeds the maximum allowed "
                                                      f"({_MAX_NAME_LENGTH}, from "
                                                      f"`StreamReadConstraints.getMaxNameLength()`)")
        return _text(units)

    def _escaped_pair(self, high: int) -> int:
        """The code point of an escaped surrogate pair in a name (the high half read): anything else fails."""
        if high >= 0xDC00:
            raise self._error(f"Unexpected low surrogate in field name: 0x{high:x}")
        if self._at_end():
            raise self._eof_name()
        c = self.buf[self.pos]
        self.pos += 1
        if c != 0x5C:
            raise self._error(f"Broken surrogate pair in field name: expected '\\' to start low surrogate, got "
                              f"0x{c:x}", back=1)
        low = self._escape()
        if not 0xDC00 <= low < 0xE000:
            raise self._error(f"Broken surrogate pair in field name: expected low surrogate, got 0x{low:04X}")
        return 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)

    def _decode_name(self, raw: bytes) -> list[int]:
        """The UTF-16 units of a name's UTF-8 bytes, decoded after the closing quote was read (so its errors
        are located there). Jackson holds the bytes in big-endian 4-byte words and reports a bad second or
        third byte of a sequence with the bytes before it in its word (``0x61c341``)."""
        units: list[int] = []
        i, n = 0, len(raw)
        while i < n:
            c = raw[i]
            i += 1
            if c < 0x80:
                units.append(c)
                continue
            if c & 0xE0 == 0xC0:
                value, needed = c & 0x1F, 1
            elif c & 0xF0 == 0xE0:
                value, needed = c & 0x0F, 2
            elif c & 0xF8 == 0xF0:
                value, needed = c & 0x07, 3
            else:
                raise self._invalid_initial(c)
            if i + needed > n:
                raise self._eof_name()
            for k in range(needed):
                d = raw[i]
                if d & 0xC0 != 0x80:
                    raise self._invalid_other(d if k == 2 else _word_prefix(raw, i))
                i += 1
                value = value << 6 | d & 0x3F
            if needed == 3:
                value -= 0x10000
                units.append((0xD800 + (value >> 10)) & 0xFFFF)
                units.append(0xDC00 | value & 0x3FF)
            elif needed == 2 and 0xD800 <= value <= 0xDFFF:
                raise self._error(f"Invalid UTF-8: Illegal surrogate character 0x{value:x}")
            else:
                units.append(value)
        return units


def _word_prefix(raw: bytes, i: int) -> int:
    """Byte ``i`` of a name with the bytes before it in its 4-byte word, as the Java int Jackson shifts
    out of the word (negative when the word's first byte has its high bit set)."""
    word_start = i - i % 4
    value = int.from_bytes(raw[word_start:i + 1], "big")
    if raw[word_start] & 0x80:  # an arithmetic shift of the word: its sign extended
        value -= 1 << 8 * (i - word_start + 1)
    return value


def _text(units: list[int]) -> str:
    """A Java string's UTF-16 units as a Python string (surrogate pairs joined, lone ones kept)."""
    if all(u < 0xD800 or u >= 0xE000 for u in units):
        return "".join(map(chr, units))
    data = b"".join(u.to_bytes(2, "big") for u in units)
    return data.decode("utf-16-be", "surrogatepass")


def _number_too_long(length: int) -> JacksonError:
    return JacksonError(CONSTRAINTS_EXCEPTION, f"Number value length ({length}) exceeds the maximum allowed "
                                               f"({_MAX_NUMBER_LENGTH}, from `StreamReadConstraints.getMaxNumberLength()`)")


def _check_big_decimal(text: str) -> None:
    """The float must make a ``java.math.BigDecimal``: Jackson parses one of under 500 characters with the
    JDK's constructor (its exponent an int, and the scale it makes), a longer one with FastDoubleParser
    (which takes any exponent but bounds the scale)."""
    mantissa, _, exponent = text.lower().partition("e")
    if not exponent:
        return
    fraction_digits = len(mantissa.partition(".")[2])
    reason = None
    if len(text) >= _FAST_BIG_DECIMAL_LENGTH:
        if not -2**31 < int(exponent) - fraction_digits < 2**31:
            reason = "value exceeds limits"
    else:
        digits = exponent.lstrip("+-")
        while len(digits) > 10 and digits[0] == "0":
            digits = digits[1:]
        if len(digits) > 10:
            reason = "Too many nonzero exponent digits."
        else:
            value = int(digits) * (-1 if exponent.startswith("-") else 1)
            if not -2**31 <= value < 2**31:
                reason = "Exponent overflow."
            elif not -2**31 <= fraction_digits - value < 2**31:
                reason = "Scale out of range."
    if reason is not None:
        shown = f'"{text}"' if len(text) <= _MAX_NUMBER_IN_ERROR else (
            f'"{text[:_MAX_NUMBER_IN_ERROR]}" (truncated to {_MAX_NUMBER_IN_ERROR} chars (from {len(text)}))')
        raise JacksonError(NUMBER_FORMAT_EXCEPTION, f"Value {shown} can not be deserialized as "
                                                    f"`java.math.BigDecimal`, reason:  {reason}")
