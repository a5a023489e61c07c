"""Lesson 01's figures and widgets (selfattention.plots.embeddings, selfattention.widgets.embeddings): text
legible on a slide, what each draws, bad input named, widgets that build their figure once."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from figure_text import small_texts  # noqa: E402

from selfattention.data import load_static_embeddings  # noqa: E402
from selfattention.plots import embeddings as plots  # noqa: E402
from selfattention.widgets import embeddings as embedding_widgets  # noqa: E402

CHANCE = np.random.default_rng(0).normal(0.01, 0.08, size=5000)


def test_length_angle_figure_labels_lengths_dot_products_and_angles() -> None:
    A, C = np.array([1.0, 4.0]), np.array([3.0, 2.0])
    fig = plots.length_angle_figure({"A": A, "2A": 2 * A, "C": C}, "C")
    assert not small_texts(fig)
    text = " | ".join(t.get_text() for t in fig.axes[0].texts)
    assert "A: length 4.12, A . C = 11, angle 42° to C" in text, text
    assert "2A . C = 22, angle 42° to C" in text, text
    assert "C: length 3.61" in text, text
    with pytest.raises(ValueError, match="ref is 'D'"):
        plots.length_angle_figure({"A": A}, "D")
    with pytest.raises(ValueError, match=r"expected \(2,\) each"):
        plots.length_angle_figure({"A": [1.0, 2.0, 3.0], "C": C}, "C")
    plt.close("all")


def test_lookup_diagram_shows_the_numbers_it_is_given() -> None:
    fig = plots.lookup_diagram(["bank", "money"], [2924, 2769], (30522, 384), 0.3978)
    assert not small_texts(fig)
    text = " ".join(t.get_text() for t in fig.axes[0].texts)
    assert "2924, 2769" in text and "(30522, 384)" in text and "0.398" in text
    with pytest.raises(ValueError, match="expected two words"):
        plots.lookup_diagram(["bank"], [1], (2, 3), 0.5)
    plt.close("all")


def test_groups_figure_marks_the_percentiles_and_every_cosine_of_each_group() -> None:
    groups = {"synonyms": [0.5, 0.6, 0.4], "opposites": [0.45, 0.35]}
    fig = plots.groups_figure(CHANCE, groups)
    assert not small_texts(fig)
    top, bottom = fig.axes
    lines = sorted(line.get_xdata()[0] for line in top.lines)
    np.testing.assert_allclose(lines, np.percentile(CHANCE, plots.PERCENTILES))
    assert any("99th" in t.get_text() for t in top.texts)
    assert [t.get_text() for t in bottom.get_yticklabels()] == ["synonyms (3)", "opposites (2)"]
    dots = np.concatenate([c.get_offsets()[:, 0] for c in bottom.collections])
    np.testing.assert_allclose(sorted(dots), sorted([0.5, 0.6, 0.4, 0.45, 0.35]))
    with pytest.raises(ValueError, match="groups is empty"):
        plots.groups_figure(CHANCE, {})
    plt.close("all")


def test_margin_dots_figure_labels_every_word_and_marks_zero() -> None:
    groups = {"ambiguous": {"bank": -0.010, "mouse": 0.170}, "controls": {"wallet": -0.231, "violin": -0.035}}
    fig = plots.margin_dots_figure(groups, "99th percentile")
    assert not small_texts(fig)
    ax = fig.axes[0]
    assert {t.get_text() for t in ax.texts} == {"bank", "mouse", "wallet", "violin"}
    assert [t.get_text() for t in ax.get_yticklabels()] == ["ambiguous (2)", "controls (2)"]
    assert "99th percentile" in ax.get_xlabel()
    assert any(list(line.get_xdata()) == [0, 0] for line in ax.get_lines())
    with pytest.raises(ValueError, match="groups is empty"):
        plots.margin_dots_figure({}, "99th")
    plt.close("all")


def test_pca_plane_fixes_the_signs_and_reports_the_spread_kept() -> None:
    from selfattention.data import pca_plane

    rows = np.random.default_rng(0).normal(size=(8, 5)) + np.r_[[0.0] * 4, [3.0] * 4][:, None] * np.eye(5)[0]
    centre, P2, kept = pca_plane(rows, 4)
    assert P2.shape == (5, 2) and 0 < kept <= 1
    assert (rows[4:].mean(0) - rows[:4].mean(0)) @ P2[:, 0] > 0 and P2[:, 1].sum() > 0
    _, P2_again, _ = pca_plane(rows * 1.0, 4)
    np.testing.assert_allclose(P2, P2_again)
    np.testing.assert_allclose(centre, rows.mean(0))
    with pytest.raises(ValueError, match="n_first is 8"):
        pca_plane(rows, 8)


def test_chance_figure_marks_the_percentiles_and_every_pair() -> None:
    pairs = {"bank ~ money": 0.398, "apple ~ juice": 0.169}
    fig = plots.chance_figure(CHANCE, pairs, controls={"a ~ b": 0.05, "c ~ d": -0.01},
                              controls_label="mismatched")
    assert not small_texts(fig)
    top, bottom = fig.axes
    lines = sorted(line.get_xdata()[0] for line in top.lines)
    np.testing.assert_allclose(lines, np.percentile(CHANCE, plots.PERCENTILES))
    labels = [t.get_text() for t in bottom.get_yticklabels()]
    assert labels == ["bank ~ money", "apple ~ juice", "2 mismatched"]
    dots = np.concatenate([c.get_offsets()[:, 0] for c in bottom.collections])
    np.testing.assert_allclose(sorted(dots), sorted([0.398, 0.169, 0.05, -0.01]))
    low, high = bottom.get_xlim()
    assert low < -0.01 and high > 0.398
    with pytest.raises(ValueError, match="pairs is empty"):
        plots.chance_figure(CHANCE, {})
    with pytest.raises(ValueError, match="chance has 3 cosines; expected at least 100"):
        plots.chance_figure([0.1, 0.2, 0.3], pairs)
    plt.close("all")


def test_plane_and_cosine_map_are_legible_and_check_shapes() -> None:
    points = {"fruit": {"banana": [-1.0, 0.2], "lemon": [-0.8, 0.1]}, "tech": {"ipad": [1.0, 0.3]}}
    fig = plots.plane_figure(points, {"fruit": "tab:green", "tech": "tab:blue"}, ("apple", [0.1, 0.2]),
                             control=[[0.0, 0.1], [0.2, -0.1]])
    assert not small_texts(fig)
    with pytest.raises(ValueError, match=r"control has shape \(3,\); expected \(n, 2\)"):
        plots.plane_figure(points, {"fruit": "tab:green", "tech": "tab:blue"}, ("apple", [0.1, 0.2]),
                           control=[0.0, 0.1, 0.2])
    sims = np.full((16, 16), 0.8) + 0.2 * np.eye(16)
    fig = plots.cosine_map(sims, [f"s{i}" for i in range(16)], vmin=0.75, groups=[8])
    assert not small_texts(fig)
    assert np.isnan(np.diag(fig.axes[0].images[0].get_array().filled(np.nan))).all()  # the diagonal is masked
    assert fig.axes[0].images[0].get_clim() == (0.75, 1.0)  # the scale shows the contrast, not 0 to 1
    with pytest.raises(ValueError, match=r"cosines has shape \(16, 16\) and labels 3 entries"):
        plots.cosine_map(sims, ["a", "b", "c"], vmin=0.5)
    plt.close("all")


def test_share_below_counts_the_smaller_cosines() -> None:
    assert embedding_widgets.share_below([0.1, 0.2, 0.3, 0.4], 0.25) == 50.0
    assert embedding_widgets.share_below(CHANCE, 1.0) == 100.0
    with pytest.raises(ValueError, match="chance has shape"):
        embedding_widgets.share_below([], 0.1)


@pytest.fixture
def shown(monkeypatch: pytest.MonkeyPatch) -> list:
    """Every interact() call runs its callback once, as ipywidgets does; figures and PNGs are collected."""
    collected: list = []

    def interact(redraw, **controls):
        collected.append(redraw)
        redraw(*(control.value for control in controls.values()))

    monkeypatch.setattr(embedding_widgets.widgets, "interact", interact)
    monkeypatch.setattr(embedding_widgets, "show", collected.append)
    monkeypatch.setattr(embedding_widgets, "display", collected.append)
    return collected


def test_pair_explorer_moves_one_line_and_reads_the_pair(shown: list,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    table = load_static_embeddings()
    embedding_widgets.pair_explorer(table, CHANCE, "apple", "juice")
    redraw, fig = shown[0], shown[1]
    assert not small_texts(fig)
    redraw("Bank ", "money")
    redraw("bank", "zzzqqq")
    assert shown[2] is fig and len(shown) == 3   # redrawn in place; an unknown word draws nothing
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("apple ~ juice: cosine 0.169, higher than")
    assert out[1].startswith("bank ~ money: cosine 0.398")
    assert "'zzzqqq' is not a single token" in out[2]


def test_word_explorer_prints_neighbours_and_checks_its_projection(
        shown: list, capsys: pytest.CaptureFixture[str]) -> None:
    table = load_static_embeddings()
    rng = np.random.default_rng(0)
    centre, directions = np.zeros(384), rng.normal(size=(384, 2))
    clusters = {"fruit": ["banana", "lemon"], "tech": ["ipad", "intel"]}
    embedding_widgets.word_explorer(table, centre, directions, clusters, {"fruit": "g", "tech": "b"})
    redraw, image = shown[0], shown[1]
    assert image.format == "png"
    redraw("bank", 3)
    out = capsys.readouterr().out
    assert "neighbours: banks 0.78, banking 0.66, bankers 0.52" in out
    assert "bank: cosine to the fruit mean" in out
    with pytest.raises(ValueError, match=r"centre has shape \(3,\)"):
        embedding_widgets.word_explorer(table, np.zeros(3), directions, clusters, {})
