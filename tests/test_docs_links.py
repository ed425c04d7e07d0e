"""The docs hold together: every relative link in README.md and docs/ points to a file of the
repository (and, with an anchor, to a heading there), every page is on a map (docs/index.md for the
user guide, docs/research/README.md for the research record), and no tracked file cites a file
the repository does not hold (a reference document kept outside it, or the shared folder beside it)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted([ROOT / "README.md", *DOCS.rglob("*.md")])
LINK = re.compile(r"\]\(([^)\s]+)\)")  # [text](target), Markdown's inline links
EXTERNAL = ("http://", "https://", "mailto:")
# Files outside the repository that earlier pages cited; spelled in two parts so this file is no hit.
OUTSIDE = ("REFERENCE" + ".md", "../" + "shared")
TEXT_SUFFIXES = {".md", ".py", ".sh", ".toml", ".ipynb", ".txt", ".cfg", ".json"}


def relative_links(page: Path) -> list[str]:
    """The page's link targets that name a path (not a web address, not an anchor of the page)."""
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)  # code blocks hold no links
    return [t for t in LINK.findall(text) if not t.startswith(EXTERNAL) and not t.startswith("#")]


def heading_anchors(page: Path) -> set[str]:
    """GitHub's anchors for a Markdown page's headings: lower case, punctuation dropped, spaces to -."""
    headings = re.findall(r"^#+ (.+)$", re.sub(r"```.*?```", "", page.read_text(), flags=re.S), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    """The page's relative links whose file is missing (or outside `root`), or whose anchor names no
    heading of the Markdown page it points to."""
    broken = []
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve()
        missing = not file.exists() or root.resolve() not in file.parents
        if missing or (anchor and file.suffix == ".md" and anchor not in heading_anchors(file)):
            broken.append(target)
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_names_a_file_that_exists(page):
    assert broken_links(page) == [], f"{page.relative_to(ROOT)} links to what is not there"


def test_every_page_is_on_a_map():
    def linked_from(index: Path) -> set[Path]:
        return {(index.parent / t.partition("#")[0]).resolve() for t in relative_links(index)}
    guide = {p for p in DOCS.glob("*.md") if p.name != "index.md"}
    research = {p for p in (DOCS / "research").glob("*.md") if p.name != "README.md"}
    assert guide - linked_from(DOCS / "index.md") == set(), "add the page to docs/index.md"
    assert research - linked_from(DOCS / "research" / "README.md") == set(), \
        "add the page to docs/research/README.md"


def test_no_tracked_file_cites_a_file_outside_the_repository():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    citing = []
    for name in tracked.stdout.splitlines():
        path = ROOT / name
        if path.suffix not in TEXT_SUFFIXES and path.name != "Makefile":
            continue
        text = path.read_text(errors="replace") if path.is_file() else ""
        citing += [f"{name}: {cited}" for cited in OUTSIDE if cited in text]
    assert citing == []


def test_the_link_check_finds_a_missing_file_a_wrong_anchor_and_a_path_outside(tmp_path):
    """The checks above can fail: each kind of broken link on a page of a small tree is caught."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "there.md").write_text("# A heading: here\n```\n# not a heading\n```\n")
    (tmp_path / "outside.md").write_text("# Outside\n")
    page = root / "page.md"
    page.write_text("[ok](there.md#a-heading-here) [gone](missing.md) [anchor](there.md#not-a-heading) "
                    "[out](../outside.md) [web](https://x.org) [self](#top)\n")
    assert broken_links(page, root) == ["missing.md", "there.md#not-a-heading", "../outside.md"]
