"""Widget views of lessons 07 and 08 (multi-head attention). Each builder lays its figure out once and
returns a callback for ``ipywidgets.interact`` that only changes the figure's data, then shows it with
:func:`selfattention.widgets.show`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Patch
from numpy.typing import ArrayLike

from ..core import scaled_dot_product_attention
from ..plots.heads import FONT, head_maps, query_bars
from . import set_heights, show

__all__ = ["sentence_heads", "sentence_heads_explorer", "query_explorer", "lookup_explorer", "focus_table",
           "MORE_WORDS"]


#: Lesson 07's extra words for its widget, hand-built in the same 4 features as "I love apple phones"
#: (features: people, verbs, fruit, tech).
MORE_WORDS: dict[str, list[float]] = {
    "juice": [0.0, 0.1, 1.2, 0.1], "she": [1.0, 0.4, 0.1, 0.2], "buys": [0.7, 0.8, 0.2, 0.3],
    "laptops": [0.1, 0.0, 0.2, 1.3], "we": [0.9, 0.5, 0.2, 0.0], "eat": [0.6, 0.9, 0.6, 0.0],
    "pie": [0.1, 0.2, 1.1, 0.1]}


def sentence_heads(
    vocab: Mapping[str, ArrayLike],
    heads: Mapping[str, tuple[ArrayLike, ArrayLike, ArrayLike]],
    sentences: Sequence[str],
    focus: str = "apple",
) -> Callable[[str], None]:
    """A view of every head's attention weights on a sentence chosen from ``sentences``.

    Inputs:
        vocab: word -> its (d_model,) vector; every word of every sentence must be in it.
        heads: head name -> (W_Q, W_K, W_V), each (d_model, d_k); each head computes
            softmax(X W_Q (X W_K)^T / sqrt(d_k)) X W_V.
        sentences: the choices, every one with the same number of words T and the word ``focus``.
    Returns:
        ``show(sentence, scale=1.0)``: redraws the heads' (T, T) maps on one colour scale (0 to 1), every
        head's W_Q multiplied by ``scale`` (so its scores too), and prints, for each head, the word that
        ``focus`` gives most weight.
    """
    if not sentences:
        raise ValueError("sentences is empty; expected at least one sentence")
    lengths = {len(s.split()) for s in sentences}
    if len(lengths) != 1:
        raise ValueError(f"sentences must all have one length, got lengths {sorted(lengths)}")
    for s in sentences:
        missing = [w for w in s.split() if w not in vocab]
        if missing or focus not in s.split():
            raise ValueError(f"sentence {s!r}: words {missing} are not in vocab" if missing
                             else f"sentence {s!r} does not contain focus={focus!r}")
    T = lengths.pop()
    names = list(heads)
    fig, panels = head_maps([np.zeros((T, T))] * len(names), names, ["?"] * T, ["?"] * T,
                            height=1.8 + 0.75 * T)
    plt.close(fig)  # shown by show(), not by the inline backend
    numbers = [[ax.texts[r * T + c] for r in range(T) for c in range(T)] for ax in panels]

    def view(sentence: str = sentences[0], scale: float = 1.0) -> None:
        words = sentence.split()
        X = np.stack([np.asarray(vocab[w], dtype=float) for w in words])  # (T, d_model)
        line = []
        for name, ax, texts in zip(names, panels, numbers, strict=True):
            W_Q, W_K, W_V = (np.asarray(m, dtype=float) for m in heads[name])
            _, A = scaled_dot_product_attention(X @ (scale * W_Q), X @ W_K, X @ W_V)  # (T, T)
            ax.images[0].set_data(A)
            for text, value in zip(texts, A.ravel(), strict=True):
                text.set_text(f"{value:.2f}")
                text.set_color("white" if value > 0.6 else "black")
            ax.set_xticks(range(T), words, fontsize=FONT)
            if ax is panels[0]:
                ax.set_yticks(range(T), words, fontsize=FONT)
            line.append(f"{name}: {_most(A[words.index(focus)], words, focus)}")
        fig.suptitle(sentence if scale == 1 else f"{sentence}   (every W_Q x {scale:g})", fontsize=FONT)
        show(fig)
        print(" | ".join(line))

    return view


def sentence_heads_explorer(
    vocab: Mapping[str, ArrayLike],
    heads: Mapping[str, tuple[ArrayLike, ArrayLike, ArrayLike]],
    sentences: Sequence[str],
    focus: str = "apple",
) -> None:
    """:func:`sentence_heads` with its controls: a menu of ``sentences`` and a slider (0 to 4) that
    multiplies every head's W_Q. Inputs as for :func:`sentence_heads`."""
    import ipywidgets as widgets

    view = sentence_heads(vocab, heads, sentences, focus)
    widgets.interact(view, sentence=widgets.Dropdown(options=list(sentences), description="sentence"),
                     scale=widgets.FloatSlider(value=1.0, min=0.0, max=4.0, step=0.5, description="W_Q x"))


def lookup_explorer(X, y, where, models: Mapping[str, tuple], first: int = 50,
                    answer_names: Sequence[str] | None = None) -> Callable[[str, int], None]:
    """:func:`query_explorer` for trained lookup models, on the first ``first`` held-out sequences.

    Inputs:
        X: (n, T, D_IN) held-out lookup sequences, the query token last; y: (n, answers) their digits.
        where: (n, R) role positions from :func:`selfattention.plots.heads.role_positions`; its first
            ``answers`` columns are the items that hold the answers.
        models: name -> (model, weights), the model returning (logits (n, answers, 8), weights) and its
            held-out weights (n, heads, T, T).
    Returns:
        ``show(model, sequence)`` as :func:`query_explorer` gives it.
    """
    import torch

    from .. import tasks

    if isinstance(first, bool) or not isinstance(first, int) or not 1 <= first <= len(X):
        raise ValueError(f"first must be an integer from 1 to len(X) = {len(X)}, got {first!r}")
    answers = y.view(len(y), -1)[:first]
    with torch.no_grad():
        said = {name: m(X[:first])[0].argmax(-1).view(first, -1) for name, (m, _) in models.items()}
    return query_explorer([tasks.token_labels(seq) for seq in X[:first]],
                          {name: w[:first, :, -1, :] for name, (_, w) in models.items()},
                          answers, said, where[:first, :answers.shape[1]], answer_names)


def _most(row: np.ndarray, words: Sequence[str], focus: str) -> str:
    """'focus -> word (0.55)' for the largest weight of ``row``, or a tie when several round to it."""
    top = [w for w, a in zip(words, row, strict=True) if a > row.max() - 0.005]
    if len(top) > 1:
        return f"{focus} -> a tie of {', '.join(top)} ({row.max():.2f} each)"
    return f"{focus} -> {top[0]} ({row.max():.2f})"


def focus_table(
    vocab: Mapping[str, ArrayLike],
    heads: Mapping[str, tuple[ArrayLike, ArrayLike, ArrayLike]],
    sentences: Sequence[str],
    focus: str = "apple",
) -> None:
    """Print, for each sentence, the word ``focus`` weighs most in each head and each head's output z_focus.

    Inputs as :func:`sentence_heads` (vocab: word -> (d_model,); heads: name -> (W_Q, W_K, W_V), each
    (d_model, d_k)); the weights are softmax(X W_Q (X W_K)^T / sqrt(d_k)), the outputs their sum of X W_V.
    """
    for sentence in sentences:
        words = sentence.split()
        if focus not in words or any(w not in vocab for w in words):
            raise ValueError(f"sentence {sentence!r}: needs focus={focus!r} and every word in vocab")
        X = np.stack([np.asarray(vocab[w], dtype=float) for w in words])  # (T, d_model)
        i, cells = words.index(focus), []
        for name, mats in heads.items():
            W_Q, W_K, W_V = (np.asarray(m, dtype=float) for m in mats)
            Z, A = scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V)
            cells.append(f"{name}: {_most(A[i], words, focus)}, z = {np.round(Z[i], 2).tolist()}")
        print(f"{sentence:23}", " | ".join(cells))


def query_explorer(
    token_labels: Sequence[Sequence[str]],
    weights: Mapping[str, ArrayLike],
    answers: ArrayLike,
    predictions: Mapping[str, ArrayLike],
    targets: ArrayLike,
    answer_names: Sequence[str] | None = None,
) -> Callable[[str, int], None]:
    """A view of the query token's weights in each head of a trained model, one held-out sequence at a time.

    Inputs:
        token_labels: n sequences of T labels ("D:3" an item, "?C" the query).
        weights: model name -> (n, heads, T) array, the query token's weights in each head.
        answers: (n, answers) the right digits; predictions: model name -> (n, answers) its digits.
        targets: (n, answers) the position of the item that holds each answer.
    Returns:
        ``show(model, sequence)``: redraws one bar chart per head (the bar of the item holding answer k in
        its own colour, named in a legend by ``answer_names``; panels beyond the model's heads hidden) and
        prints the answers and the model's.
    """
    arrays = {name: np.asarray(w.detach().cpu().numpy() if hasattr(w, "detach") else w, dtype=float)
              for name, w in weights.items()}
    n = len(token_labels)
    T = len(token_labels[0]) if n else 0
    for name, w in arrays.items():
        if w.ndim != 3 or w.shape[0] != n or w.shape[2] != T:
            raise ValueError(f"weights[{name!r}] has shape {w.shape}; expected (n, heads, T) = "
                             f"(n={n}, heads, T={T}), one row of weights per head for each labelled sequence")
        if name not in predictions:
            raise ValueError(f"predictions has no entry for model {name!r}")
    answers, targets = np.asarray(answers), np.asarray(targets)
    if answers.shape[0] != n or targets.shape != answers.shape:
        raise ValueError(f"answers {answers.shape} and targets {targets.shape} must both be (n={n}, answers)")
    most = max(w.shape[1] for w in arrays.values())
    fig, panels, bars = query_bars(most, T)
    plt.close(fig)

    colours = ["tab:orange", "tab:green", "tab:red", "tab:purple"]      # answer 1, answer 2, ...
    names = answer_names or [f"answer {k + 1}" for k in range(answers.shape[1])]
    fig.legend(handles=[Patch(color=colours[k % 4], label=f"holds {name}") for k, name in enumerate(names)]
               + [Patch(color="tab:blue", label="other tokens")], loc="lower center",
               ncol=len(names) + 1, fontsize=FONT, frameon=False, bbox_to_anchor=(0.5, -0.12))

    def view(model: str = next(iter(arrays)), sequence: int = 0) -> None:
        w = arrays[model][sequence]  # (heads, T)
        labels = list(token_labels[sequence])
        for h, (ax, group) in enumerate(zip(panels, bars, strict=True)):
            has_head = h < w.shape[0]
            ax.set_visible(has_head)                     # a model with fewer heads: its missing panels hidden
            set_heights(group, w[h] if has_head else np.zeros(T))
            role = {int(t): k for k, t in enumerate(targets[sequence])}
            for t, bar in enumerate(group):
                bar.set_color(colours[role[t] % 4] if t in role else "tab:blue")
            ax.set_xticks(range(T), labels, fontsize=FONT)
            ax.set_title(f"head {h + 1}" if w.shape[0] > 1 else "the one head", fontsize=FONT)
        fig.suptitle(f"{model}, held-out sequence {sequence}: the query's weights", fontsize=FONT)
        show(fig)
        said = np.asarray(predictions[model])[sequence].tolist()
        print(f"{labels[-1]} asks for {answers[sequence].tolist()}; the model answers {said}")

    return view
