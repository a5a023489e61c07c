"""Lesson 00's figures and widget (selfattention.plots.roadmap, selfattention.widgets.roadmap): text legible
on a slide, one colour per word, bad input named, the widget's figure built once and redrawn in place."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from figure_text import small_texts  # noqa: E402

from selfattention.plots import roadmap  # noqa: E402
from selfattention.widgets import roadmap as roadmap_widgets  # noqa: E402

LOVE, APPLE, PHONES, JUICE = (np.array([0.3, 0.3]), np.array([0.7, 0.7]), np.array([0.1, 1.0]),
                              np.array([1.0, 0.1]))


def mixes() -> dict:
    w = np.array([0.1, 0.5, 0.4])
    return {name: (v, w @ np.stack([LOVE, APPLE, v])) for name, v in [("phones", PHONES), ("juice", JUICE)]}


def test_transformer_diagram_is_legible_and_names_every_part() -> None:
    fig = roadmap.transformer_diagram()
    assert not small_texts(fig)
    words = " ".join(t.get_text() for t in fig.findobj(matplotlib.text.Text))
    for part in ("tokens", "embedding", "self-attention", "feed-forward", "repeated N times", "residual",
                 "next-token"):
        assert part in words, part
    plt.close(fig)


def test_mix_panels_are_legible_and_keep_one_colour_per_word() -> None:
    fig = roadmap.mix_panels({"love": LOVE, "apple": APPLE}, mixes())
    assert not small_texts(fig)
    for ax, neighbour in zip(fig.axes, ["phones", "juice"], strict=True):
        labels = {t.get_text().strip(): t.get_color() for t in ax.texts}
        assert labels[neighbour] == roadmap.COLOURS[neighbour]
        assert labels["apple'"] == roadmap.COLOURS["apple'"]
    plt.close(fig)


def test_mix_panels_and_arrows_name_bad_input() -> None:
    with pytest.raises(ValueError, match="sentences is empty"):
        roadmap.mix_panels({"love": LOVE}, {})
    with pytest.raises(ValueError, match=r"vector 'apple' has shape \(3,\); expected \(2,\)"):
        roadmap.mix_panels({"apple": np.zeros(3)}, mixes())
    fig, ax = plt.subplots()
    arrows = roadmap.draw_arrows(ax, {"apple": APPLE})
    with pytest.raises(KeyError, match="name is 'pear'"):
        arrows.move("pear", APPLE)
    plt.close("all")


def test_mix_weights_sum_to_one_and_split_the_rest_one_to_five() -> None:
    for w in np.linspace(0, 1, 11):
        weights = roadmap_widgets.mix_weights(w)
        assert weights.sum() == pytest.approx(1.0) and (weights >= 0).all()
        assert weights[1] == pytest.approx(5 * weights[0]) and weights[2] == pytest.approx(w)
    np.testing.assert_allclose(roadmap_widgets.mix_weights(0.4), [0.1, 0.5, 0.4])
    with pytest.raises(ValueError, match="neighbour_weight is 1.5; expected a number from 0 to 1"):
        roadmap_widgets.mix_weights(1.5)


def test_mix_explorer_builds_one_figure_and_redraws_it(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    calls, figures = [], []

    def interact(redraw, **controls):
        calls.append(redraw)
        redraw(controls["neighbour_weight"].value, controls["sentence"].value)

    monkeypatch.setattr(roadmap_widgets.widgets, "interact", interact)
    monkeypatch.setattr(roadmap_widgets, "show", figures.append)
    roadmap_widgets.mix_explorer(LOVE, APPLE, {"phones": PHONES, "juice": JUICE})
    calls[0](0.5, "phones")
    calls[0](0.5, "juice")
    assert len(figures) == 3 and len({id(f) for f in figures}) == 1  # the same figure, redrawn
    assert not small_texts(figures[0])
    printed = capsys.readouterr().out.splitlines()
    assert printed == ["apple' = [0.42, 0.78]", "apple' = [0.367, 0.817]", "apple' = [0.817, 0.367]"]
    with pytest.raises(ValueError, match="neighbours is empty"):
        roadmap_widgets.mix_explorer(LOVE, APPLE, {})
    plt.close("all")


@pytest.mark.parametrize("neighbour, weight", [("juice", 0.8), ("juice", 0.9), ("phones", 0.8),
                                               ("phones", 0.9), ("juice", 0.0), ("juice", 0.4),
                                               ("phones", 0.4)])
def test_labels_of_nearby_tips_do_not_overlap(neighbour: str, weight: float) -> None:
    """The widget's default (juice, 0.8) put apple' just over juice: the two labels ran into one word."""
    vector = {"juice": JUICE, "phones": PHONES}[neighbour]
    mixed = roadmap_widgets.mix_weights(weight) @ np.stack([LOVE, APPLE, vector])
    fig, ax = plt.subplots(figsize=(6, 5))
    arrows = roadmap.draw_arrows(ax, {"love": LOVE, "apple": APPLE, neighbour: vector, "apple'": APPLE})
    arrows.move("apple'", mixed)  # as the widget does: moved after it was drawn
    renderer = fig.canvas.get_renderer()
    boxes = {name: label.get_window_extent(renderer) for name, label in arrows.labels.items()}
    names = sorted(boxes)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            assert not boxes[a].overlaps(boxes[b]), f"labels {a!r} and {b!r} overlap at {neighbour} {weight}"
    plt.close(fig)
