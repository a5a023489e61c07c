"""Benchmarks of the course: lesson run times, attention forward times, full vs block-wise attention.

Run ``make bench`` (or ``.venv/bin/python benchmarks/run.py``); it writes ``RESULTS.md`` and ``results.png``
next to this script. ``--full`` also times a complete ``make test``; ``--quick`` runs tiny sizes only
(a check that the script works, not a measurement).

Sections:

1. Each lesson executed in a fresh kernel (nbclient), median of 3 runs, kernel start included.
2. Attention forward on CPU, float32, batch 8, d_model 256, 8 heads (Q, K, V split into heads:
   (batch, heads, T, d_k) = (8, 8, T, 32)): our NumPy ``scaled_dot_product_attention``, our
   ``MultiHeadAttention``, ``torch.nn.functional.scaled_dot_product_attention`` and
   ``torch.nn.MultiheadAttention`` with and without weights; ratios to ``torch.nn.MultiheadAttention``
   returning per-head weights (like for like with ours, which always returns them); at T = 512 where our
   layer spends its time, which operators PyTorch ran, and both layers again with autograd recording.
3. Full vs block-wise (online-softmax) attention, one head, d_k = 64, float64: time and peak NumPy memory
   (tracemalloc) against T, exponents fitted by least squares on log-log axes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from selfattention import MultiHeadAttention

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/memory.py
import memory  # noqa: E402  (peak RSS of the lessons' kernels)

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent

# Sizes of section 2 (from the issue) and section 3.
BATCH, D_MODEL, NUM_HEADS = 8, 256, 8
D_K = D_MODEL // NUM_HEADS
BLOCK_D_K, BLOCK_SIZE = 64, 128

# Targets (issue 10).
LESSON_LIMIT_S, LESSON_07_LIMIT_S = 20.0, 40.0
MAKE_TEST_LIMIT_S = 600.0
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


@dataclass
class Results:
    """Everything RESULTS.md reports."""

    machine: dict[str, str] = field(default_factory=dict)
    lessons: dict[str, list[float]] = field(default_factory=dict)
    empty_kernel: list[float] = field(default_factory=list)
    lesson_errors: dict[str, str] = field(default_factory=dict)  # notebook -> why it did not run
    make_test: dict[str, float | int] | None = None
    attention: dict[str, dict[int, float]] = field(default_factory=dict)  # method -> T -> seconds
    attention_repeats: dict[str, dict[int, int]] = field(default_factory=dict)
    attention_checks: dict[str, float | str] = field(default_factory=dict)
    breakdown: dict[str, float] = field(default_factory=dict)  # our MHA at MHA_TARGET_T, seconds
    reference_ops: list[str] = field(default_factory=list)  # the aten ops nn.MultiheadAttention ran
    with_grad: dict[str, float] = field(default_factory=dict)  # forward with autograd on, seconds
    block_time: dict[str, dict[int, float]] = field(default_factory=dict)  # "full"/"block-wise" -> T -> s
    block_peak: dict[str, dict[int, int]] = field(default_factory=dict)  # -> T -> bytes
    block_diff: dict[int, float] = field(default_factory=dict)
    load_before: tuple[float, float, float] = (0.0, 0.0, 0.0)
    load_after: tuple[float, float, float] = (0.0, 0.0, 0.0)
    load_samples: list[float] = field(default_factory=list)  # 1-minute load average at each section
    started: str = ""
    seconds: float = 0.0


# ----------------------------------------------------------------------------------------- helpers
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


# ----------------------------------------------------------------------------------------- machine
def machine_description() -> dict[str, str]:
    """CPU model, cores, memory, library versions and thread counts of this machine."""
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


# ----------------------------------------------------------------------------------------- lessons
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


def bench_lessons(cfg: Config, res: Results, log: Callable[[str], None]) -> None:
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


def bench_make_test(res: Results, log: Callable[[str], None]) -> None:
    """Wall time of ``make test`` after ``make setup`` (run first, not timed)."""
    subprocess.run(["make", "setup"], cwd=ROOT, capture_output=True, text=True, check=True)
    start = time.perf_counter()
    proc = subprocess.run(["make", "test"], cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    res.make_test = {"seconds": seconds, "returncode": proc.returncode}
    log(f"  make test: {seconds:.0f} s, exit code {proc.returncode}")


# ----------------------------------------------------------------------------------------- attention
def bench_attention(cfg: Config, res: Results, log: Callable[[str], None]) -> None:
    """Section 2: forward times of the five attention implementations against T."""
    import torch.nn.functional as F

    from selfattention import scaled_dot_product_attention
    from selfattention.layers import _softmax_in_place, attention_weights

    torch.manual_seed(0)
    reference = torch.nn.MultiheadAttention(D_MODEL, NUM_HEADS, batch_first=True).eval()
    ours = MultiHeadAttention.from_torch(reference).eval()
    rng = np.random.default_rng(0)

    with torch.inference_mode():
        # Same layers, same input: the outputs must agree before their speed means anything.
        x = torch.randn(2, 16, D_MODEL)
        out_ours, w_ours = ours(x)
        out_ref, w_ref = reference(x, x, x, need_weights=True, average_attn_weights=False)
        checks = res.attention_checks
        checks["ours vs torch MHA, max abs out diff (T=16)"] = float((out_ours - out_ref).abs().max())
        checks["ours vs torch MHA, max abs weights diff (T=16)"] = float(
            (w_ours - w_ref).abs().max()
        )
        q = rng.standard_normal((2, NUM_HEADS, 16, D_K), dtype=np.float32)
        out_np, _ = scaled_dot_product_attention(q, q, q)
        qt = torch.from_numpy(q)
        out_t = F.scaled_dot_product_attention(qt, qt, qt)
        checks["NumPy vs torch SDPA, max abs out diff (T=16)"] = float(
            np.abs(out_np - out_t.numpy()).max()
        )
        checks["dtype our NumPy function returns for float32 input"] = str(out_np.dtype)

        for T in cfg.attention_T:
            x = torch.randn(BATCH, T, D_MODEL)
            q, k, v = (rng.standard_normal((BATCH, NUM_HEADS, T, D_K), dtype=np.float32) for _ in range(3))
            qt, kt, vt = (torch.from_numpy(a) for a in (q, k, v))
            calls: dict[str, Callable[[], object]] = {
                NP_SDPA: lambda q=q, k=k, v=v: scaled_dot_product_attention(q, k, v),
                OUR_MHA: lambda x=x: ours(x),
                TORCH_SDPA: lambda qt=qt, kt=kt, vt=vt: F.scaled_dot_product_attention(qt, kt, vt),
                TORCH_MHA_W: lambda x=x: reference(x, x, x, need_weights=True, average_attn_weights=False),
                TORCH_MHA_NOW: lambda x=x: reference(x, x, x, need_weights=False),
            }
            for method, fn in calls.items():
                if RETURNS_WEIGHTS[method] and T > cfg.weights_max_T:
                    continue
                if method == NP_SDPA and T > cfg.numpy_max_T:
                    continue
                seconds, repeats = median_time(fn, cfg.time_budget_s, cfg.min_repeats, cfg.max_repeats)
                res.attention.setdefault(method, {})[T] = seconds
                res.attention_repeats.setdefault(method, {})[T] = repeats
                gc.collect()
            log(
                f"  T={T}: "
                + ", ".join(f"{m.split(': ')[1][:28]} {res.attention[m][T] * 1e3:.1f} ms"
                            for m in METHODS if T in res.attention.get(m, {}))
            )
            del calls, x, q, k, v, qt, kt, vt
            gc.collect()

        # Where our layer spends its time at the target T: the same steps as its forward, one by one.
        T = MHA_TARGET_T if MHA_TARGET_T in cfg.attention_T else cfg.attention_T[-1]
        x = torch.randn(BATCH, T, D_MODEL)
        qh = ours.split_heads(ours.W_query(x))
        kh = ours.split_heads(ours.W_key(x))
        vh = ours.split_heads(ours.W_value(x))
        scores = (qh / math.sqrt(D_K)) @ kh.transpose(-2, -1)
        weights = attention_weights(qh, kh)
        ctx = ours.merge_heads(weights @ vh)
        steps: dict[str, Callable[[], object]] = {
            "Q, K, V projections (3 Linear) and split_heads": lambda: (
                ours.split_heads(ours.W_query(x)),
                ours.split_heads(ours.W_key(x)),
                ours.split_heads(ours.W_value(x)),
            ),
            "scores (q / sqrt(d_k)) @ k^T": lambda: (qh / math.sqrt(D_K)) @ kh.transpose(-2, -1),
            "softmax, in place (no autograd)": lambda: _softmax_in_place(scores),
            "weights @ v and merge_heads": lambda: ours.merge_heads(weights @ vh),
            "output projection W_out": lambda: ours.W_out(ctx),
            "whole forward": lambda: ours(x),
        }
        res.breakdown = {"T": float(T)}
        for name, fn in steps.items():
            res.breakdown[name] = median_time(fn, cfg.time_budget_s, cfg.min_repeats, cfg.max_repeats)[0]
        res.reference_ops = reference_ops(reference, x)

    # The same pair with autograd recording, as in training (dropout is 0): no fused path for PyTorch,
    # the plain softmax for us.
    x = torch.randn(BATCH, T, D_MODEL)  # not an inference tensor: autograd may record it
    reference.train()
    ours.train()
    res.with_grad = {
        GRAD_OURS: median_time(lambda: ours(x), cfg.time_budget_s, cfg.min_repeats, cfg.max_repeats)[0],
        GRAD_REF: median_time(
            lambda: reference(x, x, x, need_weights=True, average_attn_weights=False),
            cfg.time_budget_s, cfg.min_repeats, cfg.max_repeats,
        )[0],
    }
    res.with_grad["T"] = float(T)
    log(f"  with autograd at T={T}: ours {res.with_grad[GRAD_OURS] * 1e3:.1f} ms, "
        f"torch {res.with_grad[GRAD_REF] * 1e3:.1f} ms")


def reference_ops(reference: torch.nn.MultiheadAttention, x: Tensor) -> list[str]:
    """The aten operators one ``reference(x, x, x, need_weights=True)`` call runs (torch.profiler),
    by the time they took, slowest first: they show whether PyTorch took its fused inference path."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        reference(x, x, x, need_weights=True, average_attn_weights=False)
    events = sorted(prof.key_averages(), key=lambda e: e.cpu_time_total, reverse=True)
    return [e.key for e in events if e.key.startswith("aten::")][:6]


# ----------------------------------------------------------------------------------------- block-wise
def _peak_bytes(fn: Callable[[], object]) -> int:
    """Peak NumPy/Python memory allocated while ``fn()`` runs (tracemalloc), beyond what existed before."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def bench_blockwise(cfg: Config, res: Results, log: Callable[[str], None]) -> None:
    """Section 3: full vs block-wise attention, one head, d_k = BLOCK_D_K, float64."""
    from selfattention import blockwise_attention, scaled_dot_product_attention

    rng = np.random.default_rng(0)
    for T in cfg.block_T:
        Q, K, V = (rng.standard_normal((T, BLOCK_D_K)) for _ in range(3))
        calls: dict[str, Callable[[], object]] = {
            "full": lambda Q=Q, K=K, V=V: scaled_dot_product_attention(Q, K, V),
            "block-wise": lambda Q=Q, K=K, V=V: blockwise_attention(Q, K, V, block_size=BLOCK_SIZE),
        }
        for name, fn in calls.items():
            seconds, _ = median_time(fn, cfg.time_budget_s, cfg.min_repeats, cfg.max_repeats)
            res.block_time.setdefault(name, {})[T] = seconds
            res.block_peak.setdefault(name, {})[T] = _peak_bytes(fn)
        full_out = scaled_dot_product_attention(Q, K, V)[0]
        block_out = blockwise_attention(Q, K, V, block_size=BLOCK_SIZE)
        res.block_diff[T] = float(np.abs(full_out - block_out).max())
        del full_out, block_out
        log(
            f"  T={T}: full {res.block_time['full'][T]:.3f} s {res.block_peak['full'][T] / 2**20:.1f} MiB, "
            f"block-wise {res.block_time['block-wise'][T]:.3f} s "
            f"{res.block_peak['block-wise'][T] / 2**20:.1f} MiB, max abs diff {res.block_diff[T]:.1e}"
        )


# ----------------------------------------------------------------------------------------- report
def _ms(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1e3:.2f}"


def _mib(n: int) -> str:
    return f"{n / 2**20:.2f}"


def _verdict(ok: bool | None) -> str:
    return "not measured" if ok is None else ("**met**" if ok else "**not met**")


def lesson_limit(name: str) -> float:
    return LESSON_07_LIMIT_S if name.startswith("07_") else LESSON_LIMIT_S


def target_rows(res: Results) -> list[tuple[str, str, bool | None, str]]:
    """(target, measured figure, met?, why / what would meet it) for each target of the issue."""
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
        rows.append(
            (f"every lesson cold ≤ {LESSON_LIMIT_S:.0f} s (lesson 11 ≤ {LESSON_07_LIMIT_S:.0f} s)",
             figure, not slow and not res.lesson_errors, "; ".join(notes))
        )
    elif res.lesson_errors:
        rows.append(("every lesson cold ≤ 20 s (lesson 11 ≤ 40 s)", "no lesson ran to the end", False,
                     "did not run to the end: " + ", ".join(res.lesson_errors)))
    else:
        rows.append(("every lesson cold ≤ 20 s (lesson 11 ≤ 40 s)", "not measured in this run", None, ""))

    # make test.
    if res.make_test is not None:
        s, rc = res.make_test["seconds"], res.make_test["returncode"]
        rows.append(
            (f"`make test` after setup ≤ {MAKE_TEST_LIMIT_S / 60:.0f} min",
             f"{s / 60:.1f} min (exit code {rc})", s <= MAKE_TEST_LIMIT_S and rc == 0,
             "" if rc == 0 else "some tests failed: a failing run is not a timing")
        )
    else:
        rows.append(
            (f"`make test` after setup ≤ {MAKE_TEST_LIMIT_S / 60:.0f} min",
             "not measured in this run (run `make bench FULL=1`)", None, "")
        )

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
        rows.append((f"our MultiHeadAttention within {MHA_RATIO_LIMIT}x at T = {MHA_TARGET_T}",
                     "not measured in this run", None, ""))

    # Block-wise attention.
    if res.block_diff:
        T = max(res.block_diff)
        diff = res.block_diff[T]
        mem = res.block_peak["block-wise"][T] / res.block_peak["full"][T]
        ok = diff <= BLOCK_DIFF_LIMIT and mem <= BLOCK_MEMORY_LIMIT
        full_size = T == 8192
        rows.append(
            (f"block-wise: max abs diff ≤ {BLOCK_DIFF_LIMIT:.0e} and peak memory ≤ "
             f"{BLOCK_MEMORY_LIMIT:.0%} of full at T = 8192",
             f"at T = {T}: max abs diff {diff:.1e}, peak memory {mem:.1%} of full",
             ok if full_size else None, "" if full_size else f"largest T in this run is {T}, not 8192"),
        )
    return rows


def write_results(cfg: Config, res: Results, out_dir: Path, plot_name: str) -> Path:
    """Write RESULTS.md into ``out_dir``; return its path."""
    L: list[str] = []
    add = L.append
    add("# Benchmarks")
    add("")
    add("Written by `make bench` (`benchmarks/run.py`); do not edit by hand. Timings are wall-clock "
        "medians (`time.perf_counter`) after one warm-up call;\n"
        "they depend on the machine and on what else runs on it.")
    if cfg.quick:
        add("")
        add("**Quick mode: tiny sizes and single runs, a check that the script works, not a measurement.**")
    add("")
    add("## Machine")
    add("")
    add("| | |")
    add("|---|---|")
    for k, v in res.machine.items():
        add(f"| {k} | {v} |")
    add(f"| run started (UTC) | {res.started} |")
    add(f"| run took | {res.seconds / 60:.1f} min |")
    lb, la = res.load_before, res.load_after
    add(f"| load average (1, 5, 15 min) before the run | {lb[0]:.2f}, {lb[1]:.2f}, {lb[2]:.2f} |")
    add(f"| load average (1, 5, 15 min) after the timings (before `make test`) | "
        f"{la[0]:.2f}, {la[1]:.2f}, {la[2]:.2f} |")
    samples = [lb[0], *res.load_samples, la[0]]
    add(f"| 1-minute load average at each section's start and at the end | "
        f"{', '.join(f'{x:.2f}' for x in samples)} |")
    add("")
    cores = os.cpu_count() or 1
    if max(samples) > BUSY_LOAD_PER_CORE * cores:
        add("**The machine was busy during this run (1-minute load average up to "
            f"{max(samples):.1f} on {cores} cores, this benchmark itself counting for about 1 to 2): "
            "the timings are inflated and the "
            "verdicts on time targets are not reliable. Rerun on a quiet machine.**")
        add("")
    add(f"![lesson times, attention forward times, full vs block-wise attention]({plot_name})")
    add("")

    # Targets.
    add("## Targets")
    add("")
    add("| target | measured | verdict | note |")
    add("|---|---|---|---|")
    for target, figure, ok, why in target_rows(res):
        add(f"| {target} | {figure} | {_verdict(ok)} | {why} |")
    add("")

    # 1. Lessons.
    add("## 1. Lessons, cold")
    add("")
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
    if res.make_test is not None:
        add(f"`make test` after setup: {res.make_test['seconds']:.0f} s "
            f"({res.make_test['seconds'] / 60:.1f} min), exit code {res.make_test['returncode']}.")
    else:
        add("`make test` after setup: not measured in this run (`make bench FULL=1` measures it).")
    add("")

    # 2. Attention forward.
    add("## 2. Attention forward, CPU, float32")
    add("")
    add(f"batch {BATCH}, d_model {D_MODEL}, {NUM_HEADS} heads (d_k = {D_K}), self-attention, no mask, "
        "`torch.inference_mode()`, torch threads as above. The NumPy function and "
        "`F.scaled_dot_product_attention` get Q, K, V already split into heads, "
        f"shape ({BATCH}, {NUM_HEADS}, T, {D_K}); the two layers get x of shape ({BATCH}, T, {D_MODEL}) "
        "and do their own projections. "
        "`nn.MultiheadAttention` runs in eval mode with `batch_first=True`; with `need_weights=True` it is "
        "asked for per-head weights (`average_attn_weights=False`), as ours always returns them.")
    add("")
    skipped = [T for T in cfg.attention_T if T > cfg.weights_max_T]
    if skipped:
        mib = BATCH * NUM_HEADS * min(skipped) ** 2 * 4 / 2**20
        add(f"The methods that return weights run up to T = {cfg.weights_max_T} only: at T = {min(skipped)} "
            f"the weights alone are {BATCH}·{NUM_HEADS}·T² float32 numbers = {mib:,.0f} MiB, and the softmax "
            "holds two or three such arrays at once.")
        add("")
    np_row = res.attention.get(NP_SDPA, {})
    if np_row and any(T > cfg.numpy_max_T for T in cfg.attention_T if T <= cfg.weights_max_T):
        T_np = max(np_row)
        add(f"Our NumPy function runs up to T = {T_np} only (`--numpy-max-t`): its time at T = {T_np} was "
            f"{np_row[T_np]:.2f} s per call and grows about 4x per doubling of T.")
        add("")
    add("Checks before timing (same weights, same input):")
    add("")
    for k, v in res.attention_checks.items():
        add(f"- {k}: {v if isinstance(v, str) else f'{v:.1e}'}")
    add("")
    Ts = cfg.attention_T
    if not res.attention:
        add("Not measured in this run.")
        add("")
    reps = [n for row in res.attention_repeats.values() for n in row.values()]
    if reps:
        add(f"Each figure is the median of {min(reps)} to {max(reps)} timed calls (about "
            f"{cfg.time_budget_s:g} s of calls, at least {cfg.min_repeats}) after one warm-up call.")
        add("")
    add("Median time per forward call (ms):")
    add("")
    add("| method | returns weights | " + " | ".join(f"T={T}" for T in Ts) + " |")
    add("|---|---|" + "---|" * len(Ts))
    for m in METHODS:
        row = res.attention.get(m, {})
        add(f"| {m} | {'yes' if RETURNS_WEIGHTS[m] else 'no'} | "
            + " | ".join(_ms(row.get(T)) for T in Ts) + " |")
    add("")
    add("Ratio to `nn.MultiheadAttention(need_weights=True)` (below 1 = faster):")
    add("")
    ref = res.attention.get(REFERENCE, {})
    ref_Ts = [T for T in Ts if T in ref]
    add("| method | " + " | ".join(f"T={T}" for T in ref_Ts) + " |")
    add("|---|" + "---|" * len(ref_Ts))
    for m in METHODS:
        row = res.attention.get(m, {})
        add(f"| {m} | " + " | ".join(f"{row[T] / ref[T]:.2f}" if T in row else "—" for T in ref_Ts) + " |")
    add("")
    fitted = {m: r for m in METHODS if len(r := res.attention.get(m, {})) >= 2}
    if fitted:
        add("Time exponents b (time ∝ T^b, least squares on log-log): over all T measured, and over the "
            "three largest (where fixed per-call costs matter least):")
        add("")
        add("| method | b, all T | b, three largest T |")
        add("|---|---|---|")
        for m, r in fitted.items():
            Ts = sorted(r)
            top = Ts[-3:]
            add(f"| {m} | {fit_exponent(Ts, [r[T] for T in Ts]):.2f} ({Ts[0]}..{Ts[-1]}) | "
                f"{fit_exponent(top, [r[T] for T in top]):.2f} ({top[0]}..{top[-1]}) |")
        add("")
    if res.breakdown:
        T = int(res.breakdown["T"])
        total = res.breakdown["whole forward"]
        add(f"Where our `MultiHeadAttention` spends its time at T = {T} (each step timed alone on the same "
            "tensors; the steps need not add up exactly to the whole):")
        add("")
        add("| step | ms | share of the whole forward |")
        add("|---|---|---|")
        for k, v in res.breakdown.items():
            if k != "T":
                add(f"| {k} | {v * 1e3:.2f} | {v / total:.0%} |")
        add("")
    if res.reference_ops:
        fused = "aten::_native_multi_head_attention" in res.reference_ops
        add("What `nn.MultiheadAttention(need_weights=True)` ran in that setting (torch.profiler, slowest "
            f"first): {', '.join(f'`{op}`' for op in res.reference_ops)}. "
            + ("That is PyTorch's fused inference path (eval mode, no autograd, self-attention): it scales q "
               "inside the projection kernel and writes the softmax over the scores' own buffer, one "
               "(batch, heads, T, T) array in all. Ours does the same arithmetic in the same order without "
               "autograd (q / sqrt(d_k) before the product, softmax in place)."
               if fused else "PyTorch did not take its fused inference path here."))
        add("")
    if res.with_grad:
        g = res.with_grad
        add("With autograd recording, as in training (train mode, dropout 0, forward only, "
            f"T = {int(g['T'])}), "
            "both layers take their plain path: no fused kernel for PyTorch, and for ours `torch.softmax` "
            "into a new array, which autograd keeps for the backward pass:")
        add("")
        add("| method | ms | ratio |")
        add("|---|---|---|")
        add(f"| {GRAD_OURS} | {g[GRAD_OURS] * 1e3:.2f} | {g[GRAD_OURS] / g[GRAD_REF]:.2f} |")
        add(f"| {GRAD_REF} | {g[GRAD_REF] * 1e3:.2f} | 1.00 |")
        add("")

    # 3. Block-wise.
    add("## 3. Full vs block-wise attention")
    add("")
    add(f"One head, d_k = {BLOCK_D_K}, float64 inputs (the dtype lesson 09 uses), self-attention on "
        f"random Q, K, V of shape (T, {BLOCK_D_K}); `scaled_dot_product_attention` (full (T, T) scores) "
        f"against `blockwise_attention(..., block_size={BLOCK_SIZE})` (online softmax over blocks of keys). "
        "Peak memory is what `tracemalloc` sees NumPy allocate during the call (inputs excluded). "
        "Time: median as above.")
    add("")
    if not res.block_diff:
        add("Not measured in this run.")
        add("")
        return _write(out_dir, L)
    add("| T | full (ms) | block-wise (ms) | full peak (MiB) | block-wise peak (MiB) | memory ratio | "
        "max abs diff |")
    add("|---|---|---|---|---|---|---|")
    for T in cfg.block_T:
        f_t, b_t = res.block_time["full"][T], res.block_time["block-wise"][T]
        f_m, b_m = res.block_peak["full"][T], res.block_peak["block-wise"][T]
        add(f"| {T} | {_ms(f_t)} | {_ms(b_t)} | {_mib(f_m)} | {_mib(b_m)} | {b_m / f_m:.2%} | "
            f"{res.block_diff[T]:.1e} |")
    add("")
    Tb = cfg.block_T
    top = Tb[-3:]
    add(f"Fitted exponents b (value ∝ T^b, least squares on log-log over T = {Tb[0]}..{Tb[-1]}, and for time "
        f"also over the three largest T, {top[0]}..{top[-1]}, where fixed per-call costs matter least):")
    add("")
    add("| | time, all T | time, three largest T | peak memory, all T |")
    add("|---|---|---|---|")
    for name in ("full", "block-wise"):
        bt = fit_exponent(Tb, [res.block_time[name][T] for T in Tb])
        bt_top = fit_exponent(top, [res.block_time[name][T] for T in top])
        bm = fit_exponent(Tb, [res.block_peak[name][T] for T in Tb])
        add(f"| {name} | {bt:.2f} | {bt_top:.2f} | {bm:.2f} |")
    add("")
    T = Tb[-1]
    mem_ratio = res.block_peak["block-wise"][T] / res.block_peak["full"][T]
    time_ratio = res.block_time["block-wise"][T] / res.block_time["full"][T]
    add(f"At T = {T}: block-wise peak memory is {mem_ratio:.2%} of full attention's, "
        f"its time {time_ratio:.2f}x, "
        f"max abs difference {res.block_diff[T]:.1e}.")
    add("")
    return _write(out_dir, L)


def _write(out_dir: Path, lines: list[str]) -> Path:
    path = out_dir / "RESULTS.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _t_ticks(ax: object, Ts: Sequence[int]) -> None:
    """Label the x axis at the measured T values, written plainly (64, 128, ...)."""
    if Ts:
        ax.set_xticks(list(Ts), [str(T) for T in Ts])
        ax.minorticks_off()


def write_plot(cfg: Config, res: Results, path: Path) -> None:
    """Four panels: lesson times, attention forward times, block-wise time, block-wise memory."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullLocator

    fig, axes = plt.subplots(2, 2, figsize=(13, 11))
    ax = axes[0, 0]
    if res.lessons:
        names = list(res.lessons)
        medians = [statistics.median(res.lessons[n]) for n in names]
        colours = [
            "tab:red" if m > lesson_limit(n) else "tab:blue" for n, m in zip(names, medians, strict=True)
        ]
        bars = ax.barh([n.removesuffix(".ipynb") for n in names], medians, color=colours)
        ax.bar_label(bars, [f"{m:.1f} s" for m in medians], padding=3, fontsize=8)
        ax.axvline(LESSON_LIMIT_S, color="grey", ls="--", label=f"{LESSON_LIMIT_S:.0f} s limit")
        ax.axvline(LESSON_07_LIMIT_S, color="grey", ls=":", label=f"{LESSON_07_LIMIT_S:.0f} s (lesson 11)")
        ax.set_xlim(0, max(max(medians), LESSON_07_LIMIT_S) * 1.15)
        ax.invert_yaxis()
        ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.12), ncol=2, fontsize=8)
    else:
        ax.text(0.5, 0.5, "not measured", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("seconds, cold, median")
    ax.set_title("1. Lessons, fresh kernel")

    ax = axes[0, 1]
    ref = res.attention.get(REFERENCE, {})
    for m in METHODS:
        row = res.attention.get(m, {})
        Ts = [T for T in row if T in ref]
        if Ts:
            style = "o-" if RETURNS_WEIGHTS[m] else "o--"
            ax.plot(Ts, [row[T] / ref[T] for T in Ts], style, label=m)
    ax.axhline(MHA_RATIO_LIMIT, color="grey", ls=":", label=f"target for ours: {MHA_RATIO_LIMIT}x")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    _t_ticks(ax, sorted(ref))
    ratios = [v / ref[T] for row in res.attention.values() for T, v in row.items() if T in ref]
    if ratios:
        ticks = [t for t in (0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 20, 50) if
                 min(ratios) / 1.2 <= t <= max(ratios) * 1.2]
        ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
        ax.yaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("T (tokens)")
    ax.set_ylabel("time / nn.MultiheadAttention(need_weights=True)")
    ax.set_title(
        f"2. Attention forward as ratios, float32, batch {BATCH}, d_model {D_MODEL}, {NUM_HEADS} heads",
        fontsize=10,
    )
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(0.0, -0.12), ncol=2)
    ax.grid(True, which="both", alpha=0.3)

    for ax, data, ylabel, title, scale in (
        (axes[1, 0], res.block_time, "seconds (median)", "3a. Full vs block-wise: time", 1.0),
        (axes[1, 1], res.block_peak, "peak MiB (tracemalloc)", "3b. Full vs block-wise: peak memory", 2**20),
    ):
        for name, row in data.items():
            Ts = list(row)
            b = fit_exponent(Ts, list(row.values()))
            ax.plot(Ts, [v / scale for v in row.values()], "o-", label=f"{name} (fitted ∝ T^{b:.2f})")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        _t_ticks(ax, cfg.block_T if data else [])
        ax.set_xlabel("T (tokens)")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{title}, one head, d_k {BLOCK_D_K}, float64", fontsize=10)
        if data:
            ax.legend()
        ax.grid(True, which="both", alpha=0.3)
    samples = [res.load_before[0], *res.load_samples, res.load_after[0]]
    busy = max(samples) > BUSY_LOAD_PER_CORE * (os.cpu_count() or 1)
    fig.suptitle(
        f"make bench, {res.started} UTC, {res.machine.get('CPU', '')}, {os.cpu_count()} cores; "
        f"1-minute load average {min(samples):.1f} to {max(samples):.1f}"
        + (" (busy machine: timings inflated)" if busy else ""),
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# ----------------------------------------------------------------------------------------- main
def make_config(args: argparse.Namespace) -> Config:
    if args.notebooks:
        lessons = [Path(p) for p in args.notebooks]
    else:
        lessons = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    if args.quick:
        return Config(
            lesson_paths=lessons, lesson_repeats=args.lesson_repeats or 1,
            attention_T=[16, 32], weights_max_T=32, numpy_max_T=16, block_T=[64, 128, 256],
            time_budget_s=0.0, min_repeats=1, max_repeats=1, full=args.full, quick=True,
        )
    return Config(
        lesson_paths=lessons, lesson_repeats=args.lesson_repeats or 3,
        attention_T=[64, 128, 256, 512, 1024, 2048, 4096], weights_max_T=args.weights_max_t,
        numpy_max_T=args.numpy_max_t,
        block_T=[256, 512, 1024, 2048, 4096, 8192],
        time_budget_s=args.budget, min_repeats=3, max_repeats=25, full=args.full, quick=False,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=HERE, help="directory for RESULTS.md and results.png")
    parser.add_argument("--full", action="store_true", help="also time a complete `make test`")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, single runs (a smoke test)")
    parser.add_argument("--notebooks", nargs="*", help="notebooks to time (default: notebooks/NN_*.ipynb)")
    parser.add_argument("--lesson-repeats", type=int, default=0, help="cold runs per notebook (default 3)")
    parser.add_argument("--weights-max-t", type=int, default=2048,
                        help="largest T for the methods that return attention weights")
    parser.add_argument("--numpy-max-t", type=int, default=2048,
                        help="largest T for our NumPy scaled_dot_product_attention")
    parser.add_argument("--budget", type=float, default=1.0, help="seconds of repeats per timing")
    parser.add_argument("--skip", nargs="*", default=[],
                        choices=["lessons", "attention", "blockwise", "widgets"],
                        help="sections to leave out (for trying the script)")
    args = parser.parse_args(argv)

    torch.set_num_threads(2)
    cfg = make_config(args)
    args.out.mkdir(parents=True, exist_ok=True)
    res = Results()
    res.started = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M")
    res.load_before = load_average()
    start = time.perf_counter()

    def log(msg: str) -> None:
        print(f"[{time.perf_counter() - start:6.1f} s] {msg}", flush=True)

    res.machine = machine_description()
    if "lessons" not in args.skip:
        res.load_samples.append(load_average()[0])
        log(f"1. lessons ({len(cfg.lesson_paths)} notebooks x {cfg.lesson_repeats})")
        bench_lessons(cfg, res, log)
    if "attention" not in args.skip:
        res.load_samples.append(load_average()[0])
        log("2. attention forward")
        bench_attention(cfg, res, log)
    if "blockwise" not in args.skip:
        res.load_samples.append(load_average()[0])
        log("3. full vs block-wise")
        bench_blockwise(cfg, res, log)
    res.load_after = load_average()
    if cfg.full:  # last: it loads both cores, and the load average would stay up for the next section
        log("4. make test")
        bench_make_test(res, log)
    res.seconds = time.perf_counter() - start
    plot_name = "results.png"
    write_plot(cfg, res, args.out / plot_name)
    path = write_results(cfg, res, args.out, plot_name)
    import runpy  # the cost of isolation per graded submission, appended to RESULTS.md

    runpy.run_path(str(HERE / "grading.py"))["bench_grading"](path, log, quick=args.quick)
    log(f"wrote {path} and {args.out / plot_name}")
    if not args.quick and "widgets" not in args.skip:  # in a browser: benchmarks/widgets.py, its own section
        log("5. widget redraw latency (JupyterLab in Chromium)")
        sys.path.insert(0, str(HERE))
        from widgets import main as widgets_main

        widgets_main(["--results", str(path)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
