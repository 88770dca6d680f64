"""`dagster dev` (webserver, daemon, code server) of this repository as a test fixture starts it: in its
own process group, logging to a file, killed whole at the end."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DAGSTER = Path(sys.executable).parent / "dagster"
START_TIMEOUT_S = 180.0


def group_members(pgid: int) -> list[str]:
    """Live (not zombie) processes of the process group, as 'pid command'."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(f"{stat.parent.name} {text[text.index('(') + 1 : text.rindex(')')]}")
    return members


def restore_signals_and_detach() -> None:
    """In the child before exec: its own session (so the whole tree can be signalled and killed), and
    SIGINT as a terminal has it, whatever the test runner's shell left."""
    os.setsid()
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class DagsterDev:
    """`dagster dev -w workspace.yaml` of this repository, in its own process group, logging to a file."""

    def __init__(self, home: Path, env: dict, port: int):
        self.home = home
        self.log_path = home / "dev.log"
        self._log = self.log_path.open("w")
        self.port = port
        self.process = subprocess.Popen(
            [str(DAGSTER), "dev", "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(port)],
            cwd=ROOT,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            preexec_fn=restore_signals_and_detach,
        )

    @classmethod
    def serving(cls, tmp_path: Path, name: str, config: dict, port: int) -> "DagsterDev":
        """`dagster dev` serving the connector ``name`` with ``config`` (Connect's keys, no name) and a fresh
        instance under ``tmp_path`` (with this repository's dagster.yaml: the run queue and its limits)."""
        config_path = tmp_path / "connector.json"
        config_path.write_text(json.dumps({"name": name, "config": config}))
        home = tmp_path / "dagster_home"
        home.mkdir()
        shutil.copyfile(ROOT / "dagster.yaml", home / "dagster.yaml")
        env = dict(
            os.environ, DAGSTER_HOME=str(home), KAFKA_S3_ASSETS_CONNECTORS=str(config_path), PYTHONPATH=str(ROOT)
        )
        return cls(home, env, port)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for_line(self, text: str, after: int = 0, timeout_s: float = START_TIMEOUT_S) -> int:
        """Position in the log just past the first line after ``after`` that contains ``text``."""
        deadline = time.monotonic() + timeout_s
        while True:
            log = self.log()
            found = log.find(text, after)
            if found >= 0:
                end = log.find("\n", found)
                return len(log) if end < 0 else end + 1
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"no '{text}' in the dagster dev log:\n{log[-5000:]}")
            time.sleep(0.2)

    def wait_for_partitions(self, name: str, keys: list[str], timeout_s: float = START_TIMEOUT_S) -> None:
        """Until the instance holds ``keys`` in the dynamic partitions ``name`` (the code location's load adds
        its topics' partitions)."""
        import dagster as dg

        deadline = time.monotonic() + timeout_s
        with dg.DagsterInstance.from_config(str(self.home)) as instance:
            while sorted(instance.get_dynamic_partitions(name)) != sorted(keys):
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(
                        f"partitions {name}: {instance.get_dynamic_partitions(name)}, not {keys}:\n{self.log()[-5000:]}"
                    )
                time.sleep(0.2)

    def wait_until_serving(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Until the webserver answers: it logs "Serving dagster-webserver" before it listens."""
        self.wait_for_line("Serving dagster-webserver", timeout_s=timeout_s)
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/server_info", timeout=5):
                    return
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(
                        f"dagster-webserver does not answer on port {self.port}:\n{self.log()[-5000:]}"
                    ) from None
                time.sleep(0.2)

    def kill(self) -> None:
        if group_members(self.process.pid):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        self._log.close()
