"""`dagster dev` (webserver, daemon, code server) of this repository as a test fixture starts it: in its
own process group, logging to a file, killed whole at the end."""

import os
import signal
import subprocess
import sys
import time
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
        fields = text[text.rindex(")") + 2:].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(f"{stat.parent.name} {text[text.index('(') + 1:text.rindex(')')]}")
    return members


def restore_signals_and_detach() -> None:
    """In the child before exec: its own session (so the whole tree can be signalled and killed), and
    SIGINT as a terminal has it, whatever the test runner's shell left."""
    os.setsid()
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class DagsterDev:
    """`dagster dev -w workspace.yaml` of this repository, in its own process group, logging to a file."""

    def __init__(self, home: Path, env: dict, port: int):
        self.log_path = home / "dev.log"
        self._log = self.log_path.open("w")
        self.port = port
        self.process = subprocess.Popen([str(DAGSTER), "dev", "-w", "workspace.yaml", "-h", "127.0.0.1",
                                         "-p", str(port)], cwd=ROOT,
                                        env=env, stdout=self._log, stderr=subprocess.STDOUT,
                                        preexec_fn=restore_signals_and_detach)

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

    def kill(self) -> None:
        if group_members(self.process.pid):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        self._log.close()
