"""Every lesson notebook follows the course's conventions (COURSE_DESIGN.md)."""

from __future__ import annotations

import re
import sys

from conftest import NOTEBOOKS, ROOT, load_notebook

sys.path.insert(0, str(ROOT / "tools"))
from lesson_load import MAX_CELLS, MAX_MINUTES, lesson_load  # noqa: E402


def test_lessons_exist_in_order():
    names = [p.name for p in NOTEBOOKS]
    assert names, "no lesson notebooks found in notebooks/"
    numbers = [int(n[:2]) for n in names]
    assert numbers == list(range(len(numbers))), f"lessons are not numbered 00, 01, ...: {names}"


def test_executed_in_order_from_a_fresh_kernel(notebook):
    path, nb = notebook
    counts = [c.get("execution_count") for c in nb["cells"] if c["cell_type"] == "code"]
    assert counts == list(range(1, len(counts) + 1)), (
        f"{path.name}: execution counts are {counts}; re-run it with "
        "'Restart Kernel and Run All Cells' (or nbconvert --execute) before committing"
    )


def test_no_error_outputs(notebook):
    path, nb = notebook
    for i, cell in enumerate(nb["cells"]):
        for out in cell.get("outputs", []):
            assert out.get("output_type") != "error", f"{path.name}: cell {i} has an error output"
            if out.get("output_type") == "stream":
                assert out.get("name") != "stderr" or not "".join(out["text"]).strip(), (
                    f"{path.name}: cell {i} writes to stderr: {''.join(out['text'])[:200]}"
                )


def test_python3_kernel(notebook):
    path, nb = notebook
    assert nb["metadata"]["kernelspec"]["name"] == "python3", path.name


def test_first_cell_states_objectives_prerequisites_and_time(notebook):
    path, nb = notebook
    first = nb["cells"][0]
    text = "".join(first["source"])
    assert first["cell_type"] == "markdown", f"{path.name}: the first cell must be markdown"
    assert text.lstrip().startswith("# "), f"{path.name}: the first cell must open with a title"
    assert re.search(r"learning objectives", text, re.I), f"{path.name}: no learning objectives"
    assert re.search(r"prerequisites", text, re.I), f"{path.name}: no prerequisites"
    assert re.search(r"\btime\b.*\d+\s*min", text, re.I), f"{path.name}: no time estimate in minutes"


def test_lesson_template_sections(notebook):
    path, nb = notebook
    md = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    for heading in ("Key takeaways", "What comes next"):
        assert re.search(rf"^#+ .*{heading}", md, re.I | re.M), f"{path.name}: no '{heading}' section"


def test_imports_package_by_name_only(notebook):
    path, nb = notebook
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    assert "sys.path" not in code, f"{path.name}: edits sys.path; import selfattention by name"
    assert "%run" not in code, f"{path.name}: uses %run; import selfattention by name"
    if not path.name.startswith("00_"):
        assert re.search(r"^\s*(import selfattention|from selfattention)", code, re.M), path.name


def test_nothing_machine_specific_in_outputs(notebook):
    path, nb = notebook
    for i, cell in enumerate(nb["cells"]):
        for out in cell.get("outputs", []):
            text = "".join(out.get("text", "")) + "".join(out.get("data", {}).get("text/plain", ""))
            for pattern in (r"/tmp/", r"/root/", r"/home/\w+", r"0x[0-9a-f]{8,}", str(ROOT)):
                assert not re.search(pattern, text), f"{path.name}: cell {i} output matches {pattern}"


def test_output_ignored_only_by_exception(notebook):
    path, nb = notebook
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    ignored = [c for c in code if "nbval-ignore-output" in c.get("metadata", {}).get("tags", [])]
    assert len(ignored) <= max(3, len(code) // 5), (
        f"{path.name}: {len(ignored)} of {len(code)} code cells are excluded from comparison"
    )


def test_readme_lists_every_lesson_with_its_time():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for path in NOTEBOOKS:
        first = "".join(load_notebook(path)["cells"][0]["source"])
        minutes = re.search(r"\*\*Time\.\*\*\D*(\d+)\s*min", first)
        assert minutes, f"{path.name}: no '**Time.** About N min' in the first cell"
        pattern = rf"^\| {path.name[:2]} \| `{re.escape(path.name)}` \|.*\| (\d+) min \|$"
        row = re.search(pattern, readme, re.M)
        assert row, f"README.md has no lesson-table row for {path.name}"
        assert row.group(1) == minutes.group(1), (
            f"README.md gives {path.name} {row.group(1)} min, the notebook says {minutes.group(1)} min"
        )


def test_stated_time_covers_the_load_and_fits_one_sitting(notebook):
    """tools/lesson_load.py's rule: the stated time covers the core load; at most 75 min and 70 cells."""
    path, _ = notebook
    r = lesson_load(path)
    load = round(r.core.minutes)
    assert r.stated is not None, f"{path.name}: no '**Time.** About N min' in the first cell"
    assert load <= r.stated <= MAX_MINUTES, (
        f"{path.name}: states {r.stated} min, but its load is {load} min "
        f"({r.core.words} words, {r.core.code_lines} code lines, {r.core.exercises} exercises, "
        f"{r.core.written} written answers; tools/lesson_load.py); at most {MAX_MINUTES} min"
    )
    assert r.cells <= MAX_CELLS, f"{path.name}: {r.cells} cells, at most {MAX_CELLS}"
    if r.deeper.minutes >= 1:
        first = "".join(load_notebook(path)["cells"][0]["source"])
        extra = re.search(r"Going deeper[^\n]*?(\d+)\s*min|(\d+)\s*min[^\n]*?Going deeper", first)
        assert extra, f"{path.name}: the first cell does not say how long the Going deeper sections add"
        said = int(extra.group(1) or extra.group(2))
        assert said >= round(r.deeper.minutes), (
            f"{path.name}: says Going deeper adds {said} min; its load is {round(r.deeper.minutes)} min"
        )
