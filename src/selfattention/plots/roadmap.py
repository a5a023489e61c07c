"""Figures of lesson 00 (roadmap): where attention sits in a transformer, and a word's vector mixed with its
sentence.

Every figure is 12 inches wide with text of at least 15 pt, so that shown across a slide (1232 px wide) its
text is at least 20 px high; heights stay below 0.86 x 720 px at that width.
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyBboxPatch
from matplotlib.text import Annotation
from numpy.typing import ArrayLike

__all__ = ["WIDTH", "FONT", "COLOURS", "transformer_diagram", "mix_panels", "draw_arrows", "Arrows"]

WIDTH = 12.0  # inches: a figure shown across a 1280 px slide
FONT = 15  # points: 15 pt on a 12 in figure is 21 px on a 1232 px wide slide (14 pt would be 19.96)
NEAR = 0.3  # data units: two arrow tips closer than this get their labels on opposite sides
#: One colour per word, the same in every figure and widget of the lesson.
COLOURS = {"love": "tab:purple", "apple": "gray", "apple'": "tab:red", "phones": "tab:blue",
           "juice": "tab:green"}


def transformer_diagram() -> Figure:
    """The path of a sentence through a transformer: tokens -> embedding table (positions added there, or
    inside attention) -> [self-attention -> feed-forward] x N -> contextual vectors (in a decoder, an output
    layer turns them into next-token probabilities), each box labelled with the lessons that build it.

    Returns:
        the figure (12 x 4.6 inches).
    """
    fig, ax = plt.subplots(figsize=(WIDTH, 4.6))
    ax.set_xlim(0, 12)
    ax.set_ylim(0, 4.6)
    ax.axis("off")
    boxes = [  # (centre x, half width, text, face colour)
        (1.0, 0.85, "tokens\n\n\"love apple\nphones\"", "whitesmoke"),
        (3.3, 0.95, "embedding\ntable\n(positions: here\nor inside\nattention)", "aliceblue"),
        (5.9, 1.05, "self-attention\n(simplified)\n$z_i = \\sum_j \\alpha_{ij} x_j$\n(lessons 02-10)",
         "mistyrose"),
        (8.5, 0.85, "feed-forward\nnetwork\n(lesson 12)", "honeydew"),
        (10.95, 0.95, "contextual\nvectors\n(lessons 11-12);\nan output layer\nmakes next-token\n"
                      "probabilities\n(lesson 13)",
         "aliceblue"),
    ]
    centre_y, half_h = 2.6, 0.95
    for x, half_w, text, face in boxes:
        ax.add_patch(FancyBboxPatch((x - half_w, centre_y - half_h), 2 * half_w, 2 * half_h,
                                    boxstyle="round,pad=0.05", facecolor=face, edgecolor="black"))
        ax.text(x, centre_y, text, ha="center", va="center", fontsize=FONT)
    for (left, left_w, *_), (right, right_w, *_) in zip(boxes[:-1], boxes[1:], strict=True):
        ax.annotate("", xy=(right - right_w - 0.1, centre_y), xytext=(left + left_w + 0.1, centre_y),
                    arrowprops={"arrowstyle": "-|>", "lw": 2, "color": "black", "mutation_scale": 20})
    # the block that repeats N times: attention, then feed-forward
    ax.add_patch(FancyBboxPatch((4.62, 1.35), 4.96, 2.75, boxstyle="round,pad=0.05", fill=False,
                                edgecolor="tab:red", linestyle="--", lw=2))
    ax.text(7.1, 4.3, "one block, repeated N times", ha="center", va="center", fontsize=FONT,
            color="tab:red")
    ax.text(5.9, 0.95, "tokens see each other", ha="center", va="center", fontsize=FONT, color="tab:red")
    ax.text(8.5, 0.95, "each token alone", ha="center", va="center", fontsize=FONT, color="darkgreen")
    ax.text(7.1, 0.3, "around each step: a residual connection and a layer normalisation (lesson 12)",
            ha="center", va="center", fontsize=FONT, color="dimgray")
    fig.tight_layout(pad=0.2)
    return fig


class Arrows:
    """Named arrows from the origin on one Axes, each labelled at its tip; :meth:`move` changes their tips
    in place (a widget redraws them without building a new figure)."""

    def __init__(self, ax: Axes, vectors: Mapping[str, ArrayLike], colours: Mapping[str, str]) -> None:
        self.ax = ax
        self.arrows: dict[str, Annotation] = {}
        self.labels: dict[str, Annotation] = {}
        self._default_below: dict[str, bool] = {}
        for name, v in vectors.items():
            v = _vector(name, v)
            colour = colours.get(name, "black")
            below = name in ("love", "apple'")  # love and apple' can lie near apple: labels under their tips
            wide = name == "love"
            # love lies on apple's line and is shorter: a wide pale band drawn over apple's arrow shows both
            self.arrows[name] = ax.annotate("", xy=v, xytext=(0, 0), zorder=3 if wide else 2,
                                            arrowprops={"arrowstyle": "-|>", "color": colour,
                                                        "lw": 9 if wide else 3,
                                                        "alpha": 0.45 if wide else 1.0,
                                                        "mutation_scale": 30 if wide else 22})
            self.labels[name] = ax.annotate(f" {name}", v, xytext=(6, -6 if below else 4),
                                            textcoords="offset points", color=colour, fontsize=FONT,
                                            va="top" if below else "bottom", ha="left", fontweight="bold")
            self._default_below[name] = below
        self._place_labels()

    def move(self, name: str, v: ArrayLike, label: str | None = None) -> None:
        """Point arrow ``name`` at ``v`` (shape (2,)), with a new label if one is given."""
        if name not in self.arrows:
            raise KeyError(f"name is {name!r}; expected one of {sorted(self.arrows)}")
        v = _vector(name, v)
        self.arrows[name].xy = tuple(v)
        self.labels[name].xy = tuple(v)
        if label is not None:
            self.labels[name].set_text(f" {label}")
        self._place_labels()

    def _place_labels(self) -> None:
        """Each label under or over its tip; where two tips lie within :data:`NEAR` of each other, the higher
        tip's label goes over it and the lower one's under it, so that the two labels do not overlap."""
        below = dict(self._default_below)
        tips = {name: np.asarray(label.xy, dtype=float) for name, label in self.labels.items()}
        names = list(tips)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                if np.linalg.norm(tips[a] - tips[b]) < NEAR:
                    low, high = (a, b) if tips[a][1] < tips[b][1] else (b, a)
                    below[low], below[high] = True, False
        for name, label in self.labels.items():
            label.set_position((6, -6 if below[name] else 4))
            label.set_verticalalignment("top" if below[name] else "bottom")

    def recolour(self, name: str, colour: str) -> None:
        """Give arrow ``name`` and its label the colour ``colour``."""
        self.arrows[name].arrow_patch.set_color(colour)
        self.labels[name].set_color(colour)


def _vector(name: str, v: ArrayLike) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    if v.shape != (2,):
        raise ValueError(f"vector {name!r} has shape {v.shape}; expected (2,)")
    return v


def _plane(ax: Axes, title: str | None = None) -> None:
    """The food/technology plane of lesson 00's toy vectors, from 0 to 1.15 on both axes."""
    ax.set_xlim(-0.05, 1.2)
    ax.set_ylim(-0.05, 1.2)
    ax.set_aspect("equal")
    ax.grid(alpha=0.3)
    ax.set_xlabel("food", fontsize=FONT)
    ax.set_ylabel("technology", fontsize=FONT)
    ax.tick_params(labelsize=FONT)
    if title:
        ax.set_title(title, fontsize=FONT)


def draw_arrows(ax: Axes, vectors: Mapping[str, ArrayLike], title: str | None = None) -> Arrows:
    """Draw named 2-D vectors (shape (2,) each) as arrows in the food/technology plane, in :data:`COLOURS`."""
    _plane(ax, title)
    return Arrows(ax, vectors, COLOURS)


def mix_panels(static: Mapping[str, ArrayLike],
               sentences: Mapping[str, tuple[ArrayLike, ArrayLike]]) -> Figure:
    """One panel per sentence: the static vectors and the mixed "apple'".

    Inputs:
        static: the vectors every panel shows, e.g. ``{"love": (2,), "apple": (2,)}``.
        sentences: ``{neighbour name: (its vector (2,), the mixed apple' (2,))}``, one panel each.
    Returns:
        the figure (12 x 6.0 inches), with a legend: gray = static, red = contextual.
    """
    if not sentences:
        raise ValueError("sentences is empty; expected at least one {neighbour: (vector, mix)}")
    fig, axes = plt.subplots(1, len(sentences), figsize=(WIDTH, 6.0), squeeze=False)
    for ax, (neighbour, (vector, mixed)) in zip(axes[0], sentences.items(), strict=True):
        draw_arrows(ax, {**static, neighbour: vector, "apple'": mixed},
                    title=f"love apple {neighbour}")
    handles = [Line2D([], [], color=COLOURS["apple"], lw=3, label="apple: static, the same in both"),
               Line2D([], [], color=COLOURS["apple'"], lw=3, label="apple': contextual, the mix")]
    fig.legend(handles=handles, loc="lower center", ncol=2, fontsize=FONT, frameon=False)
    fig.tight_layout(rect=(0, 0.11, 1, 1))
    return fig
