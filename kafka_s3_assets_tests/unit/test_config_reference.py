from pathlib import Path

import pytest

from kafka_s3_assets.config_reference import END, START, markdown
from kafka_s3_assets.sink.config_keys import ALL_KEYS

pytestmark = [pytest.mark.unit]

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_reference_is_the_generated_one():
    text = README.read_text()
    block = text[text.index(START):text.index(END) + len(END)]
    assert block == markdown(), "README is stale: run `kafka-s3-assets config-reference --update README.md`"


def test_every_supported_key_is_documented_with_its_default():
    table = markdown()
    for key in ALL_KEYS.values():
        assert f"| `{key.name}` |" in table
        if key.support.value == "full":
            assert key.doc, f"{key.name} has no description"
