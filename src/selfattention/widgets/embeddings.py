"""Widgets of lesson 01 (static embeddings): a pair of words read against chance, and a word explorer in the
fruit/tech plane.

Each builds its figure once and redraws only what moves: the pair explorer moves one line over the histogram
of random-pair cosines; the word explorer moves a star and a few gray points and redraws them over a saved
picture of the rest (blitting), because the fixed labels are most of its drawing.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Image, display
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from numpy.typing import ArrayLike, NDArray
from PIL import Image as PILImage

from ..data import StaticEmbeddings
from ..plots.embeddings import FONT, WIDTH, draw_chance, draw_plane
from . import show

__all__ = ["SUGGESTIONS", "share_below", "pair_explorer", "word_explorer"]

#: Words offered by the widgets' boxes (any single token of the vocabulary can be typed).
SUGGESTIONS = ("apple", "bank", "light", "juice", "phones", "river", "money", "orange", "blackberry",
               "windows", "java", "python", "mouse", "amazon", "banana", "iphone")


def share_below(chance: ArrayLike, cosine: float) -> float:
    """The percentage of the random-pair cosines ``chance`` (shape (n,)) that are smaller than ``cosine``."""
    chance = np.asarray(chance, dtype=float)
    if chance.ndim != 1 or chance.size == 0:
        raise ValueError(f"chance has shape {chance.shape}; expected (n,) with n >= 1")
    return float(100.0 * np.mean(chance < cosine))


def _unknown(word: str) -> str:
    return (f"{word!r} is not a single token of the vocabulary: try another word (rare and long words are "
            "split into pieces).")


def pair_explorer(table: StaticEmbeddings, chance: ArrayLike, first: str = "apple",
                  second: str = "juice") -> None:
    """Two boxes ("word", "other word") over the histogram of the random-pair cosines ``chance`` (shape (n,));
    a red line marks the cosine of the two words' rows of ``table``, and a line of text reads it against
    chance ("higher than 97.6% of random pairs")."""
    chance = np.asarray(chance, dtype=float)
    fig, ax = plt.subplots(figsize=(WIDTH, 4.6))
    plt.close(fig)  # shown by show() only
    draw_chance(ax, chance)
    ax.set_xlabel("cosine similarity", fontsize=FONT)
    ax.set_xlim(min(chance.min(), -0.2), max(0.8, chance.max()))
    line = ax.axvline(0.0, color="tab:red", lw=4)
    label = ax.text(0.0, 0.55, "", transform=ax.get_xaxis_transform(), color="tab:red", fontsize=FONT,
                    fontweight="bold", ha="left")
    fig.tight_layout()

    def redraw(word: str = first, other: str = second) -> None:
        word, other = word.strip().lower(), other.strip().lower()
        for w in (word, other):
            if w not in table:
                print(_unknown(w))
                return
        u, v = table.vector(word), table.vector(other)
        cosine = float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))
        line.set_xdata([cosine, cosine])
        label.set_x(cosine)
        label.set_text(f" {word} ~ {other}")
        show(fig)
        print(f"{word} ~ {other}: cosine {cosine:.3f}, higher than {share_below(chance, cosine):.1f}% of "
              "random pairs")

    boxes = {name: widgets.Combobox(value=value, options=list(SUGGESTIONS), ensure_option=False,
                                    continuous_update=False, description=description)
             for name, value, description in (("word", first, "word"), ("other", second, "other word"))}
    widgets.interact(redraw, **boxes)


def word_explorer(table: StaticEmbeddings, centre: ArrayLike, directions: ArrayLike,
                  clusters: Mapping[str, Sequence[str]], colours: Mapping[str, str],
                  word: str = "apple") -> None:
    """A box ("word") and a slider ("neighbours", 3 to 15) over the fruit/tech plane: the word (red star) and
    its nearest whole-word neighbours (gray), with its cosines to each cluster's mean printed.

    Inputs:
        table: the embedding table (V, d); centre: (d,) and directions: (d, 2), the plane's projection
        ``(x - centre) @ directions``; clusters: ``{name: words}``, drawn in ``colours[name]``.
    """
    centre = np.asarray(centre, dtype=np.float64)
    directions = np.asarray(directions, dtype=np.float64)
    d = table.vectors.shape[1]
    if centre.shape != (d,) or directions.shape != (d, 2):
        raise ValueError(f"centre has shape {centre.shape} and directions {directions.shape}; expected "
                         f"({d},) and ({d}, 2)")
    whole = np.array([t.isalpha() for t in table.vocab])
    names = np.array(table.vocab)[whole]                                      # (W,)
    rows = table.vectors[whole].astype(np.float64)                            # (W, d)
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)                 # normalised once
    plane = (rows - centre) @ directions                                      # (W, 2): every whole word
    means = {name: np.stack([table.vector(w) for w in words]).mean(axis=0)
             for name, words in clusters.items()}

    def project(w: str) -> NDArray[np.float64]:
        return (table.vector(w).astype(np.float64) - centre) @ directions

    fig = Figure(figsize=(WIDTH, 4.6))                 # outside pyplot: shown by this widget only
    canvas = FigureCanvasAgg(fig)                      # an Agg canvas can save and restore regions
    ax = fig.add_subplot()
    draw_plane(ax, {name: {w: project(w) for w in words} for name, words in clusters.items()}, colours)
    margin = 0.05 * (plane.max(axis=0) - plane.min(axis=0))
    ax.set_xlim(plane[:, 0].min() - margin[0], plane[:, 0].max() + margin[0])  # every word fits
    ax.set_ylim(plane[:, 1].min() - margin[1], plane[:, 1].max() + margin[1])
    near_dots = ax.scatter(np.zeros(0), np.zeros(0), color="gray", s=30)
    near_names = [ax.annotate("", (0, 0), xytext=(4, -14), textcoords="offset points", color="dimgray",
                              fontsize=FONT) for _ in range(15)]
    (star,) = ax.plot([], [], "*", color="tab:red", ms=22, zorder=3)
    star_name = ax.annotate("", (0, 0), xytext=(8, 8), textcoords="offset points", color="tab:red",
                            fontsize=FONT + 3, fontweight="bold")
    moving = [near_dots, *near_names, star, star_name, ax.title]
    for artist in moving:
        artist.set_animated(True)                      # left out of the background drawn once
    fig.tight_layout()
    canvas.draw()
    background = canvas.copy_from_bbox(fig.bbox)

    def redraw(word: str = word, k: int = 8) -> None:
        word = word.strip().lower()
        if word not in table:
            print(_unknown(word))
            return
        x = table.vector(word).astype(np.float64)
        sims = unit @ (x / np.linalg.norm(x))                                  # (W,) cosine with every word
        best = np.argpartition(-sims, k)[:k + 1]                               # the k + 1 largest, unordered
        near = [i for i in best[np.argsort(-sims[best])] if names[i] != word][:k]
        cosines = ", ".join(f"to the {name} mean {float(x @ m / (np.linalg.norm(x) * np.linalg.norm(m))):.3f}"
                            for name, m in means.items())
        print(f"{word}: cosine {cosines}")
        print("neighbours:", ", ".join(f"{names[i]} {sims[i]:.2f}" for i in near))
        near_dots.set_offsets(plane[near])
        for j, text in enumerate(near_names):
            text.set_visible(j < k)
            if j < k:
                text.set_text(names[near[j]])
                text.xy = plane[near[j]]
        point = project(word)
        star.set_data([point[0]], [point[1]])
        star_name.set_text(word)
        star_name.xy = point
        ax.set_title(f'"{word}" and its {k} nearest neighbours', fontsize=FONT)
        canvas.restore_region(background)
        for artist in moving:
            fig.draw_artist(artist)
        png = io.BytesIO()                             # the PNG of the blitted buffer, not a new drawing
        PILImage.fromarray(np.asarray(canvas.buffer_rgba())).save(png, format="png", compress_level=1)
        display(Image(data=png.getvalue(), format="png"))

    widgets.interact(
        redraw,
        word=widgets.Combobox(value=word, options=list(SUGGESTIONS), ensure_option=False,
                              continuous_update=False, description="word"),
        k=widgets.IntSlider(value=8, min=3, max=15, description="neighbours"),
    )
