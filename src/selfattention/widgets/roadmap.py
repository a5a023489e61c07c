"""Widgets of lesson 00 (roadmap): the contextual "apple'" as a weighted mix, with a slider for the
neighbour's weight.

The figure is built once; each move changes the arrows' tips and the bars' heights, and
:func:`selfattention.widgets.show` draws it once as a PNG.
"""

from __future__ import annotations

from collections.abc import Mapping

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
from numpy.typing import ArrayLike

from ..plots.roadmap import COLOURS, FONT, WIDTH, draw_arrows
from . import set_heights, show

__all__ = ["mix_weights", "mix_explorer"]


def mix_weights(neighbour_weight: float) -> np.ndarray:
    """The weights (love, apple, neighbour), shape (3,): ``neighbour_weight`` for the neighbour, the rest
    split 1:5 between "love" and "apple" (0.1 : 0.5, as in the lesson). They are non-negative and sum to 1."""
    if not 0.0 <= float(neighbour_weight) <= 1.0:
        raise ValueError(f"neighbour_weight is {neighbour_weight!r}; expected a number from 0 to 1")
    rest = 1.0 - float(neighbour_weight)
    return np.array([rest / 6, 5 * rest / 6, float(neighbour_weight)])


def mix_explorer(love: ArrayLike, apple: ArrayLike, neighbours: Mapping[str, ArrayLike], *,
                 neighbour_weight: float = 0.4) -> None:
    """Show a slider ("neighbour": the neighbour's weight, 0 to 0.9) and a menu ("sentence": which neighbour)
    over a figure: the vectors of love, apple, the neighbour and their mix apple' = w @ [love, apple,
    neighbour], and a bar chart of the three weights. Prints apple' rounded to 3 decimals.

    Inputs:
        love, apple: shape (2,); neighbours: ``{name: vector (2,)}``, e.g. phones and juice.
    """
    if not neighbours:
        raise ValueError("neighbours is empty; expected {name: vector of shape (2,)}")
    love, apple = np.asarray(love, dtype=float), np.asarray(apple, dtype=float)
    vectors = {name: np.asarray(v, dtype=float) for name, v in neighbours.items()}
    first = next(iter(vectors))
    fig, (plane, bars_ax) = plt.subplots(1, 2, figsize=(WIDTH, 5.0), width_ratios=[1, 1.1])
    plt.close(fig)  # shown by show() only
    colours = {**COLOURS, "neighbour": COLOURS.get(first, "tab:blue")}
    arrows = draw_arrows(plane, {"love": love, "apple": apple, "neighbour": vectors[first],
                                 "apple'": apple})
    arrows.labels["neighbour"].set_text(f" {first}")
    arrows.recolour("neighbour", colours["neighbour"])
    bars = bars_ax.bar([0, 1, 2], np.zeros(3),
                       color=[COLOURS["love"], COLOURS["apple"], colours["neighbour"]])
    bars_ax.set_ylim(0, 1.08)
    bars_ax.set_ylabel("weight", fontsize=FONT)
    bars_ax.tick_params(labelsize=FONT)
    values = [bars_ax.text(i, 0, "", ha="center", va="bottom", fontsize=FONT) for i in range(3)]
    plane.set_title(f"love apple {first}", fontsize=FONT)
    bars_ax.set_title("the weights of apple' (they sum to 1)", fontsize=FONT)
    bars_ax.set_xticks([0, 1, 2], ["love", "apple", first])
    fig.tight_layout()

    def redraw(neighbour_weight: float = neighbour_weight, sentence: str = first) -> None:
        w = mix_weights(neighbour_weight)
        other = vectors[sentence]
        mixed = w @ np.stack([love, apple, other])
        colour = COLOURS.get(sentence, "tab:blue")
        arrows.move("neighbour", other, label=sentence)
        arrows.recolour("neighbour", colour)
        arrows.move("apple'", mixed)
        set_heights(bars, w)
        bars[2].set_color(colour)
        bars_ax.set_xticks([0, 1, 2], ["love", "apple", sentence])
        for text, height in zip(values, w, strict=True):
            text.set_y(height)
            text.set_text(f"{height:.2f}")
        plane.set_title(f"love apple {sentence}", fontsize=FONT)
        show(fig)
        print(f"apple' = {mixed.round(3).tolist()}")

    widgets.interact(
        redraw,
        neighbour_weight=widgets.FloatSlider(value=neighbour_weight, min=0.0, max=0.9, step=0.1,
                                             description="neighbour"),
        sentence=widgets.Dropdown(options=list(vectors), value=first, description="sentence"),
    )
