"""Figures and widgets of lessons 13 to 15 (selfattention.plots.llm, .widgets.llm): what they draw, the
numbers they print, their text sizes and their errors on bad input."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from selfattention.plots import llm as llm_plots  # noqa: E402
from selfattention.widgets import llm as llm_widgets  # noqa: E402


def legible(fig: plt.Figure) -> None:
    """Shown across a 1280-px slide, the figure's smallest text is at least 20 px."""
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    assert min(sizes) * 1280 / (fig.get_size_inches()[0] * 72) >= 20, min(sizes)


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_loss_curves_and_block_map_are_legible():
    legible(llm_plots.loss_curves({"0": [3.8, 1.0, 0.1], "1": [3.8, 1.2, 0.2]}))
    fig = llm_plots.block_map([[3, 0], [1, 2, 4]], num_blocks=6)
    legible(fig)


def test_block_map_shades_the_used_slots_of_each_block():
    """With lengths, each block's dark patch spans its used slots: full blocks whole, a last block in part."""
    fig = llm_plots.block_map([[3, 0], [1, 2, 4]], num_blocks=6, lengths=[20, 33], block_size=16)
    widths = {round(p.get_x() + 0.5): p.get_width() for p in fig.axes[0].patches}
    assert widths == {3: 1.0, 0: 4 / 16, 1: 1.0, 2: 1.0, 4: 1 / 16}
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "0\n4/16" in texts and "1\n1/16" in texts
    legible(fig)
    with pytest.raises(ValueError, match="do not fill"):
        llm_plots.block_map([[3, 0]], num_blocks=6, lengths=[40], block_size=16)


def test_loss_by_position_draws_the_mean_and_the_range():
    losses = np.array([[1.0] * 64, [3.0] * 64])                     # 2 inputs, 64 positions
    fig = llm_plots.loss_by_position({"run": losses}, trained_length=32, bucket=16)
    ax = fig.axes[0]
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [2.0] * 4)  # the mean of 1 and 3 per bucket
    legible(fig)
    with pytest.raises(ValueError, match="expected \\(n_inputs, T\\)"):
        llm_plots.loss_by_position({"run": np.ones(8)}, trained_length=4)


def test_io_counts_follow_the_formulas_and_tiles_fit():
    T = np.array([1024.0, 4096.0])
    fig = llm_plots.io_counts(T, [65536], d=64)
    standard, tiled = fig.axes[0].lines[:2]
    np.testing.assert_allclose(standard.get_ydata(), 4 * T * 64 + 4 * T**2)
    b = llm_plots.tile_for(65536, 64)
    assert 4 * b * 64 + b * b <= 65536 < 4 * (b + 1) * 64 + (b + 1) ** 2
    np.testing.assert_allclose(tiled.get_ydata(), 2 * T * 64 + 2 * T**2 * 64 / b)
    legible(fig)
    with pytest.raises(ValueError, match="M=10"):
        llm_plots.tile_for(10, 64)


def test_io_ratio_is_standard_over_tiled():
    M = np.array([16384.0, 65536.0])
    fig = llm_plots.io_ratio(M, [64, 128])
    lines = fig.axes[0].lines        # the dotted 1, one line per d (same M), then the grey references per d
    d = 128
    b = np.array([llm_plots.tile_for(16384, d), llm_plots.tile_for(65536, d)])
    same_m = np.array([llm_plots.standard_same_m(16384, d), llm_plots.standard_same_m(65536, d)])
    np.testing.assert_allclose(lines[2].get_ydata(), same_m / (2 * d / b))      # both held to one M
    np.testing.assert_allclose(lines[4].get_ydata(), 4 / (2 * d / b))           # the grey reference
    assert lines[2].get_ydata()[0] < 1 < lines[2].get_ydata()[1]   # tiny tiles lose, larger ones win
    assert lines[4].get_linewidth() < lines[2].get_linewidth()
    assert fig.axes[0].get_xscale() == "log" and fig.axes[0].get_xticklabels()[0].get_text() == "$2^{14}$"
    texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "1: above it, tiling wins" in texts and texts.count("standard with unlimited memory") == 1
    legible(fig)


def test_decode_costs_are_the_larger_of_reading_and_computing():
    cost = llm_plots.decode_costs(7e9, 131072, 2048, [1, 4096], gpus=1)
    reading = (2 * 7e9 + np.array([1, 4096]) * 2048 * 131072) / llm_plots.H100["bandwidth"] * 1e3
    computing = 2 * 7e9 * np.array([1, 4096]) / llm_plots.H100["flops"] * 1e3
    np.testing.assert_allclose(cost["step_ms"], np.maximum(reading, computing))
    assert cost["fits"].tolist() == [True, False]


def _capture(monkeypatch):
    """Replace ipywidgets.interact in the widgets module: keep the draw function, draw nothing yet."""
    captured, shown = {}, []
    monkeypatch.setattr(llm_widgets.widgets, "interact",
                        lambda f, **controls: captured.update(draw=f, controls=controls))
    monkeypatch.setattr(llm_widgets, "show", shown.append)
    return captured, shown


def test_decode_explorer_prints_the_cache_per_token(monkeypatch, capsys):
    captured, shown = _capture(monkeypatch)
    llm_widgets.decode_explorer(gpus=2, kv_heads=1, T=16384)    # starts away from the lesson's figure
    assert (captured["controls"]["kv_heads"].value, captured["controls"]["T"].value) == (1, 16384)
    captured["draw"](kv_heads=16, T=4096)
    assert "g = 16: 655,360 bytes per token" in capsys.readouterr().out   # 2 x 80 x 16 x 128 x 2
    captured["draw"](kv_heads=64, T=32768)
    assert "not one sequence of 32,768 tokens fits" in capsys.readouterr().out
    assert len({id(f) for f in shown}) == 1, "one figure, redrawn"
    legible(shown[0])


def test_rope_explorer_counts_pairs_at_unseen_angles(monkeypatch, capsys):
    captured, shown = _capture(monkeypatch)
    llm_widgets.rope_explorer(d=128, base=1e4, trained_length=4096)
    captured["draw"](scaling="none", factor=16)
    out = capsys.readouterr().out
    trained = 1e4 ** (-np.arange(0, 128, 2) / 128) * 4096 / (2 * math.pi)     # turns in training
    unseen = int((trained < 1).sum())          # pairs short of a whole turn in training reach new angles
    assert "none x16: neighbours differ by 1.000 rad" in out and f"{unseen} of 64 pairs" in out
    captured["draw"](scaling="linear (PI)", factor=16)
    assert "0 of 64 pairs" in capsys.readouterr().out                      # interpolation stays within
    assert len({id(f) for f in shown}) == 1
    legible(shown[0])


def test_rope_explorer_legend_names_each_artist(monkeypatch):
    """Each legend entry is drawn with its own artist's colour: the grey bars are the trained turns, the
    blue bars the stretched ones, the red line one whole turn."""
    from matplotlib.colors import same_color
    captured, shown = _capture(monkeypatch)
    llm_widgets.rope_explorer(d=128, base=1e4, trained_length=4096)
    captured["draw"](scaling="NTK", factor=8)
    legend = shown[0].axes[0].get_legend()
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels == ["trained: 4,096 tokens", "now: 32,768 tokens", "now, past the trained angles",
                      "one whole turn"]
    trained, now, beyond, turn = legend.legend_handles
    assert same_color(trained.get_facecolor(), "0.6") and same_color(now.get_facecolor(), "tab:blue")
    assert same_color(beyond.get_facecolor(), "tab:orange")
    bars = shown[0].axes[0].containers[1]
    orange = [i for i, bar in enumerate(bars) if same_color(bar.get_facecolor(), "tab:orange")]
    assert orange == list(range(46, 63))     # NTK x8: 17 of the 18 pairs short of a turn, all but the last
    assert same_color(turn.get_color(), "tab:red") and turn.get_linestyle() == ":"


def test_io_explorer_plots_both_ratios_against_m_and_gives_no_exercise_away(monkeypatch, capsys):
    captured, shown = _capture(monkeypatch)
    llm_widgets.io_explorer(d=64)
    captured["draw"](M=262144, d=64)
    T, d, b, c = 65536, 64, 399, 511                          # the largest b with 4 b d + b^2 <= 262,144
    assert 4 * b * d + b * b <= 262144 < 4 * (b + 1) * d + (b + 1) ** 2
    assert c * c + 2 * c <= 262144 < (c + 1) ** 2 + 2 * (c + 1) and llm_plots.matmul_tile_for(262144) == c
    tiled = 2 * T * d + 2 * T**2 * d / b
    # c > d: PV's output tiles are c x d, each entry of P read once, V's rows c at a time
    uneven, even = (4 * T * d + 4 * T**2) / tiled, ((3 + 2 * d / c + 1 + d / c) * T**2 + T * d) / tiled
    out = capsys.readouterr().out
    assert f"M = 262,144, d = 64: tiles of {b}; the tiled loop moves {uneven:.1f} times fewer" in out
    assert f"{even:.1f} times fewer than standard attention tiled in the same M" in out
    ax = shown[0].axes[0]
    lines = [line for line in ax.lines if line.get_label().startswith("against")]
    M = 2.0 ** np.arange(12, 21)
    assert np.allclose(lines[0].get_xdata(), M) and np.isclose(lines[0].get_ydata()[6], uneven)
    assert np.isclose(lines[1].get_ydata()[6], even)
    assert len({id(f) for f in shown}) == 1, "one figure, redrawn"
    legible(shown[0])


def test_io_explorer_offers_no_d_of_exercise_4():
    import inspect
    assert "[32, 64, 128]" in inspect.getsource(llm_widgets.io_explorer)


def test_per_entry_moves_match_exercise_4():
    small, h100 = llm_plots.per_entry_moves(16384, 256), llm_plots.per_entry_moves(116736, 256)
    assert (small["b"], small["c"], h100["b"], h100["c"]) == (15, 127, 103, 340)
    assert round(small["tiled"], 1) == 34.1 and round(small["standard, same M"], 1) == 11.1
    assert round(h100["tiled"], 2) == 4.97 and round(h100["standard, same M"], 2) == 6.26   # c = 340 > d


def test_prefill_decode_draws_the_square_then_one_row_per_step():
    from matplotlib.patches import Rectangle
    fig = llm_plots.prefill_decode(prompt=5, steps=2)
    cells = [len([p for p in ax.patches if isinstance(p, Rectangle)]) for ax in fig.axes]
    assert cells == [25, 6, 7]                     # 5 x 5 prefill, then 1 x 6 and 1 x 7
    legible(fig)
    with pytest.raises(ValueError, match="prompt must be"):
        llm_plots.prefill_decode(prompt=0)


def test_h100_memory_is_what_nvidia_smi_reports():
    """An "80 GB" H100 shows 81,559 MiB (85.5e9 bytes), not 80 GiB (85.9e9)."""
    assert llm_plots.H100["memory_bytes"] == 81_559 * 2**20
    assert round(llm_plots.H100["memory_bytes"] / 1e9, 1) == 85.5


def test_stepwise_losses_match_one_pass_and_llama_weights_count():
    import torch

    import selfattention as sa
    model = sa.llm.load_llama(seed=0)
    ids = model.encode(sa.llm.zen_of_python()[:41])                  # (1, 41)
    with torch.no_grad():
        logits = model(ids[:, :-1])[0]
    one_pass = torch.nn.functional.cross_entropy(logits[20:], ids[0, 21:]).item()
    assert math.isclose(sa.llm.stepwise_losses(model, ids, 20)[0], one_pass, rel_tol=1e-4)
    with pytest.raises(ValueError, match="score_from"):
        sa.llm.stepwise_losses(model, ids, 40)
    # Llama 2 70B's published count; a hand count for a tiny shape (embeddings, 4 attention and 3 MLP
    # matrices, 2 norms per layer, the final norm, the output matrix)
    assert sa.llm.llama_weights(8192, 28672, 80, 64, 8, 32000) == 68_976_648_192
    h, f, L, heads, kv, V = 16, 40, 3, 4, 2, 11
    per_layer = 2 * h * h + 2 * h * (h // heads * kv) + 3 * h * f + 2 * h
    assert sa.llm.llama_weights(h, f, L, heads, kv, V) == 2 * V * h + L * per_layer + h


def test_decode_rates_draws_each_g_and_the_compute_bound_line():
    fig = llm_plots.decode_rates(68_976_648_192, layers=80, d_k=128, T=4096, kv_heads=(8, 64))
    ax = fig.axes[0]
    assert len(ax.lines) == 5                            # fits / does not fit for each g, then FLOPs only
    fits = [np.isfinite(line.get_ydata()).sum() for line in ax.lines[0:4:2]]
    assert fits[0] > fits[1] > 0                         # g = 8 fits more sequences than g = 64
    assert ax.get_legend()._loc == 4                     # lower right, off the compute-bound line
    legible(fig)


def test_rope_pairs_turning_draws_one_circle_per_pair_titled_by_wavelength():
    fig = llm_plots.rope_pairs_turning(d=16, pairs=(0, 7), positions=range(0, 9))
    axes = fig.axes
    assert len(axes) == 2
    assert "turn every 6" in axes[0].get_title() and "turn every 19,869" in axes[1].get_title()
    plt.close(fig)


def test_window_reach_titles_each_panel_with_l_times_w_minus_1_plus_1():
    fig = llm_plots.window_reach(T=24, window=5, layers=3)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["1 layer: reach 5", "2 layers: reach 9", "3 layers: reach 13"]
    plt.close(fig)
