"""The one writer of ``benchmarks/RESULTS.md`` (and ``results.png``): the machine, the targets, then each
section's own lines, in the order of :data:`benchmarks.__main__.SECTIONS`.

A section run on its own (``python -m benchmarks.widgets``, ``python -m benchmarks --only tests``) replaces
its own part of the file in place (:func:`replace_sections`), the rest kept as it was.
"""

from __future__ import annotations

import os
import re
import statistics
from collections.abc import Sequence
from pathlib import Path

from .common import (
    BATCH,
    BLOCK_D_K,
    BUSY_LOAD_PER_CORE,
    D_MODEL,
    LESSON_LIMIT_S,
    METHODS,
    MHA_RATIO_LIMIT,
    NUM_HEADS,
    PRETRAINED_LIMIT_S,
    REFERENCE,
    RETURNS_WEIGHTS,
    Config,
    Results,
    fit_exponent,
    lesson_limit,
    target_rows,
    verdict,
)


def header(cfg: Config, res: Results, plot_name: str) -> list[str]:
    """The top of RESULTS.md: how it was made, the machine, the plot and the targets."""
    L: list[str] = []
    add = L.append
    add("# Benchmarks")
    add("")
    add("Written by `make bench` (`python -m benchmarks`); do not edit by hand. Timings are wall-clock "
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
        add(f"| {target} | {figure} | {verdict(ok)} | {why} |")
    add("")
    return L


def write(path: Path, parts: Sequence[list[str]]) -> Path:
    """Write ``parts`` (the header, then each section's lines) to ``path`` as one document."""
    text = "\n".join(line for part in parts for line in part)
    path.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
    return path


def replace_sections(path: Path, parts: Sequence[list[str]]) -> None:
    """Put each of ``parts`` (lines starting with their ``## `` heading) into ``path`` in place of the
    section with the same heading, or at the end when it has none."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    for lines in parts:
        heading = lines[0]
        start = text.find(heading + "\n")
        if start == -1:
            text = text.rstrip("\n") + "\n\n" + "\n".join(lines)
            continue
        end = text.find("\n## ", start + len(heading))
        text = text[:start] + "\n".join(lines) + ("" if end == -1 else "\n" + text[end + 1:])
    path.write_text(text.rstrip("\n") + "\n", encoding="utf-8")


def update_targets(path: Path, rows: Sequence[tuple[str, str, bool | None, str]]) -> None:
    """Rewrite ``path``'s Targets table as exactly ``rows`` (``target_rows``), in their order: a target
    this run measured (``ok`` not None) gets its new row; one it did not keeps its earlier row, found by
    its first cell, or says "not measured". A row whose target is no longer among ``rows`` is dropped (a
    renamed target used to leave its stale row behind)."""
    if not path.exists():
        return
    text = path.read_text(encoding="utf-8")
    table = re.search(r"^## Targets\n\n\| target \|.*\n\|---.*\n((?:\|.*\n?)*)", text, re.M)
    if table is None:
        return
    old = {line.split(" | ")[0][2:]: line for line in table.group(1).splitlines()}
    new = [f"| {t} | {figure} | {verdict(ok)} | {why} |" if ok is not None or t not in old else old[t]
           for t, figure, ok, why in rows]
    body = "\n".join(new) + ("\n" if table.group(1).endswith("\n") else "")
    path.write_text(text[:table.start(1)] + body + text[table.end(1):], encoding="utf-8")


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
        ax.axvline(PRETRAINED_LIMIT_S, color="grey", ls=":",
                   label=f"{PRETRAINED_LIMIT_S:.0f} s (lessons 11-12)")
        ax.set_xlim(0, max(max(medians), PRETRAINED_LIMIT_S) * 1.15)
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


