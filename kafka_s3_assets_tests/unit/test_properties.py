"""``.properties`` parsing, judged by the JVM: every text below is read by ``parse_properties`` and by
``java.util.Properties.load`` (``java/PropertiesLoad.java``), and the two must agree entry for entry,
or both refuse the text."""

from __future__ import annotations

import base64

import pytest

from kafka_s3_assets.sink.config import load_connector_config
from kafka_s3_assets.sink.errors import ConfigError
from kafka_s3_assets.sink.properties import MalformedProperties, parse_properties

from .java_programs import run

pytestmark = [pytest.mark.unit, pytest.mark.java]

TEXTS = [
    "# comment\n! also\na=1\nb : 2\nc 3\nd=multi\\\n   line\ne=x\\=y\nf=\\u0041\n",
    "a=1\\\n# not a comment, the continuation of a\nb=2\n",
    "  key\\ with\\ space = v \n",
    "k=v\\\n",  # a continuation at the end of the text
    "k\\:x=1\n",  # an escaped separator belongs to the key
    "a=1\na=2\n",  # the last one wins
    "lonely\n",  # a key with no value
    "tab\tv\n",
    "k = \\\n\n",
    "k=\\t\\n\\r\\f\\z\n",  # known escapes, and an unknown one that drops its backslash
    "\\u00e9=\\u00e9t\\u00E9\n",
    "a=1\r\nb=2\rc=3\n",  # every line terminator
    "k=v\\\\\n",  # an even number of backslashes does not continue
    "   \n\t! c\n k2=v2",
    "k=first\\\n  \\  kept leading space\n",
    "k:=v\n",
    "k==v\n",
    "k :v\n",
    "k\\\n=v\n",
    "url=jdbc:postgresql://h:5432/db?ssl=true\n",
    "path=C:\\\\dir\\\\file\n",
    "k=\\u00zz\n",  # broken escape: both refuse it
    "k=\\u12\n",
]


def jvm_reads(texts: list[str]) -> list[dict[str, str] | None]:
    lines = run("PropertiesLoad", [base64.b64encode(t.encode("utf-8")).decode("ascii") for t in texts])
    assert len(lines) == len(texts), "the helper must answer every text"
    decoded = []
    for line in lines:
        if line.startswith("ERR"):
            decoded.append(None)
            continue
        entries = [pair.split(":") for pair in line.split(" ")[1:]]
        decoded.append({base64.b64decode(k).decode("utf-8"): base64.b64decode(v).decode("utf-8") for k, v in entries})
    return decoded


def ours(text: str) -> dict[str, str] | None:
    try:
        return parse_properties(text)
    except MalformedProperties:
        return None


def test_parse_properties_reads_what_the_jvm_reads():
    expected = jvm_reads(TEXTS)
    assert {i: ours(t) for i, t in enumerate(TEXTS)} == dict(enumerate(expected))
    assert expected[0] == {"a": "1", "b": "2", "c": "3", "d": "multiline", "e": "x=y", "f": "A"}


def test_malformed_connector_file_is_a_config_error_naming_the_file(tmp_path):
    path = tmp_path / "sink.properties"
    path.write_text("name=x\ntopics=t\ns3.bucket.name=\\u00zz\n")
    with pytest.raises(ConfigError, match=r"sink\.properties.*\\u00zz"):
        load_connector_config(path)
