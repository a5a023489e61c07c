"""benchmarks/memory.py: the peak RSS of a lesson's kernel, and the per-learner figure in RESULTS.md."""

from __future__ import annotations

import os
import re
from pathlib import Path

import nbformat

from benchmarks import memory
from benchmarks.__main__ import main

# A cell that holds 200 MiB at once: the kernel's peak must show it, though the array is freed at once.
BIG_CELL = "import numpy as np\nx = np.ones(200 * 2**20 // 8)\nx.sum()\ndel x"


def test_peak_rss_of_this_process() -> None:
    peak = memory.peak_rss(os.getpid())
    assert peak is not None and peak > 10 * 2**20


def test_per_learner_figure_rounds_up_to_a_quarter_gib() -> None:
    assert memory.per_learner_bytes(2**30 // 2) == int(2**30 * 0.5 * 2 * 1.5)  # 1.5 GiB exactly
    assert memory.per_learner_bytes(2**30 // 2 + 1) == int(2**30 * 1.75)


def test_quick_benchmark_reports_each_kernels_peak(tmp_path: Path) -> None:
    small, big = tmp_path / "00_small.ipynb", tmp_path / "01_big.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1 + 1")]), small)
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(BIG_CELL)]), big)
    out = tmp_path / "out"
    args = ["--quick", "--out", str(out), "--notebooks", str(small), str(big),
            "--skip", "attention", "blockwise"]
    assert main(args) == 0

    text = (out / "RESULTS.md").read_text(encoding="utf-8")
    section = text.split("### Peak memory of each lesson's kernel")[1]
    rows = dict(re.findall(r"^\| (\d\d_\w+\.ipynb) \| (\d+) \|", section, flags=re.M))
    assert set(rows) == {small.name, big.name}, section
    assert int(rows[big.name]) >= int(rows[small.name]) + 150, rows  # the 200 MiB array was seen
    assert re.search(rf"^\| largest \| {rows[big.name]} \({big.name}\) \|", section, flags=re.M)
    assert re.search(r"\*\*Per learner on a hub: [\d.]+ GiB for kernels\*\*", section)
