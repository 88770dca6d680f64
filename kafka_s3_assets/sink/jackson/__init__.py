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

The parts: ``encodings`` (bytes to what the parser reads), ``reader`` (the token stream and
containers), ``numbers``, ``strings``, ``chars`` (how characters show in messages), ``errors``.
Values come out through the callbacks of ``read_tree``, so the caller decides what numbers and objects
become (``schemaless_json`` makes Kafka Connect's values of them). Errors are ``JacksonError``: the Java
exception's class and ``getMessage()``.
"""

from .errors import JacksonError
from .reader import read_tree

__all__ = ["JacksonError", "read_tree"]
