"""The jars of the devstack's Apache Kafka broker, resolved by Maven from Maven Central and cached.

The broker is Apache Kafka itself (``org.apache.kafka:kafka_2.13``), run from its jars with ``java -cp``:
no tarball, nothing committed. ``kafka-broker-pom.xml`` (beside this module) names the artifacts;
``mvn dependency:copy-dependencies`` copies them and their runtime dependencies into a cache directory
outside the repository, once per Kafka version. Later starts only check the cache's marker file.

Cache: ``$KAFKA_S3_ASSETS_CACHE_DIR``, else ``$XDG_CACHE_HOME/kafka_s3_assets``, else
``~/.cache/kafka_s3_assets``; the jars go to ``apache-kafka-<version>/lib``. Maven keeps its own copy in
its local repository (``~/.m2``) as usual.

Any other POM is resolved the same way (:func:`pom_lib_dir`), into ``<name>-<version>/lib`` of the same
cache, ``name`` being the POM's ``artifactId``: the unit tests run Kafka Connect's own transforms from
``kafka_s3_assets_tests/unit/java/connect-transforms-pom.xml`` so.

``python -m kafka_s3_assets.devstack.kafka_jars`` resolves the broker's jars ahead of time, and
``python -m kafka_s3_assets.devstack.kafka_jars --pom <file>`` another POM's (``scripts/setup`` does both).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from kafka_s3_assets.devstack.errors import DevstackError

KAFKA_VERSION = "4.4.0"
POM = Path(__file__).with_name("kafka-broker-pom.xml")
_COMPLETE = ".complete"  # written last: a cache directory without it is a resolution that died half-way
_RESOLVE_TIMEOUT_S = 900.0


def cache_root() -> Path:
    explicit = os.environ.get("KAFKA_S3_ASSETS_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "kafka_s3_assets"


def kafka_lib_dir(version: str = KAFKA_VERSION) -> Path:
    """The directory holding the broker's jars, resolving them first when they are not cached yet."""
    return pom_lib_dir(POM, version, name="apache-kafka")


def classpath(version: str = KAFKA_VERSION) -> str:
    return str(kafka_lib_dir(version) / "*")


def pom_lib_dir(pom: Path, version: str = KAFKA_VERSION, name: str | None = None) -> Path:
    """The directory holding the runtime dependencies of ``pom`` (built with ``-Dkafka.version=<version>``),
    ``<name>-<version>/lib`` of the cache (``name``: the POM's artifactId unless given), resolving them
    first when they are not cached yet."""
    home = cache_root() / f"{name or _artifact_id(pom)}-{version}"
    lib = home / "lib"
    if (home / _COMPLETE).exists():
        return lib
    home.mkdir(parents=True, exist_ok=True)
    # Two processes starting a devstack at once (a test suite and a test's own broker) resolve once.
    with open(home / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (home / _COMPLETE).exists():
            _resolve(pom, version, lib)
            (home / _COMPLETE).write_text(version + "\n")
    return lib


_MAVEN = "{http://maven.apache.org/POM/4.0.0}"


def _artifact_id(pom: Path) -> str:
    found = ElementTree.parse(pom).getroot().findtext(f"{_MAVEN}artifactId")
    if not found:
        raise DevstackError(f"{pom} names no artifactId")
    return found.strip()


def _dependencies(pom: Path) -> list[str]:
    """The artifactIds ``pom`` depends on directly: each must be among the copied jars."""
    root = ElementTree.parse(pom).getroot()
    return [
        (dependency.findtext(f"{_MAVEN}artifactId") or "").strip()
        for dependency in root.iterfind(f"{_MAVEN}dependencies/{_MAVEN}dependency")
    ]


def _resolve(pom: Path, version: str, lib: Path) -> None:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise DevstackError(
            "Apache Kafka's jars are fetched from Maven Central by Maven, and `mvn` is not on PATH: run "
            "scripts/setup (it installs Maven), or install Maven (apt-get install maven)."
        )
    staging = lib.with_name(lib.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    command = [
        mvn,
        "--batch-mode",
        "--quiet",
        "--file",
        str(pom),
        f"-Dkafka.version={version}",
        "dependency:copy-dependencies",
        "-DincludeScope=runtime",
        f"-DoutputDirectory={staging}",
    ]
    wanted = _dependencies(pom)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=_RESOLVE_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise DevstackError(
            f"Maven did not resolve {', '.join(wanted)} (Apache Kafka {version}) from {pom} within "
            f"{_RESOLVE_TIMEOUT_S:.0f}s (is Maven Central reachable?)"
        ) from None
    missing = [artifact for artifact in wanted if not any(staging.glob(f"{artifact}-*.jar"))]
    if done.returncode != 0 or missing:
        output = (done.stdout + done.stderr).strip().splitlines()[-20:]
        raise DevstackError(
            f"Maven could not resolve {', '.join(missing or wanted)} (Apache Kafka {version}) from {pom}:\n"
            + "\n".join(output)
        )
    shutil.rmtree(lib, ignore_errors=True)
    staging.rename(lib)


def main(argv: list[str]) -> int:
    """``[--pom <file>]``: prints the jars' directory of the broker, or of that POM."""
    try:
        if argv[:1] == ["--pom"] and len(argv) == 2:
            print(pom_lib_dir(Path(argv[1]).resolve()))
        elif not argv:
            print(kafka_lib_dir())
        else:
            print("usage: python -m kafka_s3_assets.devstack.kafka_jars [--pom <file>]", file=sys.stderr)
            return 2
    except DevstackError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
