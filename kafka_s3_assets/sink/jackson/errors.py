"""What Jackson throws: the exception's class and message (``getMessage()``), located as Jackson 2.21
locates it (the source is not shown: ``INCLUDE_SOURCE_IN_LOCATION`` is off by default since 2.16)."""

from __future__ import annotations

SOURCE = "[Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: {}, column: {}]"

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
