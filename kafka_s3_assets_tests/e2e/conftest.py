"""Fixtures of the end-to-end tests."""

import os

import pytest


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """An empty project directory without DAGSTER_HOME: the CLI creates ./.dagster_home there."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    yield tmp_path
    os.environ.pop("DAGSTER_HOME", None)
