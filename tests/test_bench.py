"""The benchmark script runs end to end (quick mode, tiny sizes) and writes a well-formed RESULTS.md.

Only the structure is checked, never a timing: timings belong to `make bench`, not to `make test`.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest
from conftest import ROOT

from benchmarks.__main__ import SECTIONS, main

HEADINGS = [
    "# Benchmarks",
    "## Machine",
    "## Targets",
    "## 1. Lessons, cold",
    "## 2. Attention forward, CPU, float32",
    "## 3. Full vs block-wise attention",
    "## GPU: PyTorch's attention backends",
]


def test_quick_benchmark_writes_results(tmp_path: Path) -> None:
    notebook = tmp_path / "00_tiny.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1 + 1")]), notebook)
    out = tmp_path / "out"
    # The class-grading section has its own test (test_bench_class_grading.py): it grades real lessons.
    assert main(["--quick", "--out", str(out), "--notebooks", str(notebook), "--skip", "classgrading"]) == 0

    text = (out / "RESULTS.md").read_text(encoding="utf-8")
    positions = [text.find(s) for s in HEADINGS]
    missing = [s for s, p in zip(HEADINGS, positions, strict=True) if p == -1]
    assert not missing, f"missing sections: {missing}"
    assert positions == sorted(positions), "sections out of order"
    for key in ("CPU", "cores", "memory", "Python", "numpy", "torch", "BLAS", "load average"):
        assert f"| {key}" in text, f"machine table lacks {key!r}"

    # One row per target of the issue, each with a verdict.
    targets = text.split("## Targets")[1].split("\n## ")[0]
    rows = [r for r in targets.splitlines() if r.startswith("| ") and not r.startswith("| target")]
    assert len(rows) == 4, rows
    for row in rows:
        assert re.search(r"\*\*met\*\*|\*\*not met\*\*|not measured", row), row
    assert "00_tiny.ipynb" in text
    # A markdown table row must keep its column count: no stray '|' inside a cell.
    for table in re.findall(r"(?:^\|.*\|\n)+", text + "\n", flags=re.M):
        lines = table.strip().splitlines()
        assert len({line.count("|") for line in lines}) == 1, table

    assert (out / "results.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_benchmarks_import_nothing_from_the_tests_and_each_section_has_its_four_names() -> None:
    for path in sorted((ROOT / "benchmarks").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        nodes = list(ast.walk(tree))
        imported = {alias.name for node in nodes if isinstance(node, ast.Import) for alias in node.names}
        imported |= {node.module or "" for node in nodes if isinstance(node, ast.ImportFrom)}
        from_tests = {m for m in imported if m.split(".")[0] in ("tests", "conftest", "browser_helpers")
                      or m.startswith("test_")}
        assert not from_tests, f"{path.name} imports {from_tests}"
        assert "sys.path" not in path.read_text(encoding="utf-8"), f"{path.name} edits sys.path"
    for section in SECTIONS:
        assert all(hasattr(section, name) for name in ("NAME", "TITLE", "run", "lines")), section.__name__
        assert section.TITLE.startswith("## "), section.__name__


def test_test_loop_section_and_its_target_row(tmp_path: Path) -> None:
    """Section 5 from made-up figures, and its row of the Targets table replaced in place."""
    from benchmarks import report, testloop
    from benchmarks.common import Results, target_rows

    res = Results()
    res.make_check = {"seconds": 90.0, "cpu_seconds": 80.0, "returncode": 0, "load_before": 0.5,
                      "load_after": 1.0, "pytest_seconds": 70.0, "counts": "800 passed"}
    res.make_test = {"seconds": 500.0, "cpu_seconds": 700.0, "returncode": 0, "load_before": 0.5,
                     "load_after": 1.5, "pytest_seconds": 450.0, "counts": "1400 passed"}
    lines = testloop.lines(None, res)
    assert lines[0] == testloop.TITLE
    assert any("| `make test` | 500 s (8.3 min) | 450 s | 700 s |" in line for line in lines), lines
    rows = target_rows(res)
    [row] = [r for r in rows if "make check" in r[0]]
    [lessons] = [r for r in rows if r[0].startswith("every lesson cold")]
    results = tmp_path / "RESULTS.md"
    table = (f"| {row[0]} | not measured | not measured |  |\n| a renamed target | x | y | z |\n"
             f"| {lessons[0]} | 9.0 s | **met** | earlier run |\n")
    head = "## Targets\n\n| target | measured | verdict | note |\n|---|---|---|---|\n"
    results.write_text(f"{head}{table}\n## 1. Next\n", encoding="utf-8")
    report.update_targets(results, rows)
    text = results.read_text(encoding="utf-8")
    assert "make check 90 s; make test 450.0 s of pytest" in text and "**met**" in text
    assert "| a renamed target |" not in text, "a target the code no longer has must not stay in the table"
    assert f"| {lessons[0]} | 9.0 s | **met** | earlier run |" in text, "a target not measured keeps its row"
    cells = [line.split(" | ")[0][2:] for line in text.splitlines() if line.startswith("| ")]
    assert cells[1:] == [r[0] for r in rows], "one row per target, in order"
    assert text.endswith("\n## 1. Next\n")


def test_gpu_section_reports_its_rows_or_why_it_timed_none(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDPA section is CPU-safe (no CUDA: no rows and a sentence saying why) and reports made-up rows (a
    failed backend keeps its row, with dashes)."""
    import torch

    from benchmarks import sdpa
    from benchmarks.common import Results

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    rows, described = sdpa.measure()
    assert rows == [] and "no CUDA device" in described
    res = Results()
    assert sdpa.lines(None, res)[2] == "Not measured in this run."  # type: ignore[arg-type]
    res.sdpa = {"rows": [], "device": "no CUDA device is present: nothing was timed"}
    assert "Not measured: no CUDA device is present" in "\n".join(sdpa.lines(None, res))  # type: ignore[arg-type]
    rows = [sdpa.Row("flash", 1024, 0.0421, 3.0), sdpa.Row("math", 32768, None, None, "out of memory")]
    res.sdpa = {"rows": rows, "device": "A GPU, 80 GiB"}
    text = "\n".join(sdpa.lines(None, res))  # type: ignore[arg-type]
    assert "Device: A GPU, 80 GiB" in text
    assert "| flash | 1,024 | 0.042 | 3.0 |  |" in text
    assert "| math | 32,768 | - | - | out of memory |" in text
