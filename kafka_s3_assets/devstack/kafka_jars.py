"""The jars of the devstack's Apache Kafka broker, resolved by Maven from Maven Central and cached.

The broker is Apache Kafka itself (``org.apache.kafka:kafka_2.13``), run from its jars with ``java -cp``:
no tarball, nothing committed. ``kafka-broker-pom.xml`` (beside this module) names the artifacts;
``mvn dependency:copy-dependencies`` copies them and their runtime dependencies into a cache directory
outside the repository, once per Kafka version. Later starts only check the cache's marker file.

Cache: ``$KAFKA_S3_ASSETS_CACHE_DIR``, else ``$XDG_CACHE_HOME/kafka_s3_assets``, else
``~/.cache/kafka_s3_assets``; the jars go to ``apache-kafka-<version>/lib``. Maven keeps its own copy in
its local repository (``~/.m2``) as usual.

``python -m kafka_s3_assets.devstack.kafka_jars`` resolves them ahead of time (``scripts/setup`` does).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
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
    home = cache_root() / f"apache-kafka-{version}"
    lib = home / "lib"
    if (home / _COMPLETE).exists():
        return lib
    home.mkdir(parents=True, exist_ok=True)
    # Two processes starting a devstack at once (a test suite and a test's own broker) resolve once.
    with open(home / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (home / _COMPLETE).exists():
            _resolve(version, lib)
            (home / _COMPLETE).write_text(version + "\n")
    return lib


def classpath(version: str = KAFKA_VERSION) -> str:
    return str(kafka_lib_dir(version) / "*")


def _resolve(version: str, lib: Path) -> None:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise DevstackError(
            "The devstack's Kafka broker is Apache Kafka, fetched from Maven Central by Maven, and `mvn` is not "
            "on PATH: run scripts/setup (it installs Maven), or install Maven (apt-get install maven)."
        )
    staging = lib.with_name(lib.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    command = [
        mvn,
        "--batch-mode",
        "--quiet",
        "--file",
        str(POM),
        f"-Dkafka.version={version}",
        "dependency:copy-dependencies",
        "-DincludeScope=runtime",
        f"-DoutputDirectory={staging}",
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=_RESOLVE_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise DevstackError(
            f"Maven did not resolve Apache Kafka {version} within {_RESOLVE_TIMEOUT_S:.0f}s (is Maven Central "
            "reachable?)"
        ) from None
    if done.returncode != 0 or not any(staging.glob("kafka_2.13-*.jar")):
        output = (done.stdout + done.stderr).strip().splitlines()[-20:]
        raise DevstackError(
            f"Maven could not resolve Apache Kafka {version} (org.apache.kafka:kafka_2.13) from {POM}:\n"
            + "\n".join(output)
        )
    shutil.rmtree(lib, ignore_errors=True)
    staging.rename(lib)


if __name__ == "__main__":
    try:
        print(kafka_lib_dir())
    except DevstackError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
