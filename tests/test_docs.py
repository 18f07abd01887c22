"""Docs that are generated from code match the code; links in the docs resolve."""

from __future__ import annotations

import re
from pathlib import Path

from gateway.settings import settings_markdown

ROOT = Path(__file__).parent.parent


def test_settings_reference_matches_the_settings_class() -> None:
    committed = (ROOT / "docs" / "settings.md").read_text()
    assert committed == settings_markdown(), "regenerate: python -m gateway.settings > docs/settings.md"


def test_relative_links_in_readme_and_docs_resolve() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "deploy" / "README.md",
             ROOT / "results" / "README.md"]
    for page in pages:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            assert (page.parent / target).exists(), f"{page.name} links to missing {target}"


def _heading_anchors(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#+ (.*)$", page.read_text(), flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_anchors_of_links_between_docs_resolve() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "deploy" / "README.md",
             ROOT / "results" / "README.md"]
    for page in pages:
        for target, anchor in re.findall(r"\]\(([^)#\s]*)#([^)\s]+)\)", page.read_text()):
            linked = page.parent / target if target else page
            if linked.suffix == ".md" and linked.exists():
                assert anchor in _heading_anchors(linked), f"{page.name} links to a missing heading {target}#{anchor}"


def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "deploy" / "README.md",
            ROOT / "gateway" / "CONTRACTS.md"]


def test_no_issue_numbers_in_prose() -> None:
    for page in _pages():
        prose = re.sub(r"`[^`]*`|\]\([^)]*\)", "", page.read_text())  # code spans and link targets are names
        found = re.findall(r"\b[Ii]ssues? ?#?\d+|(?<![\w&])#\d+\b", prose)
        assert not found, f"{page.name} cites issue numbers {found}: say what the change is instead"


def test_contracts_name_only_files_that_exist() -> None:
    text = (ROOT / "gateway" / "CONTRACTS.md").read_text()
    for path in re.findall(r"(?<![\w/.-])((?:gateway|deploy|dashboards|tests|docs)/[\w./-]*\w)", text):
        if "*" not in path and "<" not in path:
            assert (ROOT / path).exists(), f"CONTRACTS.md names missing {path}"


def test_module_map_names_every_module_of_the_gateway_and_its_core() -> None:
    text = (ROOT / "docs" / "module-map.md").read_text()
    gateway = ROOT / "gateway"
    named = {f"`{p.name}" for p in gateway.glob("*.py")} | {f"`core/{p.name}" for p in (gateway / "core").glob("*.py")}
    missing = sorted(n.strip("`") for n in named if n not in text)
    assert len(named) > 20, "the gateway's modules were not found"
    assert not missing, f"docs/module-map.md does not name {missing}: add a row (what it holds, what it imports)"


def test_module_map_names_no_module_that_is_gone() -> None:
    text = (ROOT / "docs" / "module-map.md").read_text()
    for name in re.findall(r"^\| `((?:core/)?\w+\.py)`", text, flags=re.MULTILINE):
        assert (ROOT / "gateway" / name).exists(), f"docs/module-map.md has a row for gateway/{name}, which is gone"


def test_every_results_folder_has_a_readme() -> None:
    folders = sorted(p for p in (ROOT / "results").iterdir() if p.is_dir())
    assert len(folders) > 20, "the results folders were not found"
    bare = [p.name for p in folders if not (p / "README.md").exists()]
    assert not bare, f"results folders without a README.md (command, machine, what ran beside it): {bare}"


def test_module_map_marks_exactly_the_compiled_modules() -> None:
    """Regression (2026-12-07): the map marked `core/arrivals.py` compiled (it is not) and left `core/ewma.py`
    unmarked (it is): the ⚙ marks are `gateway.COMPILED_MODULES`, no more and no fewer."""
    from gateway import COMPILED_MODULES

    text = (ROOT / "docs" / "module-map.md").read_text()
    marked = set(re.findall(r"^\| `((?:core/)?\w+)\.py` ⚙", text, flags=re.MULTILINE))
    assert marked == {name.replace(".", "/") for name in COMPILED_MODULES}
