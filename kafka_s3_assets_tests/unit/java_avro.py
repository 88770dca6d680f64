"""Avro Java itself, as a judge of the schema text we write: the Avro 1.12 jar (and Jackson) ship inside
the pyspark dependency, and ``javac``/``java`` 17 are part of the environment (docs/environment.md).

``java_schema_strings`` compiles a small helper (``java/AvroSchemaToString.java``) into a temporary
directory and runs one JVM for all the schemas it is given: each is parsed with ``Schema.Parser`` and
written back with ``Schema.toString()``.
"""

from __future__ import annotations

import functools
import subprocess
import tempfile
from pathlib import Path

import pyspark

JARS = Path(pyspark.__file__).parent / "jars"
HELPER = Path(__file__).parent / "java" / "AvroSchemaToString.java"


def _classpath() -> str:
    wanted = ("avro-1.", "jackson-core-", "jackson-databind-", "jackson-annotations-", "slf4j-api-")
    jars = [str(jar) for jar in sorted(JARS.glob("*.jar")) if jar.name.startswith(wanted)]
    assert any(Path(j).name.startswith("avro-1.12") for j in jars), f"no Avro 1.12 jar in {JARS}"
    return ":".join(jars)


@functools.lru_cache(maxsize=1)
def _compiled() -> tuple[str, str]:
    classes = tempfile.mkdtemp(prefix="avro_to_string_")
    classpath = _classpath()
    subprocess.run(["javac", "-nowarn", "-cp", classpath, "-d", classes, str(HELPER)], check=True,
                   capture_output=True, timeout=120)
    return classes, classpath


def java_schema_strings(schemas: list[str]) -> list[str]:
    """Per schema text, ``OK\\t<Schema.toString()>`` or ``ERR\\t<why it does not parse>``."""
    classes, classpath = _compiled()
    result = subprocess.run(["java", "-cp", f"{classpath}:{classes}", "AvroSchemaToString"],
                            input="".join(s + "\n" for s in schemas).encode("utf-8"), capture_output=True,
                            timeout=120, check=True)
    lines = result.stdout.decode("utf-8").split("\n")[:-1]  # not splitlines: U+2028 may sit in a doc
    assert len(lines) == len(schemas), result.stderr.decode("utf-8", "replace")
    return lines
