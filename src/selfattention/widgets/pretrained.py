"""Widgets of lessons 11 and 12 (the pretrained model): each token's lean in a sentence the learner types,
and one head's weights next to what it adds, for any layer and head.

Each builds its figure once (one per sentence for the heads) and its callback only changes the data, then
draws it with :func:`selfattention.widgets.show`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np

from . import set_heights, show

__all__ = ["lean_explorer", "head_explorer", "value_norms"]

FONT = 15  # points: at least 20 px at the figures' widths on a 1280 px slide
SPECIAL = ("[CLS]", "[SEP]")


def _unit(v: Any, name: str, d: int) -> np.ndarray:
    if hasattr(v, "detach"):
        v = v.detach().cpu().numpy()
    a = np.asarray(v, dtype=float)
    if a.shape != (d,):
        raise ValueError(f"{name} must have shape ({d},), one vector of the model's width; got {a.shape}")
    return a / np.linalg.norm(a)


def lean_explorer(model: Any, tech: Any, fruit: Any, *, sentence: str, word: str = "apple",
                  band: tuple[float, float] | None = None, neutral: Sequence[str] | None = None,
                  max_tokens: int = 20) -> widgets.interactive:
    """Two text boxes, a sentence and a word: each token's lean cos(h, tech) - cos(h, fruit) in the model's
    last layer, one bar per token (the pieces of the word in orange). With ``neutral`` (sentences that hold
    ``word``), the grey band is the typed word's own range of leans over those sentences, the word put in
    ``word``'s place; otherwise ``band``, if given, is shaded while the word is ``word``.

    Inputs:
        model: a :class:`selfattention.data.PretrainedModel`; tech, fruit: (d_model,) directions.
    Returns:
        the widget (display it, or leave it as a cell's last value).
    """
    d = int(model.model.config.hidden_size)
    tech_u, fruit_u = _unit(tech, "tech", d), _unit(fruit, "fruit", d)
    if not isinstance(max_tokens, int) or max_tokens < 3:
        raise ValueError(f"max_tokens must be an integer of at least 3, got {max_tokens!r}")
    if neutral is not None and not all(word in s.split() for s in neutral):
        raise ValueError(f"every neutral sentence must hold {word!r}, got {list(neutral)}")
    target = word
    fig, ax = plt.subplots(figsize=(10, 4.6), layout="constrained")
    plt.close(fig)
    bars = ax.bar(range(max_tokens), np.zeros(max_tokens), color="tab:blue")
    shade: list[Any] = []
    ax.axhline(0, color="black", lw=0.8)
    ax.set_ylim(-0.6, 0.6)
    ax.set_ylabel("lean: cos(tech) - cos(fruit)", fontsize=FONT)
    ax.tick_params(labelsize=FONT)
    ax.grid(axis="y", alpha=0.3)

    def leans(sentences: Sequence[str], w: str) -> np.ndarray:
        H = model.contextual_vectors(list(sentences), w).numpy().astype(float)
        H = H / np.linalg.norm(H, axis=1, keepdims=True)
        return H @ tech_u - H @ fruit_u

    def band_for(w: str) -> tuple[float, float] | None:
        if neutral is not None:
            v = leans([" ".join(w if t == target else t for t in s.split()) for s in neutral], w)
            return float(v.min()), float(v.max())
        return band if w == target else None

    def update(sentence: str, word: str) -> None:
        word = word.strip().lower()
        if not sentence.strip() or not word:
            print("Type a sentence and a word, and press Enter.")
            return
        result = model.run(sentence)
        tokens = result["tokens"][:max_tokens]
        H = result["hidden"][-1].numpy().astype(float)[: len(tokens)]         # (T, d_model)
        H = H / np.linalg.norm(H, axis=1, keepdims=True)
        lean = H @ tech_u - H @ fruit_u                                     # (T,)
        try:
            start, stop = model.word_span(tokens, word)
        except ValueError:
            start = stop = 0
        heights = np.zeros(max_tokens)
        heights[: len(tokens)] = lean
        set_heights(bars, heights)
        for i, bar in enumerate(bars):
            bar.set_visible(i < len(tokens))
            bar.set_color("tab:orange" if start <= i < stop else "tab:blue")
        while shade:
            shade.pop().remove()
        legend = ax.get_legend()
        if legend is not None:
            legend.remove()
        lo_hi = band_for(word)
        if lo_hi is not None:
            shade.append(ax.axhspan(*lo_hi, color="tab:grey", alpha=0.25,
                                    label=f'"{word}" in the neutral sentences'))
            ax.legend(fontsize=FONT, loc="upper right")
        ax.set_xlim(-0.6, len(tokens) - 0.4)
        ax.set_xticks(range(len(tokens)), tokens, rotation=40, ha="right")
        ax.set_title(f"lean of each token of {sentence!r}"[:90], fontsize=FONT)
        show(fig)
        if len(result["tokens"]) > max_tokens:
            print(f"Only the first {max_tokens} tokens are drawn.")
        if stop:
            where = "" if lo_hi is None else f" (neutral sentences: {lo_hi[0]:+.3f} to {lo_hi[1]:+.3f})"
            print(f"{word!r} ({' '.join(tokens[start:stop])}): lean {lean[start:stop].mean():+.3f}{where}; "
                  f"the other tokens' mean: {np.delete(lean, range(start, stop)).mean():+.3f}")
        else:
            print(f"{word!r} is not in this sentence; every token's lean is drawn.")

    box = widgets.Text(value=sentence, description="sentence", continuous_update=False,
                       layout=widgets.Layout(width="640px"))
    word_box = widgets.Text(value=word, description="word", continuous_update=False,
                            layout=widgets.Layout(width="300px"))
    return widgets.interactive(update, sentence=box, word=word_box)


def value_norms(model: Any, result: dict[str, Any], layer: int) -> np.ndarray:
    """(num_heads, T) the norms ||v_j W_O^h|| of layer ``layer`` (from 0) in ``result = model.run(...)``:
    what head h adds from token j per unit of weight, v_j = x_j W_V^h + b_V^h (the value bias included)."""
    import torch

    block = model.model.encoder.layer[layer].attention
    heads = int(model.model.config.num_attention_heads)
    x = result["hidden"][layer]                                            # (T, d_model): the layer's input
    T, d = x.shape
    with torch.no_grad():
        V = block.self.value(x).numpy().reshape(T, heads, d // heads)        # (T, heads, d_k)
    W_O = block.output.dense.weight.detach().numpy().T.reshape(heads, d // heads, d)  # (heads, d_k, d)
    return np.linalg.norm(np.einsum("jhk,hkd->hjd", V, W_O), axis=-1)       # (heads, T)


def head_explorer(model: Any, sentences: Sequence[str], *, layer: int = 0,
                  head: int = 0) -> widgets.interactive:
    """A sentence menu and layer and head sliders (both counted from 0): the head's weights alpha_ij next
    to the shares of what it adds, alpha_ij ||v_j W_O^h|| divided by their sum over j (each row sums to 1
    in both maps, drawn on one colour scale).

    Returns:
        the widget (display it, or leave it as a cell's last value).
    """
    if isinstance(sentences, str) or not sentences:
        raise ValueError(f"sentences must be a non-empty list of strings, got {sentences!r}")
    L, H = int(model.num_layers), int(model.num_heads)
    drawn: dict[str, tuple] = {}  # sentence -> (tokens, weights, shares, figure, two images)

    def prepare(sentence: str) -> tuple:
        if sentence in drawn:
            return drawn[sentence]
        result = model.run(sentence)
        tokens = result["tokens"]
        A = np.stack([a.numpy().astype(float) for a in result["attentions"]])     # (L, H, T, T)
        added = A * np.stack([value_norms(model, result, l) for l in range(L)])[:, :, None, :]
        shares = added / added.sum(-1, keepdims=True)
        size = 0.42 * len(tokens)
        fig, axes = plt.subplots(1, 2, figsize=(2 * size + 2.8, size + 1.6), layout="constrained")
        plt.close(fig)
        images = []
        for ax, title in zip(axes, ["weight alpha_ij", "share of alpha_ij ||v_j W_O^h||"], strict=True):
            images.append(ax.imshow(A[0, 0], cmap="Blues", vmin=0, vmax=1))
            ax.set_xticks(range(len(tokens)), tokens, rotation=60, ha="right")
            ax.set_yticks(range(len(tokens)), tokens if ax is axes[0] else [""] * len(tokens))
            ax.set_xlabel("key j", fontsize=FONT)
            ax.set_title(title, fontsize=FONT)
            ax.tick_params(labelsize=FONT)
        axes[0].set_ylabel("query i", fontsize=FONT)
        bar = fig.colorbar(images[1], ax=list(axes), shrink=0.8)
        bar.ax.tick_params(labelsize=FONT)
        fig.canvas.draw()  # the first drawing of a figure is the slow one: done here, not on a move
        drawn[sentence] = tokens, A, shares, fig, images
        return drawn[sentence]

    def update(sentence: str, layer: int, head: int) -> None:
        tokens, A, shares, fig, images = prepare(sentence)
        images[0].set_data(A[layer, head])
        images[1].set_data(shares[layer, head])
        fig.suptitle(f"layer {layer}, head {head}", fontsize=FONT + 1)
        show(fig)
        real = slice(1, len(tokens) - 1)
        print(f"layer {layer}, head {head}, mean over the real tokens as queries: weight on [CLS] "
              f"{A[layer, head, real, 0].mean():.2f}, share of what it adds from [CLS] "
              f"{shares[layer, head, real, 0].mean():.2f}")

    return widgets.interactive(
        update,
        sentence=widgets.Dropdown(options=list(sentences), description="sentence",
                                  layout=widgets.Layout(width="640px")),
        layer=widgets.IntSlider(value=layer, min=0, max=L - 1, description="layer"),
        head=widgets.IntSlider(value=head, min=0, max=H - 1, description="head"),
    )
