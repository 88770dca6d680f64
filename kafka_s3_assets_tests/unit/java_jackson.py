"""Kafka Connect's schemaless JSON judged by Jackson and the JVM themselves: ``java/ConnectSchemalessJson
.java`` (our own program doing what JsonConverter with ``schemas.enable=false`` and JsonFormat do) run
with the Jackson jars of pyspark's wheel, on the machine's Java 17, one JVM for a whole batch of inputs.

Versions: the oracle's Jackson is pyspark's (2.21); Apache Kafka 3.7 to 4.0 ship Jackson 2.16, 4.1 ships
2.19, Confluent's builds 2.18 or 2.21. Its ``Double.toString`` is JDK 17's; JDK 19 and later print the
shortest digits where JDK 17 does not (in rare cases: see ``sink/formats/java_double.py``).
"""

from __future__ import annotations

import base64
import struct
from pathlib import Path

import pyspark

from .java_programs import run

JARS = Path(pyspark.__file__).parent / "jars"
PROGRAM = "ConnectSchemalessJson"


def _classpath() -> str:
    wanted = ("jackson-core-", "jackson-databind-", "jackson-annotations-")
    jars = [str(jar) for jar in sorted(JARS.glob("*.jar")) if jar.name.startswith(wanted)]
    assert len(jars) == 3, f"Jackson's core, databind and annotations jars are not all in {JARS}"
    return ":".join(jars)


def connect_lines(values: list[bytes]) -> list[tuple[str, bytes | None]]:
    """Per value: ("OK", the line JsonFormat writes), ("NULL", None) for a null value, ("ERR", b"<class>:
    <message>") where the converter fails, ("WERR", ...) where the format does."""
    lines = run(PROGRAM, [base64.b64encode(v).decode("ascii") for v in values], _classpath(), ("values",))
    assert len(lines) == len(values), "the oracle must answer every value"
    out = []
    for line in lines:
        kind, _, payload = line.partition(" ")
        out.append((kind, base64.b64decode(payload) if payload else None))
    return out


def java_doubles(values: list[float]) -> list[str]:
    """``Double.toString`` of each value."""
    bits = [f"{struct.unpack('<Q', struct.pack('<d', x))[0]:016x}" for x in values]
    return run(PROGRAM, bits, _classpath(), ("doubles",))


def versions() -> dict[str, str]:
    """The oracle's Jackson and Java versions."""
    return dict(line.split(" ", 1) for line in run(PROGRAM, [], _classpath(), ("versions",)))
