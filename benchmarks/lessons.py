"""Section 1: each lesson executed top to bottom in a fresh kernel, and its kernel's peak memory."""

from __future__ import annotations

import re
import statistics
import time
from pathlib import Path

from . import memory
from .common import ROOT, Config, Log, Results, lesson_limit

NAME, TITLE = "lessons", "## 1. Lessons, cold"


def _execute_cold(nb: object, cwd: Path, timeout_s: int) -> float:
    """Seconds to execute notebook ``nb`` in a fresh kernel started in ``cwd`` (start and shutdown included).

    The kernel talks over local (IPC) sockets in a private directory rather than TCP ports, so kernels
    started at the same time by other programs cannot take its ports.
    """
    import tempfile

    from nbclient import NotebookClient
    from traitlets.config import Config as TraitletsConfig

    kernel_name = nb.metadata.get("kernelspec", {}).get("name", "python3")
    with tempfile.TemporaryDirectory(prefix="bench-kernel-") as sockets:
        ipc = TraitletsConfig({"KernelManager": {"transport": "ipc", "ip": str(Path(sockets) / "kernel")}})
        client = NotebookClient(
            nb, config=ipc, kernel_name=kernel_name, timeout=timeout_s,
            resources={"metadata": {"path": str(cwd)}},
        )  # the client starts the kernel and shuts it down after the last cell
        memory.watch(client)
        start = time.perf_counter()
        client.execute()
        return time.perf_counter() - start


def time_notebook(path: Path, timeout_s: int = 180) -> float:
    """Seconds to execute ``path`` top to bottom in a fresh kernel; ``timeout_s`` bounds each cell."""
    import nbformat

    return _execute_cold(nbformat.read(path, as_version=4), path.parent, timeout_s)


def time_notebook_retrying(path: Path) -> float:
    """``time_notebook(path)``, tried a second time if the kernel (not a cell) failed, e.g. did not start."""
    from nbclient.exceptions import CellExecutionError

    try:
        return time_notebook(path)
    except CellExecutionError:
        raise
    except Exception:
        return time_notebook(path)


def time_empty_kernel() -> float:
    """Seconds to start a fresh kernel, run ``pass`` and shut it down: the floor under every lesson."""
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("pass")])
    return _execute_cold(nb, ROOT, timeout_s=60)


def run(cfg: Config, res: Results, log: Log) -> None:
    """Median of ``cfg.lesson_repeats`` cold runs per notebook (all notebooks once, then again)."""
    res.empty_kernel = []
    memory.reset()
    for _ in range(cfg.lesson_repeats):
        try:
            res.empty_kernel.append(time_empty_kernel())
        except Exception:  # a kernel that did not start: once more
            res.empty_kernel.append(time_empty_kernel())
    log(f"  empty kernel: {statistics.median(res.empty_kernel):.1f} s")
    runs: dict[str, list[float]] = {p.name: [] for p in cfg.lesson_paths}
    for r in range(cfg.lesson_repeats):
        for path in cfg.lesson_paths:
            if path.name in res.lesson_errors:
                continue  # it failed once: its time would not mean anything
            try:
                seconds = time_notebook_retrying(path)
            except Exception as exc:  # a failing cell, a timeout, a dead kernel: report it, go on
                last_line = (str(exc).strip().splitlines() or [type(exc).__name__])[-1]
                last_line = re.sub(r"\x1b\[[0-9;]*m", "", last_line)  # no terminal colours
                res.lesson_errors[path.name] = f"{type(exc).__name__}: {last_line[:200]}"
                log(f"  lesson {path.name} run {r + 1} FAILED: {res.lesson_errors[path.name]}")
                continue
            runs[path.name].append(seconds)
            memory.keep(path.name)
            log(f"  lesson {path.name} run {r + 1}: {seconds:.1f} s")
    res.lessons = {name: times for name, times in runs.items() if name not in res.lesson_errors}


def lines(cfg: Config, res: Results) -> list[str]:
    """The section's markdown: a row per lesson, the empty kernel's floor, the kernels' peaks."""
    L: list[str] = [TITLE, ""]
    add = L.append
    add("Each notebook executed top to bottom in a fresh kernel (nbclient; the kernel in the notebook's "
        "folder, talking over local sockets), kernel start and shutdown included; median of "
        f"{cfg.lesson_repeats} run(s), the notebooks run in turn.")
    add("")
    if res.lessons or res.lesson_errors:
        add("| notebook | median (s) | runs (s) | limit (s) | within |")
        add("|---|---|---|---|---|")
        for name, runs in res.lessons.items():
            m = statistics.median(runs)
            lim = lesson_limit(name)
            add(f"| {name} | {m:.1f} | {', '.join(f'{t:.1f}' for t in runs)} | {lim:.0f} | "
                f"{'yes' if m <= lim else 'no'} |")
        for name, err in res.lesson_errors.items():
            add(f"| {name} | failed | {err.replace('|', '/')} | {lesson_limit(name):.0f} | no |")
        total = sum(statistics.median(t) for t in res.lessons.values())
        add(f"| all lessons{' that ran' if res.lesson_errors else ''} | {total:.1f} | | | |")
        add("")
        floor = statistics.median(res.empty_kernel)
        add(f"Of each figure, about {floor:.1f} s is the kernel itself: starting a fresh kernel, "
            "running `pass` and shutting it down takes that long (median of "
            f"{', '.join(f'{t:.1f}' for t in res.empty_kernel)} s).")
        add("")
        L.extend(memory.report_lines())
    else:
        add("Not measured in this run.")
    add("")
    return L
