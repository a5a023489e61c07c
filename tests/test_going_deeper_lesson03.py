"""Each Going deeper section of lesson 03 runs after the main path alone.

A learner may skip any Going deeper section, so none may need a name that only another one defines. For every
section, the main path's code cells run in a fresh namespace, then that section's code cells.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import matplotlib
import pytest

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "03_matrix_form.ipynb"
_HEADING = re.compile(r"^(#{2,4})\s+(.*)$", re.M)


def _split(nb: dict) -> tuple[list[str], dict[str, list[str]]]:
    """The main path's code and each Going deeper section's code, in notebook order."""
    main: list[str] = []
    sections: dict[str, list[str]] = {}
    open_title, open_level = None, 0
    for cell in nb["cells"]:
        text = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            for hashes, title in _HEADING.findall(text):
                if open_title and len(hashes) <= open_level:
                    open_title, open_level = None, 0
                if not open_title and "going deeper" in title.lower():
                    open_title, open_level = title.strip(), len(hashes)
                    sections[open_title] = []
            continue
        if cell["cell_type"] != "code" or "course-setup" in cell.get("metadata", {}).get("tags", []):
            continue
        code = text.split("### BEGIN HIDDEN TESTS")[0]
        (sections[open_title] if open_title else main).append(code)
    return main, sections


_MAIN, _SECTIONS = _split(json.loads(NOTEBOOK.read_text(encoding="utf-8")))


def test_the_lesson_has_going_deeper_sections():
    assert len(_SECTIONS) >= 3


@pytest.mark.parametrize("title", list(_SECTIONS))
def test_a_going_deeper_section_runs_after_the_main_path_alone(title, monkeypatch):
    matplotlib.use("Agg")
    monkeypatch.chdir(NOTEBOOK.parent)
    namespace: dict = {"__name__": "__main__"}
    for code in _MAIN + _SECTIONS[title]:
        exec(compile(code, f"<{NOTEBOOK.name}>", "exec"), namespace)
