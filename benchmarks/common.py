"""What every section of the benchmark shares: the run's configuration and results, the timing helpers,
the machine's description, the targets, and the formatting of figures."""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent

# Sizes of section 2 (from the issue) and section 3.
BATCH, D_MODEL, NUM_HEADS = 8, 256, 8
D_K = D_MODEL // NUM_HEADS
BLOCK_D_K, BLOCK_SIZE = 64, 128

# Targets (issue 10).
# The lessons that load the pretrained model (lessons 11 and 12) get the longer limit.
LESSON_LIMIT_S, PRETRAINED_LIMIT_S, PRETRAINED_LESSONS = 20.0, 40.0, ("11_", "12_")
CHECK_LIMIT_S, TEST_LIMIT_S = 120.0, 480.0  # the test loop, on 2 cores (issue 24)
MHA_RATIO_LIMIT, MHA_TARGET_T = 1.5, 512
BLOCK_DIFF_LIMIT, BLOCK_MEMORY_LIMIT = 1e-5, 0.10
# Above this 1-minute load average per core, RESULTS.md says that the machine was busy.
BUSY_LOAD_PER_CORE = 1.25

# Method names of section 2, in the order of the tables.
NP_SDPA = "ours: NumPy scaled_dot_product_attention"
OUR_MHA = "ours: MultiHeadAttention"
TORCH_SDPA = "torch: F.scaled_dot_product_attention"
TORCH_MHA_W = "torch: nn.MultiheadAttention, need_weights=True"
TORCH_MHA_NOW = "torch: nn.MultiheadAttention, need_weights=False"
METHODS = (NP_SDPA, OUR_MHA, TORCH_SDPA, TORCH_MHA_W, TORCH_MHA_NOW)
RETURNS_WEIGHTS = {NP_SDPA: True, OUR_MHA: True, TORCH_SDPA: False, TORCH_MHA_W: True, TORCH_MHA_NOW: False}
REFERENCE = TORCH_MHA_W
# With autograd recording (training mode, dropout 0): the other like-for-like pair.
GRAD_OURS = "ours: MultiHeadAttention, autograd on"
GRAD_REF = "torch: nn.MultiheadAttention(need_weights=True), autograd on"


@dataclass
class Config:
    """What one run measures."""

    lesson_paths: list[Path]
    lesson_repeats: int
    attention_T: list[int]
    weights_max_T: int  # largest T for the methods that return (batch, heads, T, T) weights
    numpy_max_T: int  # largest T for our NumPy function (single-threaded softmax: the slowest)
    block_T: list[int]
    time_budget_s: float  # time spent on repeats of one (method, T) cell after warm-up
    min_repeats: int
    max_repeats: int
    full: bool
    quick: bool
    skip: list[str] = field(default_factory=list)  # sections left out (their names)


@dataclass
class Results:
    """Everything RESULTS.md reports."""

    machine: dict[str, str] = field(default_factory=dict)
    lessons: dict[str, list[float]] = field(default_factory=dict)
    empty_kernel: list[float] = field(default_factory=list)
    lesson_errors: dict[str, str] = field(default_factory=dict)  # notebook -> why it did not run
    make_test: dict[str, float | int] | None = None  # the test loop (section 5): make test's figures
    make_check: dict[str, float | int] | None = None  # ... and make check's
    isolation: dict[str, float] = field(default_factory=dict)  # grading: seconds sealed off vs not
    class_grading: dict[str, Any] = field(default_factory=dict)  # grading a class: class_grading.py
    hub_load: dict[str, Any] = field(default_factory=dict)  # a class on a hub at once: hub_load.py
    widget_lines: list[str] = field(default_factory=list)  # section 4, as widgets.py wrote it
    attention: dict[str, dict[int, float]] = field(default_factory=dict)  # method -> T -> seconds
    attention_repeats: dict[str, dict[int, int]] = field(default_factory=dict)
    attention_checks: dict[str, float | str] = field(default_factory=dict)
    breakdown: dict[str, float] = field(default_factory=dict)  # our MHA at MHA_TARGET_T, seconds
    reference_ops: list[str] = field(default_factory=list)  # the aten ops nn.MultiheadAttention ran
    with_grad: dict[str, float] = field(default_factory=dict)  # forward with autograd on, seconds
    block_time: dict[str, dict[int, float]] = field(default_factory=dict)  # "full"/"block-wise" -> T -> s
    block_peak: dict[str, dict[int, int]] = field(default_factory=dict)  # -> T -> bytes
    block_diff: dict[int, float] = field(default_factory=dict)
    sdpa: dict[str, Any] = field(default_factory=dict)  # the GPU section: {"rows": [...], "device": str}
    load_before: tuple[float, float, float] = (0.0, 0.0, 0.0)
    load_after: tuple[float, float, float] = (0.0, 0.0, 0.0)
    load_samples: list[float] = field(default_factory=list)  # 1-minute load average at each section
    started: str = ""
    seconds: float = 0.0


def median_time(
    fn: Callable[[], object], budget_s: float, min_repeats: int, max_repeats: int
) -> tuple[float, int]:
    """Median wall time of ``fn()`` in seconds, after one warm-up call; returns (median, repeats).

    The number of repeats fits ``budget_s`` (estimated from the warm-up), clamped to
    [min_repeats, max_repeats].
    """
    start = time.perf_counter()
    fn()  # warm-up: first-call allocations, thread pool start, caches
    first = time.perf_counter() - start
    repeats = int(min(max_repeats, max(min_repeats, budget_s // max(first, 1e-9))))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), repeats


def fit_exponent(Ts: Sequence[int], values: Sequence[float]) -> float:
    """Slope b of the least-squares line ``log(value) = a + b log(T)``: value grows like T**b."""
    if len(Ts) < 2:
        return float("nan")
    b, _a = np.polyfit(np.log(np.asarray(Ts, float)), np.log(np.asarray(values, float)), 1)
    return float(b)


def load_average() -> tuple[float, float, float]:
    """1, 5 and 15 minute load averages (zeros where the platform has none)."""
    try:
        return os.getloadavg()
    except OSError:  # pragma: no cover
        return (0.0, 0.0, 0.0)


def _git(*args: str) -> str:
    try:
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def machine_description() -> dict[str, str]:
    """CPU model, cores, memory, library versions and thread counts of this machine."""
    import torch

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:  # pragma: no cover
        pass
    memory = "unknown"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                memory = f"{int(line.split()[1]) / 2**20:.1f} GiB"
                break
    except OSError:  # pragma: no cover
        pass
    try:
        from threadpoolctl import threadpool_info

        blas = ", ".join(
            f"{p['internal_api']} {p.get('version') or ''} ({p['num_threads']} threads)".replace("  ", " ")
            for p in threadpool_info()
        )
    except ImportError:  # pragma: no cover
        blas = "unknown (threadpoolctl not installed)"
    commit = _git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = _git("status", "--porcelain", "--", "src", "notebooks")
    return {
        "CPU": cpu,
        "cores (os.cpu_count)": str(os.cpu_count()),
        "memory": memory,
        "OS": f"{platform.system()} {platform.release()}",
        "Python": platform.python_version(),
        "numpy": np.__version__,
        "torch": torch.__version__,
        "torch threads": str(torch.get_num_threads()),
        "BLAS / OpenMP thread pools": blas,
        "commit": commit + (" (with uncommitted changes in src/ or notebooks/)" if dirty else ""),
    }



Log = Callable[[str], None]


def ms(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1e3:.2f}"


def mib(n: int) -> str:
    return f"{n / 2**20:.2f}"


def verdict(ok: bool | None) -> str:
    return "not measured" if ok is None else ("**met**" if ok else "**not met**")


def lesson_limit(name: str) -> float:
    return PRETRAINED_LIMIT_S if name.startswith(PRETRAINED_LESSONS) else LESSON_LIMIT_S


LESSONS_TARGET = (f"every lesson cold ≤ {LESSON_LIMIT_S:.0f} s (lessons 11-12, which load the pretrained "
                  f"model, ≤ {PRETRAINED_LIMIT_S:.0f} s)")


def target_rows(res: Results) -> list[tuple[str, str, bool | None, str]]:
    """(target, measured figure, met?, why / what would meet it) for each target of the issue: one row per
    target, its first cell the same whether or not this run measured it (``update_targets`` finds rows
    by it)."""
    rows: list[tuple[str, str, bool | None, str]] = []

    # Lessons.
    if res.lessons:
        medians = {n: statistics.median(t) for n, t in res.lessons.items()}
        slow = {n: m for n, m in medians.items() if m > lesson_limit(n)}
        worst = max(medians, key=lambda n: medians[n] / lesson_limit(n))
        figure = f"slowest relative to its limit: {worst} {medians[worst]:.1f} s"
        notes = []
        if slow:
            notes.append("over the limit: " + ", ".join(f"{n} ({m:.1f} s)" for n, m in slow.items()))
        if res.lesson_errors:
            notes.append("did not run to the end: " + ", ".join(res.lesson_errors))
        rows.append((LESSONS_TARGET, figure, not slow and not res.lesson_errors, "; ".join(notes)))
    elif res.lesson_errors:
        rows.append((LESSONS_TARGET, "no lesson ran to the end", False,
                     "did not run to the end: " + ", ".join(res.lesson_errors)))
    else:
        rows.append((LESSONS_TARGET, "not measured in this run", None, ""))

    # The test loop (section 5).
    target = (f"`make check` ≤ {CHECK_LIMIT_S / 60:.0f} min and `make test` ≤ {TEST_LIMIT_S / 60:.0f} min "
              "of pytest, on 2 cores")
    if res.make_test is not None and res.make_check is not None:
        check, test = res.make_check, res.make_test
        ok = (check["seconds"] <= CHECK_LIMIT_S and (test["pytest_seconds"] or 1e9) <= TEST_LIMIT_S
              and check["returncode"] == test["returncode"] == 0)
        rows.append((target, f"make check {check['seconds']:.0f} s; make test {test['pytest_seconds']} s of "
                     f"pytest ({test['seconds'] / 60:.1f} min in all)", ok,
                     "" if test["returncode"] == 0 else "some tests failed: a failing run is not a timing"))
    else:
        rows.append((target, "not measured in this run (run `make bench FULL=1`)", None, ""))

    # Our MultiHeadAttention vs torch, like for like.
    ours_t = res.attention.get(OUR_MHA, {}).get(MHA_TARGET_T)
    ref_t = res.attention.get(REFERENCE, {}).get(MHA_TARGET_T)
    if ours_t is not None and ref_t is not None:
        ratio = ours_t / ref_t
        why = ""
        if ratio > MHA_RATIO_LIMIT:
            why = ("see where our forward spends its time (section 2): PyTorch's fused inference path "
                   "computes the scores and their softmax in one buffer")
        if res.with_grad:
            g = res.with_grad[GRAD_OURS] / res.with_grad[GRAD_REF]
            why = "; ".join(w for w in (why, f"with autograd on (training): {g:.2f}x") if w)
        rows.append(
            (f"our MultiHeadAttention within {MHA_RATIO_LIMIT}x of nn.MultiheadAttention "
             f"(need_weights=True) at T = {MHA_TARGET_T}",
             f"{ratio:.2f}x ({ours_t * 1e3:.1f} ms vs {ref_t * 1e3:.1f} ms)", ratio <= MHA_RATIO_LIMIT, why)
        )
    else:
        rows.append((f"our MultiHeadAttention within {MHA_RATIO_LIMIT}x of nn.MultiheadAttention "
                     f"(need_weights=True) at T = {MHA_TARGET_T}", "not measured in this run", None, ""))

    # Block-wise attention.
    block_target = (f"block-wise: max abs diff ≤ {BLOCK_DIFF_LIMIT:.0e} and peak memory ≤ "
                    f"{BLOCK_MEMORY_LIMIT:.0%} of full at T = 8192")
    if res.block_diff:
        T = max(res.block_diff)
        diff = res.block_diff[T]
        mem = res.block_peak["block-wise"][T] / res.block_peak["full"][T]
        ok = diff <= BLOCK_DIFF_LIMIT and mem <= BLOCK_MEMORY_LIMIT
        full_size = T == 8192
        rows.append(
            (block_target,
             f"at T = {T}: max abs diff {diff:.1e}, peak memory {mem:.1%} of full",
             ok if full_size else None, "" if full_size else f"largest T in this run is {T}, not 8192"),
        )
    else:
        rows.append((block_target, "not measured in this run", None, ""))
    return rows


