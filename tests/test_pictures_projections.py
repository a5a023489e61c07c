"""Lesson 04's figures and widget (selfattention.plots.projections, selfattention.widgets.projections):
legible on a slide, one colour scale, and a widget that redraws its one figure with the right weights."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.text import Text  # noqa: E402

import selfattention as sa  # noqa: E402
from selfattention.plots import projections as figures  # noqa: E402
from selfattention.widgets import projections as designer  # noqa: E402

WORDS = ["Sam", "ate", "red", "apple"]
K = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 0], [0, 0, 1]], dtype=float)
V = np.array([[1, 0], [0, 0], [0, 0], [0, 1]], dtype=float)


def smallest_text_pt(fig) -> float:
    fig.canvas.draw()  # tick labels exist once drawn
    return min(t.get_fontsize() for t in fig.findobj(Text) if t.get_text() and t.get_visible())


def test_deck_font_is_20_px_at_the_decks_width():
    assert figures.deck_font_pt(12.0) == pytest.approx(20 * 72 * 12 / figures.DECK_PX)
    assert figures.deck_font_pt(12.0, shown_px=12 * 72) == pytest.approx(20.0)  # 1 pt = 1 px at 72 px/inch
    with pytest.raises(ValueError, match="width_in must be a positive width"):
        figures.deck_font_pt(0)


def test_legible_raises_every_text_including_ticks_made_at_draw_time():
    fig, ax = plt.subplots(figsize=(10, 3))
    ax.plot([0, 1], [0, 1])
    ax.set_title("t", fontsize=6)
    fig.colorbar(ax.imshow(np.eye(2)), ax=ax)
    figures.legible(fig)
    assert smallest_text_pt(fig) >= figures.deck_font_pt(10) - 1e-9
    with pytest.raises(TypeError, match="fig is a str"):
        figures.legible("figure")
    plt.close(fig)


def test_weights_compared_shares_one_scale_and_writes_each_weight():
    flat, sharp = np.full((4, 4), 0.25), np.eye(4)
    fig = figures.weights_compared([flat, sharp], ["flat", "sharp"], WORDS)
    panels = [ax for ax in fig.axes if ax.images and ax.get_title()]
    assert [ax.get_title() for ax in panels] == ["flat", "sharp"]
    assert {ax.images[0].get_clim() for ax in panels} == {(0.0, 1.0)}  # the flat map is not stretched
    assert sorted(t.get_text() for t in panels[0].texts) == ["0.25"] * 16
    assert smallest_text_pt(fig) >= figures.deck_font_pt(fig.get_figwidth()) - 1e-9
    with pytest.raises(ValueError, match="one title per map"):
        figures.weights_compared([flat], ["a", "b"], WORDS)
    with pytest.raises(ValueError, match=r"each map \(4, 4\)"):
        figures.weights_compared([np.eye(3)], ["a"], WORDS)
    plt.close("all")


def test_feature_and_scores_labels_M_by_feature_on_one_scale():
    M = np.array([[0, 2, 0], [1, 0, 2], [0, 0, 0]], dtype=float)
    scores = [np.eye(4), np.full((4, 4), -1.0)]
    fig = figures.feature_and_scores(M, ["person", "action", "food"], scores, ["M", "a", "b"], WORDS)
    panels = [ax for ax in fig.axes if ax.images and ax.get_title()]
    assert [ax.get_title() for ax in panels] == ["M", "a", "b"]
    assert {ax.images[0].get_clim() for ax in panels} == {(-1.0, 2.0)}
    assert [t.get_text() for t in panels[0].get_yticklabels()] == ["person", "action", "food"]
    assert [t.get_text() for t in panels[1].get_xticklabels()] == WORDS
    assert sorted(t.get_text() for t in panels[0].texts).count("2") == 2
    assert smallest_text_pt(fig) >= figures.deck_font_pt(fig.get_figwidth()) - 1e-9
    with pytest.raises(ValueError, match="one title per map"):
        figures.feature_and_scores(M, ["person", "action", "food"], scores, ["M"], WORDS)
    plt.close("all")


def test_shared_or_not_names_the_toys_features_and_the_three_maps():
    fig = figures.shared_or_not(np.eye(5), np.eye(4), np.eye(4), np.zeros((4, 4)), WORDS)
    panels = [ax for ax in fig.axes if ax.images and ax.get_title()]
    assert [t.get_text() for t in panels[0].get_yticklabels()] == list(figures.TOY_FEATURES)
    titles = ["$W_K$ for both roles", "$W_Q$ for both roles", "$W_Q$ and $W_K$"]
    assert [ax.get_title() for ax in panels][1:] == titles
    plt.close("all")


def test_query_steps_draws_every_number_on_the_way():
    q = np.array([1.0, 0.0, 2.0])
    scores = K @ q
    weights = sa.softmax(scores)
    fig = figures.query_steps(WORDS, "ate", q, K, V, scores, weights, weights @ V)
    texts = " ".join(t.get_text() for t in fig.findobj(Text))
    for w in weights:
        assert f"{w:.2f}" in texts
    assert "[1, 0, 2]" in texts and "apple: [0, 0, 1]" in texts
    assert f"[0.00, {weights[3]:.2f}]" in texts  # alpha_apple v_apple, next to v_apple itself
    assert f"[{weights[0]:.2f}, 0.00]" in texts and "[0.00, 0.00]" in texts  # 2 decimals each
    assert smallest_text_pt(fig) >= figures.deck_font_pt(fig.get_figwidth()) - 1e-9
    with pytest.raises(ValueError, match="one row per word"):
        figures.query_steps(WORDS, "ate", q, K[:3], V, scores, weights, weights @ V)
    plt.close("all")


def test_keys_and_queries_draws_each_key_as_a_point_and_each_query_as_an_arrow():
    keys = np.array([[1, 0], [0, 1], [-1, 0], [0, -1]], dtype=float)
    queries = 3 * np.roll(keys, -1, axis=0)
    fig = figures.keys_and_queries(queries, keys, WORDS)
    ax = fig.axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert all(f"k {w}" in texts and f" q {w}" in texts for w in WORDS)
    points = [line.get_xydata()[0].tolist() for line in ax.lines if line.get_marker() == "o"]
    assert points == keys.tolist()
    arrows = [a.xy for a in ax.texts if getattr(a, "arrow_patch", None)]
    assert arrows == [tuple(q) for q in queries]
    half = figures.DECK_PX / 2
    assert smallest_text_pt(fig) >= figures.deck_font_pt(fig.get_figwidth(), shown_px=half) - 1e-9
    with pytest.raises(ValueError, match="expected both"):
        figures.keys_and_queries(queries[:, :1], keys, WORDS)
    plt.close("all")


def test_keys_and_queries_draws_only_the_queries_asked_for():
    keys = np.array([[1, 0], [0, 1], [-1, 0], [0, -1]], dtype=float)
    fig = figures.keys_and_queries(np.full((4, 2), 2.0), keys, WORDS, queries=[WORDS[0]])
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert f" q {WORDS[0]}" in texts and not any(f" q {w}" in texts for w in WORDS[1:])
    with pytest.raises(ValueError, match="queries: got"):
        figures.keys_and_queries(np.full((4, 2), 2.0), keys, WORDS, queries=["pear"])
    plt.close("all")


def test_query_designer_redraws_its_one_figure_with_the_softmax(monkeypatch, capsys):
    shown = []
    monkeypatch.setattr(designer, "show", shown.append)
    widget = designer.query_designer(K, V, WORDS, q0=[1.0, 0.0, 2.0], axes=["person", "action", "food"],
                                     values=["person", "food"])
    capsys.readouterr()
    sliders = {c.description: c for c in widget.children if hasattr(c, "description")}
    sliders["action"].value = 2.0  # q = (1, 2, 2)
    fig = shown[-1]
    assert all(f is fig for f in shown), "one figure, redrawn"
    smallest = figures.deck_font_pt(fig.get_figwidth(), shown_px=designer.WIDGET_PX)
    assert smallest_text_pt(fig) >= smallest - 1e-9
    heights = [bar.get_height() for bar in fig.axes[0].patches]
    want = sa.softmax(K @ np.array([1.0, 2.0, 2.0]))
    np.testing.assert_allclose(heights, want)
    out = capsys.readouterr().out
    z = ", ".join(f"{x:g}" for x in np.round(want @ V, 2))
    assert f"q = [1, 2, 2]: z = sum_j alpha_j v_j = [{z}] (person, food)" in out, out
    with pytest.raises(ValueError, match="expected K"):
        designer.query_designer(K, V, WORDS, q0=[1.0, 0.0], axes=["a", "b", "c"], values=["p", "f"])
    plt.close("all")
