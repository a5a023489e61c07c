"""Figures and widgets of lessons 09 (selfattention.plots.masks, .widgets.masks) and 10 (.plots.cost,
.widgets.cost): what they draw, the numbers they print, their text sizes and their errors on bad input."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.text import Text  # noqa: E402

import selfattention as sa  # noqa: E402
from selfattention.plots import cost as cost_plots  # noqa: E402
from selfattention.plots import masks as mask_plots  # noqa: E402
from selfattention.widgets import cost as cost_widgets  # noqa: E402
from selfattention.widgets import masks as mask_widgets  # noqa: E402


def smallest_text(fig: plt.Figure) -> float:
    """The smallest font size (points) of the figure's visible, non-empty texts."""
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    return min(sizes)


def legible(fig: plt.Figure) -> None:
    """Shown across a 1280-px slide, the figure's smallest text is at least 20 px."""
    width_in = fig.get_size_inches()[0]
    assert smallest_text(fig) * 1280 / (width_in * 72) >= 20, (smallest_text(fig), width_in)


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_encoding_map_draws_positions_by_columns_on_one_scale():
    pe = sa.sinusoidal_positional_encoding(64, 32)
    fig = mask_plots.encoding_map(pe)
    image = fig.axes[0].images[0]
    assert image.get_array().shape == (32, 64) and image.get_clim() == (-1, 1)
    legible(fig)
    with pytest.raises(ValueError, match=r"pe must have 2 dimensions, got shape \(3,\)"):
        mask_plots.encoding_map(np.zeros(3))


def test_weight_maps_share_one_scale_and_name_nan_and_exact_zeros():
    w = np.array([[1.0, 0.0], [np.nan, np.nan]])
    fig = mask_plots.weight_maps([np.full((2, 2), 0.5), w], ["a", "b"], ["x", "y"])
    assert {ax.images[0].get_clim() for ax in fig.axes[:2]} == {(0.0, 1.0)}
    texts = [t.get_text() for t in fig.axes[1].texts]
    assert texts == ["1.00", "0", "NaN", "NaN"]
    legible(fig)
    with pytest.raises(ValueError, match="one title per matrix"):
        mask_plots.weight_maps([w], ["a", "b"], ["x", "y"])


def test_masked_weights_follow_each_fill_on_a_row_with_no_allowed_key():
    scores = np.array([[1.0, 2.0], [3.0, 4.0]])
    mask = np.array([[True, False], [False, False]])
    nan, uniform, zeros, soft = (mask_widgets.masked_weights(scores, mask, fill)
                                 for fill in mask_widgets.FILLS)
    np.testing.assert_allclose(soft[0], sa.softmax(np.array([1.0, 2.0 - 10.0])))
    assert (soft > 0).all()
    assert np.isnan(nan[1]).all() and nan[0].tolist() == [1.0, 0.0]
    assert uniform[1].tolist() == [0.5, 0.5] and uniform[0].tolist() == [1.0, 0.0]
    assert zeros[1].tolist() == [0.0, 0.0]
    unmasked = mask_widgets.masked_weights(scores, None, mask_widgets.FILLS[0])
    np.testing.assert_allclose(unmasked, sa.softmax(scores))
    with pytest.raises(ValueError, match="fill is 'zero'"):
        mask_widgets.masked_weights(scores, mask, "zero")
    with pytest.raises(ValueError, match="mask must be a boolean array"):
        mask_widgets.masked_weights(scores, mask.astype(int), mask_widgets.FILLS[0])


def test_mask_explorer_redraws_one_figure_and_counts(monkeypatch, capsys):
    shown = []
    monkeypatch.setattr(mask_widgets, "show", shown.append)
    causal = sa.causal_mask(4)
    left = np.arange(4) >= 2
    widget = mask_widgets.mask_explorer(np.zeros((4, 4)), list("abcd"), {"none": None, "both": causal & left},
                                        mask="both")
    widget.update()
    assert "5 of 16 weights are exactly 0; 2 rows are NaN." in capsys.readouterr().out
    widget.children[0].value = "none"
    assert "0 of 16 weights are exactly 0; 0 rows are NaN." in capsys.readouterr().out
    assert len({id(f) for f in shown}) == 1, "one figure, redrawn"
    legible(shown[0])
    assert [t.get_text() for t in shown[0].axes[0].get_xticklabels()] == list("abcd")
    widget.children[0].value = "both"
    assert [t.get_text() for t in shown[0].axes[0].get_xticklabels()] == ["<pad>", "<pad>", "c", "d"]
    with pytest.raises(ValueError, match="one label per token"):
        mask_widgets.mask_explorer(np.zeros((4, 4)), list("abc"), {"none": None})


def test_example_masks_are_the_lessons_masks():
    masks = mask_widgets.example_masks(6, pad=2)
    causal = sa.causal_mask(6)
    left = np.arange(6) >= 2
    assert masks["none"] is None
    assert np.array_equal(masks["causal"], causal)
    assert np.array_equal(masks["right padding"], np.broadcast_to(np.arange(6) < 4, (6, 6)))
    assert np.array_equal(masks["left padding"], np.broadcast_to(left, (6, 6)))
    assert np.array_equal(masks["causal + left padding"], causal & left)
    assert not masks["causal + left padding"][:2].any(), "the two padding queries have no allowed key"
    with pytest.raises(ValueError, match="pad must be"):
        mask_widgets.example_masks(4, pad=4)
    with pytest.raises(ValueError, match="T must be"):
        mask_widgets.example_masks(0)


def test_dependence_and_dilution_curves_draw_a_band_per_label():
    fig = cost_plots.dependence_curves(np.arange(1, 6), {"a": np.ones((8, 5)), "b": np.full((8, 5), 0.5)})
    assert len(fig.axes[0].collections) == 2
    legible(fig)
    fig = cost_plots.dilution_curves(np.array([16, 32]), {"w": np.full((8, 2), 0.5)},
                                     {"f": np.array([0.5, 0.4])})
    assert [line.get_label() for line in fig.axes[0].lines] == ["w (8 draws)", "f"]
    legible(fig)
    with pytest.raises(ValueError, match=r"a must be \(runs, 5\)"):
        cost_plots.dependence_curves(np.arange(1, 6), {"a": np.ones(5)})


def test_memory_and_time_has_a_time_panel_only_when_given_times():
    sizes = np.array([256, 512, 1024])
    fig = cost_plots.memory_and_time(sizes, {"full": sizes ** 2 / 1e4})
    assert len(fig.axes) == 1 and "grows like T^2.0" in fig.axes[0].get_legend().get_texts()[0].get_text()
    fig = cost_plots.memory_and_time(sizes, {"full": sizes ** 2 / 1e4}, [1.0, 2.0, 3.0])
    assert len(fig.axes) == 2
    legible(fig)


def test_planted_weights_are_the_softmax_weight_of_the_planted_key():
    distractors = np.random.default_rng(0).normal(size=99)
    got = cost_widgets.planted_weights(distractors, np.array([1, 10, 100]), 3.0)
    for T, w in zip([1, 10, 100], got, strict=True):
        assert w == pytest.approx(sa.softmax(np.concatenate([[3.0], distractors[:T - 1]]))[0])
    assert cost_widgets.planted_weights(distractors, np.array([10]), 1000.0)[0] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="1 <= T <= n \\+ 1"):
        cost_widgets.planted_weights(distractors, np.array([101]), 3.0)


def test_dilution_explorer_prints_the_planted_weight(monkeypatch, capsys):
    shown = []
    monkeypatch.setattr(cost_widgets, "show", shown.append)
    distractors = np.zeros(2 ** 16)
    widget = cost_widgets.dilution_explorer(distractors, margin=0.0, log2_T=4)
    widget.update()
    assert "T = 16, margin 0: the planted key gets 0.062 of the weight" in capsys.readouterr().out
    legible(shown[0])
    with pytest.raises(ValueError, match="distractors must be"):
        cost_widgets.dilution_explorer(np.zeros(10))


def test_encoding_map_draws_a_clock_per_pair():
    fig = mask_plots.encoding_map(sa.sinusoidal_positional_encoding(64, 32), pairs=(0, 2, 40))
    # pair c = 40 is beyond d_model / 2, so it draws no clock
    assert [line.get_label() for line in fig.axes[1].lines if line.get_label().startswith("pair")] == \
        ["pair c = 0", "pair c = 2"]
    assert fig.axes[0].get_xlabel() == "position i"
    clocks = [line for line in fig.axes[1].lines if line.get_label().startswith("pair")]
    assert {line.get_linestyle() for line in clocks} == {"None"}, "markers only: no chords between positions"
    pair0 = next(line for line in fig.axes[1].lines if line.get_label() == "pair c = 0")
    x, y = pair0.get_data()
    np.testing.assert_allclose(np.hypot(x, y), 1.0)          # every position's pair lies on the unit circle
    np.testing.assert_allclose(x, np.sin(np.arange(12)))     # pair 0 turns by 1 radian per position
    legible(fig)


def test_dependence_ticks_hold_one_and_step_by_1e20():
    runs = np.geomspace(1e-60, 1e30, 5)[None].repeat(8, axis=0)
    fig = cost_plots.dependence_curves(np.arange(1, 6), {"a": runs})
    ticks = fig.axes[0].get_yticks()
    assert 1.0 in ticks and np.allclose(np.diff(np.log10(ticks)), 20)


def test_memory_and_time_draws_several_timed_variants():
    sizes = np.array([256, 512, 1024])
    fig = cost_plots.memory_and_time(sizes, {"full": sizes ** 2 / 1e4}, {"a": [1, 2, 3], "b": [1, 1, 1]})
    assert [t.get_text() for t in fig.axes[1].get_legend().get_texts()] == ["a", "b"]
    legible(fig)


def test_dependence_reaches_back_through_both_models():
    rnn, layer = cost_plots.seeded_model(0, 1.0), cost_plots.seeded_model(0)
    assert isinstance(rnn, __import__("torch").nn.RNN)
    d_rnn, d_att = cost_plots.dependence(rnn, 100, 32), cost_plots.dependence(layer, 100, 32)
    assert d_rnn.shape == d_att.shape == (31,)
    assert d_rnn[-1] < 1e-3 * d_rnn[0]              # the default RNN forgets the first token
    assert d_att[-1] > 0.1 * d_att[0]               # one attention layer reaches it directly
    with pytest.raises(ValueError, match="T must be at least 2"):
        cost_plots.dependence(rnn, 0, 1)


def test_time_panel_draws_a_band_over_repeats():
    sizes = np.array([256, 512, 1024])
    fig = cost_plots.memory_and_time(sizes, {"full": sizes ** 2 / 1e4}, {"a": [[1, 2, 3], [2, 3, 4]]})
    np.testing.assert_allclose(fig.axes[1].lines[0].get_ydata(), [1.5, 2.5, 3.5])   # the median run
    assert len(fig.axes[1].collections) == 1                                    # the band of the runs
    legible(fig)


def test_measuring_helpers_of_lesson_10():
    _, peak = cost_plots.peak_memory(np.zeros, 10_000)
    assert peak >= 80_000
    assert cost_plots.spread([1.0, 2.0, 10.0], ".1f") == "2.0 [1.0, 10.0]"
    with pytest.raises(ValueError, match="x must hold"):
        cost_plots.spread([], ".1f")
    inputs = {T: np.random.default_rng(T).normal(size=(3, T, 16)) for T in (64, 128)}
    torch = __import__("torch")

    def fresh(Q, K, V, S):
        return torch.softmax(Q @ K.T, dim=-1) @ V

    def in_place(Q, K, V, S):
        torch.matmul(Q, K.T, out=S)
        return S.softmax(dim=-1) @ V

    ns = cost_plots.time_per_score(inputs, {"fresh": fresh, "in place": in_place}, repeats=3)
    assert list(ns) == ["fresh", "in place"]
    assert all(v.shape == (3, 2) and (v > 0).all() for v in ns.values())
    with pytest.raises(ValueError, match=r"inputs\[64\] must have shape"):
        cost_plots.time_per_score({64: np.zeros((3, 32, 16))}, {"fresh": fresh})
    with pytest.raises(ValueError, match="variants must name"):
        cost_plots.time_per_score(inputs, {})


def test_time_panel_is_logarithmic_and_timing_warms_up():
    """Single runs span decades, so the time axis is logarithmic; each variant's first call, which pays
    one-time costs, is made before the timed runs and not returned."""
    sizes = np.array([256, 512, 1024])
    fig = cost_plots.memory_and_time(sizes, {"full": sizes ** 2 / 1e4}, {"a": [[5, 6, 7], [200, 60, 9]]})
    assert fig.axes[1].get_yscale() == "log"
    assert "middle half" in fig.axes[1].get_title()
    calls = []
    variants = {"a": lambda *a: calls.append("a"), "b": lambda *a: calls.append("b")}
    ns = cost_plots.time_per_score({8: np.zeros((3, 8, 4))}, variants, repeats=3)
    assert calls == ["a"] * 4 + ["b"] * 4                    # one untimed warm-up, then 3 timed runs each
    assert all(v.shape == (3, 1) for v in ns.values())


def test_step_times_cover_every_step_and_the_bar_stacks_them():
    """Each of the seven steps is timed per T (fastest run, ns per score), and the stacked bar's top is their
    sum; the two products are hatched."""
    rng = np.random.default_rng(0)
    sizes = [32, 64]
    steps = cost_plots.step_times({T: rng.normal(size=(3, T, 8)) for T in sizes}, repeats=2)
    assert list(steps) == list(cost_plots.STEPS)
    assert all(v.shape == (2,) and (v > 0).all() and np.isfinite(v).all() for v in steps.values())
    fig = cost_plots.step_bars(sizes, steps)
    bars = fig.axes[0].patches
    assert len(bars) == 7 * len(sizes)
    top = max(b.get_y() + b.get_height() for b in bars)
    assert np.isclose(top, max(sum(steps.values())))
    assert sum(bool(b.get_hatch()) for b in bars) == 2 * len(sizes)
    with pytest.raises(ValueError, match="repeats must be at least 1"):
        cost_plots.step_times({8: np.zeros((3, 8, 4))}, repeats=0)

def test_position_maps_share_one_scale_and_mark_the_fitted_rows():
    fig = mask_plots.position_maps([np.eye(64), np.full((64, 64), 1 / 64)], ["a", "b"], fitted=40)
    assert {ax.images[0].get_clim() for ax in fig.axes[:2]} == {(0.0, 1.0)}
    assert fig.axes[0].lines[0].get_ydata()[0] == 39.5                # the line under the last fitted row
    legible(fig)
    with pytest.raises(ValueError, match="one title per matrix"):
        mask_plots.position_maps([np.eye(3)], ["a", "b"], fitted=2)
    with pytest.raises(ValueError, match=r"matrices\[0\] must have 2 dimensions"):
        mask_plots.position_maps([np.zeros(3)], ["a"], fitted=2)


def test_print_reorderings_one_causal_layer_ignores_the_order_of_the_words_before(capsys):
    from selfattention.positional import print_reorderings

    rng = np.random.default_rng(0)
    vectors = {w: rng.normal(size=4) for w in "abcd"}

    def layer(h):
        return sa.scaled_dot_product_attention(h, h, h, sa.causal_mask(len(h)))[0]

    print_reorderings(layer, vectors, list("abcd"), prefix=3, depths=(1, 2))
    rows = [line.split(" | ") for line in capsys.readouterr().out.splitlines()[1:]]
    assert [r[1].strip() for r in rows] == ["0", "5"]         # 5 other orders of 3 distinct words
    assert rows[0][2].strip() == "0" and float(rows[1][2]) > 0


def test_first_token_accuracy_needs_positions():
    """Without positions every order is one multiset: no better than a constant answer; a fixed random table
    lets the layer name the first token."""
    import pytest

    from selfattention.positional import first_token_accuracy

    assert first_token_accuracy("none", 0) <= 0.25
    assert first_token_accuracy("random table", 0) >= 0.8
    with pytest.raises(ValueError, match="positions must be one of"):
        first_token_accuracy("rope", 0)


def test_dot_products_by_offset_overlap_for_sinusoids_only():
    pe = sa.sinusoidal_positional_encoding(64, 32)
    fig = mask_plots.dot_products_by_offset([pe, np.random.default_rng(1).normal(size=(64, 32))], ["a", "b"],
                                            starts=range(20, 28))
    sine, rand = ([line.get_ydata() for line in ax.lines[:8]] for ax in fig.axes[:2])
    assert np.ptp(np.array(sine), axis=0).max() < 1e-9 and np.ptp(np.array(rand), axis=0).max() > 1.0
    legible(fig)
    with pytest.raises(ValueError, match="leave the tables' rows"):
        mask_plots.dot_products_by_offset([pe], ["a"], starts=[5])


def test_position_maps_zoom_circles_the_key_before_each_query():
    fig = mask_plots.position_maps([np.eye(64, k=-1), np.eye(64)], ["a", "b"], fitted=40, zoom=(50, 6))
    zoom = fig.axes[2]
    assert list(zoom.lines[0].get_xdata()) == [49, 50, 51, 52, 53, 54]     # circles on (i, i - 1)
    legible(fig)
