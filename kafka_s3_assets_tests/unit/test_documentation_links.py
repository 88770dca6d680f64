"""The documentation holds together: every relative link of README.md and docs/ points to a file that exists
(and to a heading of it, where the link names one), every page is in the index, and the README stays an entry.
Pages move; these tests make a move that breaks a link fail instead of passing silently."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = [pytest.mark.unit]

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted([ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "examples" / "README.md", *DOCS.glob("*.md")])

LINK = re.compile(r"\[(?P<text>[^\]]*)\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE_SPAN = re.compile(r"`+[^`]*`+")
HEADING = re.compile(r"^(#{1,6})\s+(?P<title>.+?)\s*#*\s*$")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # https:, mailto:, …


def prose_lines(text: str) -> list[tuple[int, str]]:
    """The lines outside fenced code blocks, numbered from 1."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if not fenced:
            lines.append((number, line))
    return lines


def links(text: str) -> list[tuple[int, str]]:
    """(line, target) of every Markdown link outside code."""
    found = []
    for number, line in prose_lines(text):
        # A code span may sit inside a link's text ([`examples/`](…)), so it is blanked rather than removed.
        for match in LINK.finditer(CODE_SPAN.sub("code", line)):
            found.append((number, match.group("target")))
    return found


def slug(title: str) -> str:
    """The anchor GitHub gives a heading: link syntax reduced to its text, lower case, punctuation dropped
    (letters, digits, `_` and `-` stay), spaces as hyphens."""
    text = LINK.sub(lambda m: m.group("text"), title).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    result = set()
    for _number, line in prose_lines(path.read_text()):
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group("title"))
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")  # GitHub numbers repeated headings
    return result


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    problems = []
    for number, target in links(page.read_text()):
        if EXTERNAL.match(target):
            continue
        file_part, _, anchor = target.partition("#")
        destination = (page.parent / file_part).resolve() if file_part else page
        where = f"{page.relative_to(root)}:{number}: {target}"
        if not destination.exists():
            problems.append(f"{where}: no such file")
            continue
        if anchor and destination.suffix == ".md" and anchor not in anchors(destination):
            problems.append(f"{where}: no heading #{anchor} in {destination.relative_to(root)}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_points_to_an_existing_file_and_heading(page):
    assert broken_links(page) == []


def test_a_broken_link_or_anchor_is_reported_with_its_line(tmp_path):
    (tmp_path / "other.md").write_text("# Other page\n\n## A section: with `code`, and punctuation!\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n"
        "[fine](other.md#a-section-with-code-and-punctuation) [web](https://example.com/x.md)\n"
        "[gone](missing.md) [no anchor](other.md#nowhere)\n"
        "```\n[inside a code block](missing-too.md)\n```\n"
        "`[inside a code span](missing-three.md)` [here](#page)\n"
    )
    assert broken_links(page, root=tmp_path) == [
        "page.md:4: missing.md: no such file",
        "page.md:4: other.md#nowhere: no heading #nowhere in other.md",
    ]


def test_slugs_are_githubs():
    assert slug("Config providers: `${file:…}`, `${env:…}`, `${directory:…}`") == (
        "config-providers-file-env-directory"
    )
    assert slug("From the Block-GZIP S3 sink (spredfast / DeviantArt `kafka-connect-s3`)") == (
        "from-the-block-gzip-s3-sink-spredfast--deviantart-kafka-connect-s3"
    )
    assert slug("6. Objects are created, never replaced (`clients/s3.py`)") == (
        "6-objects-are-created-never-replaced-clientss3py"
    )
    assert slug("The `kafka_s3_assets.` keys") == "the-kafka_s3_assets-keys"


def test_the_index_lists_every_page_of_docs():
    listed = {
        (DOCS / target.partition("#")[0]).resolve()
        for _n, target in links((DOCS / "README.md").read_text())
        if not EXTERNAL.match(target)
    }
    unlisted = [p.name for p in DOCS.glob("*.md") if p.name != "README.md" and p.resolve() not in listed]
    assert unlisted == [], "pages missing from docs/README.md"


def test_the_readme_is_an_entry_with_the_two_commands_that_links_the_index():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 300
    assert "bash scripts/demo" in text and "bash scripts/test" in text
    assert "docs/README.md" in {target for _n, target in links(text)}
