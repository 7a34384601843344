"""docs/scenarios.md's subset table is ``openscenario.subset``, and the reader keeps to it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import vcosim.openscenario
from vcosim.openscenario.subset import MARKERS, SUBSET, markdown

ROOT = Path(__file__).resolve().parents[2]
TAG = re.compile(r"^[A-Z][A-Za-z0-9]*$")


def tags(elements: str) -> set[str]:
    """The element names a row's first column gives (`Init`: `TeleportAction` -> both)."""
    named = re.findall(r"`([^`]+)`", elements)
    return {part for name in named for part in name.split("/") if TAG.match(part)}


def named_by_the_reader() -> set[str]:
    """Every string constant of the openscenario package's modules."""
    folder = Path(vcosim.openscenario.__file__).parent
    found: set[str] = set()
    for module in folder.glob("*.py"):
        if module.name == "subset.py":
            continue
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.update(re.findall(r"[A-Z][A-Za-z0-9]*", node.value))
    return found


def test_the_docs_table_is_the_generated_one() -> None:
    page = (ROOT / "docs" / "scenarios.md").read_text(encoding="utf-8")
    block = page[page.index(MARKERS[0]) : page.index(MARKERS[1]) + len(MARKERS[1])]
    assert block == markdown(), "regenerate: python -m vcosim.openscenario.subset docs/scenarios.md"


def test_every_element_a_row_says_is_read_is_one_the_reader_names() -> None:
    """A row cannot claim an element the reader never looks for (or lose one it renamed)."""
    named = named_by_the_reader()
    claimed = {tag for row in SUBSET if row.supported != "no" for tag in tags(row.elements)}
    assert len(claimed) > 80
    assert claimed - named == set()


def test_every_row_names_elements_and_says_how_far() -> None:
    for row in SUBSET:
        assert tags(row.elements) or "$" in row.elements, row
        assert row.supported.split()[0] in {"yes", "no", "read", "heading", "state"}, row
        assert row.supported == "yes" or row.notes, row  # what is not all there says why
