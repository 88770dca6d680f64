"""Avro Java itself, as a judge of the schema text we write: the Avro 1.12 jar (and Jackson) ship inside
the pyspark dependency.

``java_schema_strings`` runs a small helper (``java/AvroSchemaToString.java``) in one JVM for all the
schemas it is given: each is parsed with ``Schema.Parser`` and written back with ``Schema.toString()``.
"""

from __future__ import annotations

from pathlib import Path

import pyspark

from .java_programs import run

JARS = Path(pyspark.__file__).parent / "jars"


def _classpath() -> str:
    wanted = ("avro-1.", "jackson-core-", "jackson-databind-", "jackson-annotations-", "slf4j-api-")
    jars = [str(jar) for jar in sorted(JARS.glob("*.jar")) if jar.name.startswith(wanted)]
    assert any(Path(j).name.startswith("avro-1.12") for j in jars), f"no Avro 1.12 jar in {JARS}"
    return ":".join(jars)


def java_schema_strings(schemas: list[str]) -> list[str]:
    """Per schema text, ``OK\\t<Schema.toString()>`` or ``ERR\\t<why it does not parse>``."""
    lines = run("AvroSchemaToString", schemas, _classpath())
    assert len(lines) == len(schemas), "the helper must answer every schema"
    return lines
