"""Peak memory of each lesson's kernel: what a JupyterHub must give each learner.

``run.py`` times every lesson in a fresh kernel (nbclient). ``watch(client)`` makes that client read the
kernel process's peak resident set size after every cell: ``VmHWM`` in ``/proc/PID/status`` (Linux), the most
physical memory the process ever held, shared libraries (torch's) included. The last reading, taken while
the kernel still runs, is the lesson's peak; ``keep(name)`` files it under the notebook's name and
``report_lines()`` writes the table and the per-learner figure for RESULTS.md.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

#: notebook name -> peak RSS of its kernel in bytes, one per run
PEAKS: dict[str, list[int]] = {}
_last: list[int | None] = [None]  # the peak of the client watched last (None: not readable here)

GIB = 2**30
MIB = 2**20
#: A learner may keep the previous lesson's kernel running while starting the next one.
KERNELS_OPEN = 2
#: Headroom on top of the measured peaks: other learners' inputs, bigger numbers typed into a widget.
HEADROOM = 1.5


def peak_rss(pid: int) -> int | None:
    """Peak resident set size of process ``pid`` in bytes (VmHWM), or None where /proc has no such field."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024  # reported in kB
    except (OSError, ValueError):
        pass
    return None


def _kernel_pid(client: Any) -> int | None:
    """PID of the kernel process a running nbclient ``NotebookClient`` talks to (local kernels only)."""
    process = getattr(getattr(client.km, "provisioner", None), "process", None)
    return getattr(process, "pid", None)


def watch(client: Any) -> None:
    """Make ``client`` (an nbclient NotebookClient, before ``execute()``) record its kernel's peak RSS."""
    _last[0] = None

    def after_cell(**_: Any) -> None:
        pid = _kernel_pid(client)
        peak = peak_rss(pid) if pid is not None else None
        if peak is not None:
            _last[0] = max(_last[0] or 0, peak)

    client.on_cell_executed = after_cell


def keep(name: str) -> None:
    """File the peak of the run that just ended under notebook ``name``."""
    if _last[0] is not None:
        PEAKS.setdefault(name, []).append(_last[0])


def reset() -> None:
    PEAKS.clear()
    _last[0] = None


def per_learner_bytes(largest: int) -> int:
    """Memory a hub should guarantee each learner for the kernels: KERNELS_OPEN kernels of the largest
    lesson, times HEADROOM, rounded up to a quarter GiB."""
    return math.ceil(largest * KERNELS_OPEN * HEADROOM / (GIB / 4)) * (GIB // 4)


def report_lines() -> list[str]:
    """Markdown for RESULTS.md: each lesson's kernel peak and the per-learner figure (empty if none)."""
    if not PEAKS:
        return []
    peaks = {name: max(runs) for name, runs in PEAKS.items()}
    largest = max(peaks, key=lambda n: peaks[n])
    lines = [
        "### Peak memory of each lesson's kernel",
        "",
        "The kernel process's peak resident memory (`VmHWM` in `/proc/PID/status`, read after every cell, "
        "shared libraries included), the largest of the runs above. This is what one learner's kernel needs "
        "on a JupyterHub.",
        "",
        "| notebook | peak RSS (MiB) | runs (MiB) |",
        "|---|---|---|",
    ]
    for name, value in peaks.items():
        runs = ", ".join(f"{r / MIB:.0f}" for r in PEAKS[name])
        lines.append(f"| {name} | {value / MIB:.0f} | {runs} |")
    need = per_learner_bytes(peaks[largest])
    lines += [
        f"| largest | {peaks[largest] / MIB:.0f} ({largest}) | |",
        "",
        f"**Per learner on a hub: {need / GIB:g} GiB for kernels** ({KERNELS_OPEN} kernels of the largest "
        f"lesson open at once, times {HEADROOM} headroom, rounded up to a quarter GiB), plus the single-user "
        "Jupyter server itself (`docs/instructors.md`).",
        "",
    ]
    return lines
