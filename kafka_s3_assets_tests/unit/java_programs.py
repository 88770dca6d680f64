"""Small Java programs under ``java/`` that judge our answers with the JVM's own: each is compiled once
per test process into a temporary directory (``javac``/``java`` 17 are part of the environment, see
docs/environment.md) and run as one JVM for a whole batch of inputs."""

from __future__ import annotations

import functools
import subprocess
import tempfile
from pathlib import Path

SOURCES = Path(__file__).parent / "java"


@functools.cache
def compiled(program: str, classpath: str = "") -> str:
    """The classpath that runs ``program`` (the name of ``java/<program>.java``) after compiling it."""
    classes = tempfile.mkdtemp(prefix=f"{program}_")
    subprocess.run(
        [
            "javac",
            "-nowarn",
            *(["-cp", classpath] if classpath else []),
            "-d",
            classes,
            str(SOURCES / f"{program}.java"),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return f"{classpath}:{classes}" if classpath else classes


def run(program: str, stdin_lines: list[str], classpath: str = "", args: tuple[str, ...] = ()) -> list[str]:
    """``program``'s stdout lines for ``stdin_lines`` (``args`` on its command line), one JVM for all."""
    result = subprocess.run(
        ["java", "-cp", compiled(program, classpath), program, *args],
        input="".join(line + "\n" for line in stdin_lines).encode("utf-8"),
        capture_output=True,
        timeout=120,
        check=True,
    )
    return result.stdout.decode("utf-8").split("\n")[:-1]  # not splitlines: U+2028 may sit in a text
