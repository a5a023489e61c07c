"""The cost of grading each submission sealed off (bubblewrap) against not isolated.

Called by ``benchmarks/run.py`` (``make bench``) after RESULTS.md is written: it appends a section.
Two measures, each the median of a few runs:

- a process: ``python -c pass`` started sealed off (bwrap, cgroup, setpriv, prlimit) or directly;
- a submission: a kernel started and lesson 00 executed (the instructor's notebook, with its hidden
  tests) by the grader's executor, with the kernel sealed off or not.

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

ROOT = Path(__file__).resolve().parent.parent


def _median_seconds(run: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _execute_lesson(isolation: object) -> None:
    import nbformat

    from selfattention.coursework.course import BoundedExecute, course_config

    lesson = ROOT / "notebooks" / "00_roadmap.ipynb"
    nb = nbformat.read(lesson, as_version=4)
    with tempfile.TemporaryDirectory() as root:
        config = course_config(Path(root), cell_timeout=120, isolation=isolation)
        BoundedExecute(config=config).preprocess(nb, {"metadata": {"path": root}})


def bench_grading(results: Path, log: Callable[[str], None], quick: bool = False) -> dict[str, float]:
    """Measure, append a section to ``results`` (RESULTS.md) and return the numbers (seconds)."""
    from selfattention.coursework.sandbox import Isolation, run_sandboxed, unavailable

    sealed = Isolation()
    lines = ["", "## Grading: the cost of isolation per submission", ""]
    why = unavailable(sealed)
    if why:
        lines.append(f"Not measured: no sandbox on this machine ({why}).")
        results.write_text(results.read_text(encoding="utf-8") + "\n".join(lines) + "\n", encoding="utf-8")
        return {}
    repeats = 1 if quick else 5
    log("grading: a process sealed off vs not")
    cmd = [sys.executable, "-c", "pass"]
    numbers = {
        "process_plain": _median_seconds(lambda: subprocess.run(cmd, check=True), repeats),
        "process_sealed": _median_seconds(lambda: run_sandboxed(sealed, cmd), repeats),
    }
    if not quick:
        log("grading: lesson 00 executed with its kernel sealed off vs not")
        numbers["lesson_plain"] = _median_seconds(lambda: _execute_lesson(Isolation("none")), 3)
        numbers["lesson_sealed"] = _median_seconds(lambda: _execute_lesson(sealed), 3)
    lines += [
        f"Defaults: {sealed.label}. Median of {repeats} runs (a process) and 3 runs (a submission).",
        "",
        "| what | not isolated | sealed off (bwrap) | cost per submission |",
        "| --- | ---: | ---: | ---: |",
        f"| start `python -c pass` | {numbers['process_plain']:.3f} s | {numbers['process_sealed']:.3f} s "
        f"| {numbers['process_sealed'] - numbers['process_plain']:+.3f} s |",
    ]
    if "lesson_plain" in numbers:
        plain, sealed_s = numbers["lesson_plain"], numbers["lesson_sealed"]
        lines.append(f"| start a kernel, run lesson 00 with its hidden tests | {plain:.2f} s "
                     f"| {sealed_s:.2f} s | {sealed_s - plain:+.2f} s |")
    results.write_text(results.read_text(encoding="utf-8") + "\n".join(lines) + "\n", encoding="utf-8")
    return numbers
