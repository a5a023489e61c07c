"""Widgets of lessons 02 and 03 (basic self-attention on the real static embedding table).

Each builder returns a widget: a sentence box, a focus-word menu (its options follow the sentence; the focus
stays on the same word while the sentence still has it) and an output area. The figure is built once; a change
redraws its data and shows it once (:func:`show`).

- :func:`one_word` (lesson 02): the focus word's scores and weights as bars, its contextual vector as a sum;
- :func:`sentence_map` (lesson 03): the whole weight matrix of the sentence, the focus row framed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import ipywidgets as ipw
import matplotlib.pyplot as plt
import numpy as np
from numpy.typing import NDArray

from ..core import basic_self_attention, softmax
from ..plots import basic_attention as figures
from . import show

__all__ = ["one_word", "sentence_map", "words_of"]


class Table(Protocol):
    """What the widgets need of an embedding table (``selfattention.data.StaticEmbeddings``)."""

    def __contains__(self, word: str) -> bool: ...

    def vector(self, word: str) -> NDArray[np.float32]: ...


def words_of(sentence: str, table: Table, max_words: int) -> tuple[list[str], str | None]:
    """The lower-case words of ``sentence`` and None, or the words and what is wrong with them (too few, too
    many, not in ``table``)."""
    words = re.findall(r"[a-z]+", str(sentence).lower())
    missing = [w for w in words if w not in table]
    if missing:
        return words, f"Not single words of the table's vocabulary: {', '.join(missing)}."
    if not 2 <= len(words) <= max_words:
        return words, f"Type 2 to {max_words} words (this has {len(words)})."
    return words, None


def _controls(sentences: Sequence[str], value: str, focus: int, max_words: int,
              table: Table, draw: Callable[[list[str], int], None],
              extra: Sequence[ipw.ValueWidget] = ()) -> ipw.VBox:
    """The sentence box, the focus menu (and any ``extra`` controls) and the output, wired to
    ``draw(words, focus)``."""
    if not sentences:
        raise ValueError("sentences is empty; expected at least one example sentence")
    box = ipw.Combobox(value=value, options=list(sentences), description="sentence", ensure_option=False,
                       continuous_update=False, layout=ipw.Layout(width="32em"))
    menu = ipw.Dropdown(description="focus word")
    out = ipw.Output()
    state = {"busy": False}

    def label_options(words: list[str]) -> list[tuple[str, int]]:
        return [(f"{k + 1} {w}", k) for k, w in enumerate(words)]

    def redraw(*_: Any) -> None:
        if state["busy"]:
            return
        words, problem = words_of(box.value, table, max_words)
        out.clear_output(wait=True)
        with out:
            if problem:
                print(problem)
            else:
                draw(words, min(int(menu.value or 0), len(words) - 1))

    def new_sentence(change: Any) -> None:
        words, problem = words_of(box.value, table, max_words)
        if not problem:
            keep = _same_word(words_of(change["old"], table, max_words)[0], int(menu.value or 0), words)
            state["busy"] = True
            menu.options = label_options(words)
            menu.value = keep
            state["busy"] = False
        redraw()

    words, problem = words_of(value, table, max_words)
    if problem:
        raise ValueError(f"value {value!r}: {problem}")
    menu.options = label_options(words)
    menu.value = min(focus, len(words) - 1)
    box.observe(new_sentence, "value")
    menu.observe(redraw, "value")
    for control in extra:
        control.observe(redraw, "value")
    redraw()
    return ipw.VBox([ipw.HBox([box, menu, *extra]), out])


def _same_word(old: list[str], k: int, words: list[str]) -> int:
    """The focus index in ``words`` after the sentence changed from ``old`` with focus ``k``: the same word
    (its same occurrence when it repeats, else its last) when the new sentence still has it, else ``k``
    (within the new length)."""
    if k < len(old) and old[k] in words:
        where = [j for j, w in enumerate(words) if w == old[k]]
        return where[min(old[:k].count(old[k]), len(where) - 1)]
    return min(k, len(words) - 1)


def _matrix(table: Table, words: list[str]) -> NDArray[np.float64]:
    return np.stack([table.vector(w) for w in words]).astype(np.float64)


def one_word(table: Table, sentences: Sequence[str], *, value: str | None = None, focus: int = 1,
             max_words: int = 8, slider: bool = True) -> ipw.VBox:
    """Lesson 02's explorer: for the focus word i of a sentence, bars of its scores omega_ij = x_i . x_j
    times the slider's beta and of its weights alpha_ij = softmax_j(beta omega_ij), both printed to three
    decimals, its contextual vector written as the weighted sum of the words, and (with the slider) that
    vector's cosine with the plain average (what beta = 0 gives) and with the word of the largest score (what
    a large beta gives).
    beta = 1 is basic self-attention.

    Inputs:
        table: the static embedding table; sentences: example sentences for the box's list;
        value: the sentence shown first (default the first example); focus: its focus word (0-based);
        slider: whether to show the beta slider (without it beta stays 1 and the panels name no beta).
    """
    first = value if value is not None else sentences[0]
    fig, score_bars, weight_bars = figures.score_weight_bars(["."] * 2, np.zeros(2), np.zeros(2),
                                                             max_words=max_words)
    plt.close(fig)
    scale = ipw.FloatSlider(value=1.0, min=0.0, max=4.0, step=0.25, description="scores x β",
                            continuous_update=False)

    def draw(words: list[str], i: int) -> None:
        beta = float(scale.value)
        X = _matrix(table, words)                        # (T, d)
        scores = beta * (X @ X[i])                       # (T,): the scores softmax reads
        alpha = softmax(scores)                          # (T,)
        z = alpha @ X                                    # (d,)
        at_max = (scale.max if slider else 1.0) * (X @ X[i])   # the panel's fixed span: beta at its largest
        figures.update_score_weight_bars(fig, score_bars, weight_bars, words, scores, alpha,
                                         score_range=(float(at_max.min()), float(at_max.max())))
        fig.axes[0].set_title(rf"scores $\times$ $\beta$ = {beta:g}" if slider else r"scores $\omega_{ij}$",
                              fontsize=figures.FONT)
        weights = r"\mathrm{softmax}_j(\beta\,\omega_{ij})" if slider else r"\mathrm{softmax}_j(\omega_{ij})"
        fig.axes[1].set_title(rf"weights  $\alpha_{{ij}} = {weights}$", fontsize=figures.FONT)
        fig.axes[1].set_ylim(0, 1.12)                    # headroom: a weight near 1 keeps its label clear
        fig.suptitle(f"focus word {i + 1}: {words[i]}", fontsize=figures.FONT)
        show(fig)
        print("scores x beta:" if slider else "scores:       ",
              "  ".join(f"{w} {s:.3f}" for w, s in zip(words, scores, strict=True)))
        print("weights:      ", "  ".join(f"{w} {a:.3f}" for w, a in zip(words, alpha, strict=True)))
        print(f"{words[i]}' =", " + ".join(f"{a:.2f}*{w}" for a, w in zip(alpha, words, strict=True)))
        if slider:   # where beta moves z_i: from the plain average (beta = 0) to the top score's word
            top = int(np.argmax(X @ X[i]))
            mean = X.mean(axis=0)
            cos = [float(z @ v / (np.linalg.norm(z) * np.linalg.norm(v))) for v in (mean, X[top])]
            print(f"cosine of {words[i]}' with the plain average {cos[0]:.3f}, with {words[top]} (top score) "
                  f"{cos[1]:.3f}")

    return _controls(sentences, first, focus, max_words, table, draw, extra=[scale] if slider else [])


def sentence_map(table: Table, sentences: Sequence[str], *, value: str | None = None, focus: int = 1,
                 max_words: int = 8) -> ipw.VBox:
    """Lesson 03's explorer: the weight matrix A of a sentence (one colour scale, 0 to 1), the focus word's
    row framed in red, and that word's contextual vector written as the weighted sum of the words.

    One figure per sentence length is laid out once and then redrawn in place.
    """
    first = value if value is not None else sentences[0]
    layouts: dict[int, tuple[Any, Any, Any]] = {}

    def draw(words: list[str], i: int) -> None:
        T = len(words)
        _, A = basic_self_attention(_matrix(table, words))
        if T not in layouts:
            width, height = 1.8 + 0.7 * T, 1.7 + 0.45 * T      # inches: 7.4 x 5.3 for 8 words
            fig, ax = plt.subplots(figsize=(width, height))
            plt.close(fig)
            figures.weight_map(np.zeros((T, T)), words, ax=ax, labels=("attending (i)", "attended to (j)"))
            ax.set_aspect("auto")
            fig.subplots_adjust(left=1.55 / width, right=1 - 0.15 / width, bottom=1.3 / height,
                                top=1 - 0.15 / height)
            frame = ax.add_patch(plt.Rectangle((-0.5, -0.5), T, 1, fill=False, ec="tab:red", lw=3))
            layouts[T] = fig, ax, frame
        fig, ax, frame = layouts[T]
        ax.images[0].set_data(A)
        for text, a in zip(ax.texts, A.ravel(), strict=True):
            text.set_text(f"{a:.2f}")
            text.set_color("white" if a > 0.6 else "black")
        ax.set_yticks(range(T), words, fontsize=figures.FONT)
        ax.set_xticks(range(T), words, rotation=40, ha="right", fontsize=figures.FONT)
        frame.set_y(i - 0.5)
        show(fig)
        print(f"z_{words[i]} =", " + ".join(f"{a:.2f}*{w}" for a, w in zip(A[i], words, strict=True)))

    return _controls(sentences, first, focus, max_words, table, draw)
