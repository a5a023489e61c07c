"""Checks for lesson 11 (a real transformer): remove one head, the second half of an encoder layer
(feed-forward, residual, LayerNorm), and the sentence embedding (mean pooling, unit length).

Each check's own inputs make every named mistake give a result different from the right answer and from every
other named mistake (``tests/test_mistakes_lesson07.py`` feeds each one): no two sizes coincide
(T != d_model != d_ff, num_heads != d_k), the removed head is never head 0, and hard inputs are included
(a token whose vector is constant, so LayerNorm divides 0 by 0 without its eps; padding that holds huge values).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ._engine import ExerciseError, check_function, passed

__all__ = [
    "check_ablated_output",
    "check_feed_forward_block",
    "check_sentence_embedding",
]

_erf = np.vectorize(math.erf)


def gelu(z: np.ndarray) -> np.ndarray:
    """The exact GELU of BERT (hidden_act "gelu"): 0.5 z (1 + erf(z / sqrt(2))), any shape."""
    return 0.5 * z * (1.0 + _erf(z / math.sqrt(2.0)))


def _layer_norm(h: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float, *, axis: int = -1,
                ddof: int = 0) -> np.ndarray:
    mean = h.mean(axis=axis, keepdims=True)
    var = h.var(axis=axis, keepdims=True, ddof=ddof)
    return gamma * (h - mean) / np.sqrt(var + eps) + beta


# ---------------------------------------------------------------- exercise 1: remove one head
def _ablated(context: np.ndarray, W_O: np.ndarray, b_O: np.ndarray, head: int, num_heads: int,
             *, width: int | None = None, start: int | None = None, keep_only: bool = False,
             bias: bool = True) -> np.ndarray:
    d_k = context.shape[-1] // num_heads
    width = d_k if width is None else width
    start = head * width if start is None else start
    c = context.copy()
    if keep_only:
        kept = c[:, start:start + width].copy()
        c[:] = 0.0
        c[:, start:start + width] = kept
    else:
        c[:, start:start + width] = 0.0
    return c @ W_O + (b_O if bias else 0.0)


def _ablation_mistakes(case: tuple) -> dict[str, np.ndarray]:
    context, W_O, b_O, head, num_heads = case
    d_k = context.shape[-1] // num_heads
    W_cols = W_O.copy()
    W_cols[:, head * d_k:(head + 1) * d_k] = 0.0
    return {
        "nothing was removed: the output is the full attention output. Set the head's slice of the "
        "concatenated heads, columns head*d_k to (head+1)*d_k - 1 of context, to 0 before W_O.":
            context @ W_O + b_O,
        "you kept only that head and removed all the others; remove only the one head.":
            _ablated(*case, keep_only=True),
        "you zeroed columns of W_O (output features); the head's slice is ROWS head*d_k to "
        "(head+1)*d_k - 1 of W_O, the ones its part of the context meets (context @ W_O).":
            context @ W_cols + b_O,
        "the bias b_O is missing: the attention output is context @ W_O + b_O.":
            _ablated(*case, bias=False),
        "the slice is num_heads wide; each head has d_k = d_model // num_heads features.":
            _ablated(*case, width=num_heads),
        "you removed head head-1: heads are counted from 0, so head h holds features h*d_k to "
        "(h+1)*d_k - 1.": _ablated(*case, start=(head - 1) * d_k),
    }


def _ablation_cases() -> list[tuple]:
    rng = np.random.default_rng(70)
    cases = []
    for T, d_model, num_heads, head, scale in ((4, 6, 3, 1, 1.0), (5, 12, 4, 2, 1.0), (3, 12, 2, 1, 1e6)):
        context = rng.normal(size=(T, d_model)) * scale
        W_O = rng.normal(size=(d_model, d_model)) / np.sqrt(d_model)
        b_O = rng.normal(size=d_model)
        cases.append((context, W_O, b_O, head, num_heads))
    return cases


def check_ablated_output(ablated_output: Callable[..., Any]) -> None:
    """Exercise 1: the attention output with one head removed, (T, d_model)."""
    check_function(
        ablated_output, lambda *c: _ablated(*c), _ablation_cases(), "ablated_output",
        mistakes=_ablation_mistakes,
        describe=lambda c: (f"context of shape {c[0].shape}, num_heads={c[4]} (d_k={c[0].shape[1] // c[4]}), "
                            f"head={c[3]}"),
    )
    passed("the head's d_k features are removed before W_O, and the bias stays.")


# ---------------------------------------------------------------- exercise 2: feed-forward block
def _ffn_block(x1: np.ndarray, W_1: np.ndarray, b_1: np.ndarray, W_2: np.ndarray, b_2: np.ndarray,
               gamma: np.ndarray, beta: np.ndarray, eps: float = 1e-12, *, act: Callable = gelu,
               residual: bool = True, pre_norm: bool = False, axis: int = -1, ddof: int = 0,
               affine: bool = True) -> np.ndarray:
    g, b = (gamma, beta) if affine else (1.0, 0.0)
    if pre_norm:
        return x1 + act(_layer_norm(x1, g, b, eps) @ W_1 + b_1) @ W_2 + b_2
    h = act(x1 @ W_1 + b_1) @ W_2 + b_2
    return _layer_norm(x1 + h if residual else h, g, b, eps, axis=axis, ddof=ddof)


def _relu(z: np.ndarray) -> np.ndarray:
    return np.maximum(z, 0.0)


def _gelu_tanh(z: np.ndarray) -> np.ndarray:
    return 0.5 * z * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (z + 0.044715 * z**3)))


EPS_MISSING = ("the eps inside the square root is missing: a token whose vector is constant has variance 0, "
               "and (h - mean) / sqrt(0) is 0/0. Divide by sqrt(var + eps).")


def _ffn_mistakes(case: tuple) -> dict[str, np.ndarray]:
    return {
        "the residual is missing: LayerNorm(x1 + FFN(x1)), not LayerNorm(FFN(x1)).": _ffn_block(*case, residual=False),
        "LayerNorm was applied before the feed-forward (x1 + FFN(LayerNorm(x1)), the pre-norm arrangement); "
        "this model is post-norm: LayerNorm(x1 + FFN(x1)).": _ffn_block(*case, pre_norm=True),
        "that is ReLU; this model's activation is GELU, 0.5 z (1 + erf(z / sqrt(2))).": _ffn_block(*case, act=_relu),
        "that is the tanh approximation of GELU; this model (hidden_act \"gelu\") uses the exact form "
        "0.5 z (1 + erf(z / sqrt(2))).": _ffn_block(*case, act=_gelu_tanh),
        "LayerNorm normalised over the tokens (axis 0); it normalises each token's vector over its "
        "features (axis=-1).": _ffn_block(*case, axis=0),
        "the variance was divided by d_model - 1 (ddof=1); LayerNorm uses the plain mean of squares (ddof=0).":
            _ffn_block(*case, ddof=1),
        "gamma and beta are not applied: LayerNorm ends with gamma * normalised + beta.":
            _ffn_block(*case, affine=False),
    }


def _ffn_cases() -> list[tuple]:
    rng = np.random.default_rng(71)
    cases = []
    for T, d, d_ff in ((3, 4, 7), (5, 6, 10)):
        x1 = rng.normal(size=(T, d))
        W_1, b_1 = rng.normal(size=(d, d_ff)) / np.sqrt(d), rng.normal(size=d_ff)
        W_2, b_2 = rng.normal(size=(d_ff, d)) / np.sqrt(d_ff), rng.normal(size=d)
        gamma, beta = 1.0 + 0.5 * rng.normal(size=d), rng.normal(size=d)
        cases.append((x1, W_1, b_1, W_2, b_2, gamma, beta, 1e-12))
    # Hard input: token 1's vector and the block's output are constant, so its variance is exactly 0.
    x1, W_1, b_1, _, _, gamma, beta, eps = cases[1]
    x1 = x1.copy()
    x1[1] = 0.7
    cases.append((x1, W_1, b_1, np.zeros((W_1.shape[1], x1.shape[1])), np.full(x1.shape[1], 0.3), gamma, beta, eps))
    return cases


def check_feed_forward_block(feed_forward_block: Callable[..., Any]) -> None:
    """Exercise 2: LayerNorm(x1 + GELU(x1 W_1 + b_1) W_2 + b_2), (T, d_model)."""
    cases = _ffn_cases()
    if callable(feed_forward_block):
        x1 = cases[-1][0]
        try:
            with np.errstate(all="ignore"):
                got = np.asarray(feed_forward_block(*[np.copy(a) if isinstance(a, np.ndarray) else a
                                                      for a in cases[-1]]), dtype=float)
        except Exception:
            got = None
        if got is not None and got.shape == x1.shape and not np.isfinite(got[1]).all() and np.isfinite(
                np.delete(got, 1, axis=0)).all():
            raise ExerciseError(f"the result of feed_forward_block is not right yet: {EPS_MISSING}")
    check_function(
        feed_forward_block, _ffn_block, cases, "feed_forward_block", mistakes=_ffn_mistakes,
        describe=lambda c: (f"x1 of shape {c[0].shape}, d_ff={c[1].shape[1]}"
                            + (", a token with variance 0" if not c[3].any() else "")),
    )
    passed("feed-forward, residual and LayerNorm in the model's order (post-norm), with the exact GELU.")


# ---------------------------------------------------------------- exercise 3: sentence embedding
def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _embedding(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    m = np.asarray(mask, dtype=float)[..., None]            # (B, T, 1)
    return _unit((hidden * m).sum(axis=1) / m.sum(axis=1))


def _embedding_mistakes(case: tuple) -> dict[str, np.ndarray]:
    hidden, mask = case
    m = np.asarray(mask, dtype=float)[..., None]
    return {
        "the padding was averaged in: take the mean over the real tokens only (mask == 1).":
            _unit(hidden.mean(axis=1)),
        "the vectors are not unit length: divide each sentence's mean by its norm.":
            (hidden * m).sum(axis=1) / m.sum(axis=1),
        "that is the [CLS] vector; this model's sentence embedding is the mean over all real tokens.":
            _unit(hidden[:, 0]),
        "each token was normalised before the mean; average the raw vectors, then normalise once.":
            _embedding(_unit(hidden), mask),
        "that is max pooling; this model averages (mean pooling).":
            _unit(np.where(m > 0, hidden, -np.inf).max(axis=1)),
    }


def _embedding_cases() -> list[tuple]:
    rng = np.random.default_rng(72)
    h1 = rng.normal(size=(2, 4, 6))
    m1 = np.array([[1, 1, 1, 0], [1, 1, 1, 1]])
    h2 = rng.normal(size=(3, 5, 3)) + 0.5
    h2[0, 3:] = 1e6                                          # huge values in the padding
    m2 = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 1, 0, 0, 0]])
    return [(h1, m1), (h2, m2)]


def check_sentence_embedding(sentence_embedding: Callable[..., Any]) -> None:
    """Exercise 3: mean over the real tokens, then unit length; (B, T, d), (B, T) -> (B, d)."""
    check_function(
        sentence_embedding, _embedding, _embedding_cases(), "sentence_embedding",
        mistakes=_embedding_mistakes,
        describe=lambda c: f"hidden of shape {c[0].shape} with {int(np.size(c[1]) - np.sum(c[1]))} padding tokens",
    )
    passed("mean over the real tokens, then unit length: the model's own sentence embedding.")
