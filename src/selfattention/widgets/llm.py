"""Widgets of lessons 13, 14 and 15: the cost of a decode step, RoPE stretched to a longer context, and the
elements standard and tiled attention move.

Each builder draws its figure once; moving a control changes the artists' data and shows the figure again
(:func:`selfattention.widgets.show`), then prints one line of numbers.
"""

from __future__ import annotations

import math

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter

from ..llm import rope_frequencies
from ..plots import llm as llm_plots
from . import show

BEYOND = "tab:orange"   # rope_explorer: a pair that now turns past the angles it saw in training

__all__ = ["decode_explorer", "io_explorer", "rope_explorer", "LLAMA2_70B"]

#: Llama 2 70B's published shape (80 layers, 64 query heads of 128 features, 8 key/value heads, float16),
#: and its parameter count (transformers' LlamaForCausalLM of this shape, counted in lesson 13).
LLAMA2_70B = {"n_params": 68_976_648_192, "layers": 80, "heads": 64, "d_k": 128, "bytes_per_number": 2}


def decode_explorer(shape: dict[str, int] | None = None, gpus: int = 2, kv_heads: int = 8,
                    T: int = 4096) -> None:
    """Show a widget: choose the key/value heads g and the context T of a model of ``shape`` (default
    Llama 2 70B) on ``gpus`` H100s; see the tokens per second a decode step allows at each batch size.
    ``kv_heads`` and ``T``: where the sliders start."""
    shape = dict(LLAMA2_70B if shape is None else shape)
    batches = np.unique(np.geomspace(1, 1024, 60).round())
    with plt.rc_context(llm_plots._style()):
        fig, ax = plt.subplots(figsize=(10, 4.2), layout="constrained")
        fits_line, = ax.loglog(batches, batches, lw=3, label="fits in memory")
        over_line, = ax.loglog(batches, batches, ":", lw=2, color=fits_line.get_color(),
                               label="does not fit beside the weights")
        ax.loglog(batches, batches / (2 * shape["n_params"] / (gpus * llm_plots.H100["flops"])), "--",
                  color="gray", label="if only FLOPs counted (compute-bound)")
        ax.set_xlabel("sequences decoded together (batch)")
        ax.set_ylabel("tokens per second, at most")
        ax.set_ylim(1, 1e6)
        ax.legend(loc="lower right")
    plt.close(fig)

    def draw(kv_heads: int = 8, T: int = 4096) -> None:
        per_token = 2 * shape["layers"] * kv_heads * shape["d_k"] * shape["bytes_per_number"]
        cost = llm_plots.decode_costs(shape["n_params"], per_token, T, batches, gpus)
        rate = cost["tokens_per_s"]
        fits_line.set_ydata(np.where(cost["fits"], rate, np.nan))
        over_line.set_ydata(np.where(cost["fits"], np.nan, rate))
        ax.set_title(f"g = {kv_heads} key/value heads, T = {T:,} tokens per sequence, {gpus} H100s",
                     fontsize=llm_plots.FONT)
        show(fig)
        room = gpus * llm_plots.H100["memory_bytes"] - shape["n_params"] * 2
        most = int(room // (per_token * T))
        if most < 1:
            print(f"g = {kv_heads}: {per_token:,} bytes per token; not one sequence of {T:,} tokens fits")
            return
        best = llm_plots.decode_costs(shape["n_params"], per_token, T, [most], gpus)
        print(f"g = {kv_heads}: {per_token:,} bytes per token; up to {most:,} sequences of {T:,} tokens fit; "
              f"then a step takes at least {best['step_ms'][0]:.1f} ms "
              f"(reading: {best['memory_ms'][0]:.1f} ms, FLOPs: {best['compute_ms'][0]:.2f} ms), "
              f"{best['tokens_per_s'][0]:,.0f} tokens/s")

    widgets.interact(
        draw,
        kv_heads=widgets.SelectionSlider(options=[1, 2, 4, 8, 16, 32, 64], value=kv_heads,
                                         description="kv heads", continuous_update=False),
        T=widgets.SelectionSlider(options=[1024, 2048, 4096, 8192, 16384, 32768], value=T,
                                  description="context T", continuous_update=False),
    )


def rope_explorer(d: int = 128, base: float = 10000.0, trained_length: int = 4096,
                  scalings: tuple[str, ...] = ("none", "linear (PI)", "NTK", "YaRN")) -> None:
    """Show a widget: stretch RoPE (none, position interpolation, NTK, YaRN: those named in ``scalings``) by
    a factor and see how many turns each pair makes over the longer context, against what it made in
    training."""
    trained, _ = rope_frequencies(d, base)
    with plt.rc_context(llm_plots._style()):
        fig, ax = plt.subplots(figsize=(10, 4.2), layout="constrained")
        llm_plots.rope_turns(trained.numpy(), trained.numpy(), trained_length, trained_length, ax)
        ax.set_ylim(1e-2, 1e4)
    old_bars, new_bars, turn_line = ax.containers[0], ax.containers[1], ax.lines[0]
    ax.legend(loc="upper right")
    plt.close(fig)
    names = {"none": None, "linear (PI)": "linear", "NTK": "ntk", "YaRN": "yarn"}
    names = {name: names[name] for name in scalings}
    beyond_patch = Patch(color=BEYOND, label="now, past the trained angles")

    def draw(scaling: str = "none", factor: int = 8) -> None:
        inv_freq, attention = rope_frequencies(d, base, names[scaling], float(factor),
                                               trained_length=trained_length)
        turns = inv_freq.numpy() * trained_length * factor / (2 * math.pi)
        trained_turns = trained.numpy() * trained_length / (2 * math.pi)
        # a pair short of a whole turn in training that now turns further meets angles never seen
        beyond = (turns > trained_turns * 1.0001) & (trained_turns < 1)
        for bar, height, out in zip(new_bars, turns, beyond, strict=True):
            bar.set_height(height)
            bar.set_facecolor(BEYOND if out else "tab:blue")
        ax.set_title(f"{scaling}, x{factor}: d = {d}, base {base:,.0f}, trained on {trained_length:,} tokens",
                     fontsize=llm_plots.FONT)
        now = Patch(color="tab:blue", label=f"now: {trained_length * factor:,} tokens")
        ax.legend(handles=[old_bars, now, beyond_patch, turn_line], loc="upper right",
                  fontsize=llm_plots.FONT - 1)
        show(fig)
        unseen = int(beyond.sum())
        print(f"{scaling} x{factor}: neighbours differ by {inv_freq[0]:.3f} rad in pair 0 (trained 1.000); "
              f"{unseen} of {d // 2} pairs reach angles never seen in training; "
              f"queries and keys scaled by {attention:.3f} (YaRN; 1 elsewhere)")

    widgets.interact(
        draw,
        scaling=widgets.Dropdown(options=list(names), value=next(iter(names)), description="scaling"),
        factor=widgets.SelectionSlider(options=[1, 2, 4, 8, 16, 32], value=8, description="factor",
                                       continuous_update=False),
    )


def io_explorer(d: int = 64, T: int = 65536) -> None:
    """Show a widget: choose the fast memory M (numbers) and the features d; see, against M, how many times
    fewer elements the tiled loop moves than standard attention under two counts: section 1's (Q, K, V read
    once, as if fast memory held them whole) and one with standard attention's two matrix multiplies tiled in
    the same M (:func:`~selfattention.plots.llm.per_entry_moves`), at T = ``T``; the chosen M is marked."""
    Ms = 2.0 ** np.arange(12, 21)
    with plt.rc_context(llm_plots._style()):
        fig, ax = plt.subplots(figsize=(10, 4), layout="constrained")
        ax.axhline(1.0, color="k", ls=":", lw=1.5, label="1: both move the same")
        uneven, = ax.plot(Ms, Ms, "o-", lw=2, color="tab:gray", label="against section 1's standard count")
        even, = ax.plot(Ms, Ms, "o-", lw=2.5, color="tab:blue", label="against standard tiled in the same M")
        chosen = ax.axvline(65536, color="tab:red", lw=1.5, label="chosen M")
        llm_plots._log2_ticks(ax, Ms)
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
        ax.set_xlabel("fast memory M (numbers)")
        ax.set_ylabel("times fewer moved by tiling")
        ax.legend(loc="upper left", fontsize=llm_plots.FONT - 2)
    plt.close(fig)

    def ratios(M: float, d: int) -> tuple[float, float, int]:
        b = llm_plots.tile_for(int(M), d)
        tiled = 2 * T * d + 2 * T**2 * d / b
        same_m = llm_plots.standard_same_m(int(M), d) * T**2 + T * d
        return (4 * T * d + 4 * T**2) / tiled, same_m / tiled, b

    def draw(M: int = 65536, d: int = d) -> None:
        got = [ratios(m, d) for m in Ms]
        uneven.set_ydata([g[0] for g in got])
        even.set_ydata([g[1] for g in got])
        chosen.set_xdata([M, M])
        shown = [r for g in got for r in g[:2]]
        ax.set_ylim(min(shown) / 1.5, max(shown) * 1.5)   # every point inside the axes, whatever d
        ax.set_title(f"d = {d}, T = {T:,}", fontsize=llm_plots.FONT)
        show(fig)
        one, two, b = ratios(M, d)

        def times(r: float) -> str:
            return f"{r:.1f} times fewer" if r >= 1 else f"{1 / r:.1f} times more"

        print(f"M = {M:,}, d = {d}: tiles of {b}; the tiled loop moves {times(one)} than section 1's "
              f"standard count and {times(two)} than standard attention tiled in the same M")

    widgets.interact(
        draw,
        M=widgets.SelectionSlider(options=[16384, 65536, 262144, 1048576], value=65536,
                                  description="fast memory M", continuous_update=False,
                                  style={"description_width": "initial"}),   # the label whole, not cut
        d=widgets.SelectionSlider(options=[32, 64, 128], value=d, description="d",
                                  continuous_update=False),
    )
