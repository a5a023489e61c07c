"""The cost of grading each submission sealed off (bubblewrap) against not isolated.

Two measures, each the median of a few runs:

- a process: ``python -c pass`` started sealed off (bwrap, cgroup, setpriv, prlimit) or directly;
- a submission: a kernel started and lesson 00 executed (the instructor's notebook, with its hidden
  tests) by the runner (``selfattention.coursework.runner.run_notebook``), sealed off or not.

Quick mode (the benchmark's smoke test) measures the process only, once.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from .common import ROOT, Config, Log, Results

NAME, TITLE = "grading", "## Grading: the cost of isolation per submission"


def _median_seconds(run: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _execute_lesson(policy: object) -> None:
    import nbformat

    from selfattention.coursework.runner import run_notebook

    nb = nbformat.read(ROOT / "notebooks" / "00_roadmap.ipynb", as_version=4)
    with tempfile.TemporaryDirectory() as root:
        run_notebook(nb, Path(root), policy)


def run(cfg: Config, res: Results, log: Log) -> None:
    """Measure (seconds, into ``res.isolation``); nothing when this machine cannot seal a process off."""
    from selfattention.coursework.runner import RunPolicy, run_sandboxed, unavailable

    sealed = RunPolicy(cell_timeout=120)
    if unavailable(sealed):
        return
    repeats = 1 if cfg.quick else 5
    log("  a process sealed off vs not")
    cmd = [sys.executable, "-c", "pass"]
    res.isolation = {
        "process_plain": _median_seconds(lambda: subprocess.run(cmd, check=True), repeats),
        "process_sealed": _median_seconds(lambda: run_sandboxed(sealed, cmd), repeats),
        "repeats": repeats,
    }
    if not cfg.quick:
        log("  lesson 00 executed with its kernel sealed off vs not")
        res.isolation["lesson_plain"] = _median_seconds(
            lambda: _execute_lesson(RunPolicy(cell_timeout=120, isolation="none")), 3)
        res.isolation["lesson_sealed"] = _median_seconds(lambda: _execute_lesson(sealed), 3)


def lines(cfg: Config, res: Results) -> list[str]:
    from selfattention.coursework.runner import RunPolicy, unavailable

    out = [TITLE, ""]
    numbers = res.isolation
    if not numbers:
        why = unavailable(RunPolicy()) or "not measured in this run"
        return [*out, f"Not measured: {why}.", ""]
    plain, sealed = numbers["process_plain"], numbers["process_sealed"]
    out += [
        f"Defaults: {RunPolicy().label}. Median of {numbers['repeats']:g} runs (a process) and 3 runs "
        "(a submission).",
        "",
        "| what | not isolated | sealed off (bwrap) | cost per submission |",
        "| --- | ---: | ---: | ---: |",
        f"| start `python -c pass` | {plain:.3f} s | {sealed:.3f} s | {sealed - plain:+.3f} s |",
    ]
    if "lesson_plain" in numbers:
        plain, sealed = numbers["lesson_plain"], numbers["lesson_sealed"]
        out.append(f"| start a kernel, run lesson 00 with its hidden tests | {plain:.2f} s | {sealed:.2f} s "
                   f"| {sealed - plain:+.2f} s |")
    return [*out, ""]
