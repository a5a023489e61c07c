"""GPU section: PyTorch's scaled_dot_product_attention backends (math, flash, memory-efficient) on CUDA.

For T = 1k to 32k tokens (batch 1, 8 heads of 64 features, float16, causal), each backend's median time of a
forward pass and its peak GPU memory, with the device it ran on. Lesson 15 counts the memory traffic these
backends differ in; it never needs this table. Without CUDA the section says so and times nothing.

    python -m benchmarks --only sdpa      # this section alone, into RESULTS.md
    python -m benchmarks.sdpa             # the table, printed
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass

import torch

from .common import Config, Log, Results

NAME, TITLE = "sdpa", "## GPU: PyTorch's attention backends"
BACKENDS = ("math", "flash", "efficient")
LENGTHS = (1024, 2048, 4096, 8192, 16384, 32768)


@dataclass(frozen=True)
class Row:
    """One measurement: a backend at T tokens (``ms`` and ``peak_mib`` are None where it failed)."""

    backend: str
    T: int
    ms: float | None
    peak_mib: float | None
    note: str = ""


def _backend(name: str) -> object:
    from torch.nn.attention import SDPBackend

    return {"math": SDPBackend.MATH, "flash": SDPBackend.FLASH_ATTENTION,
            "efficient": SDPBackend.EFFICIENT_ATTENTION}[name]


def measure(lengths: tuple[int, ...] = LENGTHS, heads: int = 8, d: int = 64, repeats: int = 5
            ) -> tuple[list[Row], str]:
    """Rows of (backend, T, median ms, peak MiB) and the device's description; ([], reason) without CUDA."""
    if not torch.cuda.is_available():
        return [], "no CUDA device is present: nothing was timed"
    from torch.nn.attention import sdpa_kernel

    device = torch.device("cuda")
    props = torch.cuda.get_device_properties(device)
    described = f"{props.name}, {props.total_memory / 2**30:.0f} GiB, torch {torch.__version__}"
    rows: list[Row] = []
    for T in lengths:
        q, k, v = (torch.randn(1, heads, T, d, device=device, dtype=torch.float16) for _ in range(3))
        for name in BACKENDS:
            try:
                with sdpa_kernel(_backend(name)):
                    torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)  # warm-up
                    torch.cuda.synchronize()
                    torch.cuda.reset_peak_memory_stats()
                    base = torch.cuda.memory_allocated()
                    times = []
                    for _ in range(repeats):
                        start = torch.cuda.Event(enable_timing=True)
                        end = torch.cuda.Event(enable_timing=True)
                        start.record()
                        torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
                        end.record()
                        torch.cuda.synchronize()
                        times.append(start.elapsed_time(end))
                    peak = (torch.cuda.max_memory_allocated() - base) / 2**20
                rows.append(Row(name, T, statistics.median(times), peak))
            except (RuntimeError, torch.cuda.OutOfMemoryError) as exc:  # unsupported, or out of memory
                rows.append(Row(name, T, None, None, str(exc).splitlines()[0][:80]))
                torch.cuda.empty_cache()
    return rows, described


def table(rows: list[Row], described: str) -> str:
    """A Markdown table of ``rows`` under a line naming the device."""
    lines = [f"Device: {described}", "", "| backend | T | ms (median) | peak MiB | note |",
             "|---|---|---|---|---|"]
    for r in rows:
        ms = "-" if r.ms is None else f"{r.ms:.3f}"
        peak = "-" if r.peak_mib is None else f"{r.peak_mib:.1f}"
        lines.append(f"| {r.backend} | {r.T:,} | {ms} | {peak} | {r.note} |")
    return "\n".join(lines)


def run(cfg: Config, res: Results, log: Log) -> None:
    """The section: every backend at every length (the two shortest only with ``--quick``)."""
    rows, described = measure(LENGTHS[:2] if cfg.quick else LENGTHS, repeats=1 if cfg.quick else 5)
    res.sdpa = {"rows": rows, "device": described}
    log(f"  {described}" if not rows else f"  {len(rows)} timings on {described}")


def lines(cfg: Config, res: Results) -> list[str]:
    """The section's markdown: the table, or the line saying why nothing was timed."""
    L = [TITLE, ""]
    if not res.sdpa:
        return [*L, "Not measured in this run.", ""]
    L.append("`torch.nn.functional.scaled_dot_product_attention`, causal, batch 1, 8 heads, d_k 64, float16, "
             "each backend forced with `sdpa_kernel`: median of 5 forward passes (CUDA events) and peak "
             "memory beyond the inputs. The lessons' timings are all on CPU.")
    L.append("")
    if not res.sdpa["rows"]:
        return [*L, f"Not measured: {res.sdpa['device']}.", ""]
    return [*L, table(res.sdpa["rows"], res.sdpa["device"]), ""]


def main() -> int:
    rows, described = measure()
    if not rows:
        print(described)
        return 0
    print(table(rows, described))
    return 0


if __name__ == "__main__":
    sys.exit(main())
