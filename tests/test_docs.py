"""The documentation stays true to the code: docs/cli.md is what dev/cli_reference.py writes from the parser
(so a flag changed without the docs fails here), the README stays short and speaks to users, not in issue
numbers, and no relative link in the README or docs/ points at a file or heading that is not there.

Fast and Spark-free: it imports only explorer.cli (through dev/cli_reference.py)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [ROOT / "README.md", *DOCS]
README_MAX_LINES = 160


def _load_reference():
    spec = importlib.util.spec_from_file_location("cli_reference", ROOT / "dev" / "cli_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def reference():
    return _load_reference()


def test_the_cli_reference_is_what_the_parser_says(reference):
    assert (ROOT / "docs" / "cli.md").read_text(encoding="utf-8") == reference.render(), (
        "docs/cli.md is out of date with explorer/cli.py: run python dev/cli_reference.py")
    assert reference.main(["--check"]) == 0


def test_the_cli_reference_check_fails_on_an_option_the_docs_lack(reference, monkeypatch, capsys):
    """The comparison can fail: a parser with one more option (as a flag added to cli.py without the docs
    rewritten) renders differently, and --check exits 1 with one line."""
    real = reference.build_parser

    def with_a_new_flag():
        parser = real()
        for action in parser._actions:
            if hasattr(action, "choices") and isinstance(action.choices, dict):  # the subcommands
                action.choices["run"].add_argument("--frobnicate", help="a flag the docs do not know")
        return parser

    monkeypatch.setattr(reference, "build_parser", with_a_new_flag)
    rendered = reference.render()
    assert "`--frobnicate`" in rendered
    assert rendered != (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    capsys.readouterr()
    assert reference.main(["--check"]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "out of date" in err


def test_the_cli_reference_does_not_depend_on_the_terminal(reference, monkeypatch):
    wide = reference.render()
    monkeypatch.setenv("COLUMNS", "40")
    assert reference.render() == wide


def test_the_readme_is_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move details to docs/"


ISSUE = re.compile(r"\bissues?\s*(?:#\s*)?\d+|\bissue\s*#|#\d{1,4}\b(?![\w-])", re.IGNORECASE)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_issue_numbers(page):
    text = page.read_text(encoding="utf-8")
    found = [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1)
             for _ in ISSUE.finditer(_without_code(line))]
    assert found == [], f"{page.relative_to(ROOT)} speaks in issue numbers: {found}"


def test_the_issue_pattern_finds_what_it_should():
    for text in ("issue 13", "(issue 15, in part)", "Issue #7", "issues 3 and 4", "see #12"):
        assert ISSUE.search(text), text
    for text in ("Output 9.4.1", "99.5% target", "[run](#run)", "heading-2", "C#"):
        assert not ISSUE.search(text), text


def _without_code(line: str) -> str:
    return re.sub(r"`[^`]*`", "", line)


# [text](target) and ![alt](target); the target up to whitespace or ")", an optional "title" after it
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def _prose(text: str) -> list[str]:
    """The lines outside fenced code blocks, with inline code removed."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(_without_code(line))
    return lines


def _slug(heading: str) -> str:
    """The anchor GitHub makes of a heading's text."""
    text = re.sub(r"`([^`]*)`", r"\1", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link in a heading counts by its text
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    found: set[str] = set()
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading and not fenced:
            slug, n = _slug(heading.group(1)), 1
            unique = slug
            while unique in found:
                unique, n = f"{slug}-{n}", n + 1
            found.add(unique)
        found.update(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", line))
    return found


def _links(page: Path) -> list[str]:
    return [m.group(1) for line in _prose(page.read_text(encoding="utf-8")) for m in LINK.finditer(line)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_at_what_exists(page):
    broken = []
    for target in _links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        if not where.exists():
            broken.append(f"{target}: no such file")
        elif anchor and where.suffix == ".md" and anchor not in _anchors(where):
            broken.append(f"{target}: no heading #{anchor} in {where.relative_to(ROOT)}")
    assert broken == [], f"{page.relative_to(ROOT)}: {broken}"


def test_the_link_check_sees_links():
    """The reader is not blind: it finds links and images, skips code, and the README has both kinds."""
    readme = _links(ROOT / "README.md")
    assert "docs/screenshots/explorer.png" in readme and "docs/cli.md" in readme
    assert _prose("a `[x](nowhere.md)` b\n```\n[y](nowhere.md)\n```\n[z](here.md)") == ["a  b", "[z](here.md)"]
    assert _slug("The spark preset, as measured") == "the-spark-preset-as-measured"
    assert _slug("Run on Spark") == "run-on-spark" and _slug("`run`") == "run"
