from pathlib import Path

import pytest

from kafka_s3_assets.config_reference import END, START, markdown
from kafka_s3_assets.sink.config_keys import ALL_KEYS

pytestmark = [pytest.mark.unit]

CONFIGURATION_PAGE = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def test_configuration_page_holds_the_generated_reference():
    text = CONFIGURATION_PAGE.read_text()
    block = text[text.index(START) : text.index(END) + len(END)]
    assert block == markdown(), (
        "docs/configuration.md is stale: run `kafka-s3-assets config-reference --update docs/configuration.md`"
    )


def test_every_supported_key_is_documented_with_its_default():
    table = markdown()
    for key in ALL_KEYS.values():
        assert f"| `{key.name}` |" in table
        if key.support.value == "full":
            assert key.doc, f"{key.name} has no description"
