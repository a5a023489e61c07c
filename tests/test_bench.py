"""The benchmark script runs end to end (quick mode, tiny sizes) and writes a well-formed RESULTS.md.

Only the structure is checked, never a timing: timings belong to `make bench`, not to `make test`.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import nbformat
from conftest import ROOT


def load_script():
    """benchmarks/run.py as a module (run in this process: torch and nbformat are imported once)."""
    spec = importlib.util.spec_from_file_location("benchmarks_run", ROOT / "benchmarks" / "run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module

SECTIONS = [
    "# Benchmarks",
    "## Machine",
    "## Targets",
    "## 1. Lessons, cold",
    "## 2. Attention forward, CPU, float32",
    "## 3. Full vs block-wise attention",
]


def test_quick_benchmark_writes_results(tmp_path: Path) -> None:
    notebook = tmp_path / "00_tiny.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1 + 1")]), notebook)
    out = tmp_path / "out"
    assert load_script().main(["--quick", "--out", str(out), "--notebooks", str(notebook)]) == 0

    text = (out / "RESULTS.md").read_text(encoding="utf-8")
    positions = [text.find(s) for s in SECTIONS]
    missing = [s for s, p in zip(SECTIONS, positions, strict=True) if p == -1]
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
