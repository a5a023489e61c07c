"""NumPy reference implementations: the maths the lessons teach, written plainly.

Shapes use the names the lessons use:

* ``T``   number of tokens (sequence length)
* ``d``   embedding size of the raw inputs ``X``
* ``d_k`` size of queries and keys, ``d_v`` size of values
* ``...`` any leading batch / head dimensions, which broadcast
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .validation import check_qkv, float_array, positive_int

__all__ = [
    "softmax",
    "basic_self_attention",
    "scaled_dot_product_attention",
    "causal_mask",
    "padding_mask",
    "blockwise_attention",
]

FloatArray = NDArray[np.floating]


def softmax(x: ArrayLike, axis: int = -1) -> FloatArray:
    """Softmax along ``axis``: ``exp(x) / sum(exp(x))``, computed stably, so that rows
    such as ``[1e4, 0]`` work.

    Inputs:
        x: array of any shape, finite values (``-inf`` is allowed and gets weight 0).
        axis: the axis whose entries should sum to 1.
    Returns:
        array of the same shape as ``x``; entries in [0, 1] summing to 1 along ``axis``
        (a row that is entirely ``-inf`` has no valid entry and gives all zeros).
    """
    x = float_array("x", x, min_ndim=1)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis={axis} is out of range for x with shape {x.shape}")
    x_max = np.max(x, axis=axis, keepdims=True)
    # A row that is all -inf has no valid entry: keep its maximum finite so exp gives zeros.
    x_max = np.where(np.isfinite(x_max), x_max, 0.0)
    e = np.exp(x - x_max)
    total = np.sum(e, axis=axis, keepdims=True)
    # Divide only where the row has some weight: an all -inf row stays all zeros (no 0/0 warning).
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def basic_self_attention(X: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """Parameter-free self-attention (lesson 02).

    ``omega = X X^T`` (every pair's dot product), ``A = softmax(omega)`` row by row,
    ``Z = A X`` (each output is a weighted sum of the inputs).

    Inputs:
        X: (T, d) or (..., T, d) token embeddings.
    Returns:
        Z: (..., T, d) context vectors; A: (..., T, T) attention weights, rows sum to 1.
    """
    X = float_array("X", X, min_ndim=2)
    omega = X @ np.swapaxes(X, -1, -2)  # (..., T, T)
    A = softmax(omega, axis=-1)  # (..., T, T)
    return A @ X, A  # (..., T, d), (..., T, T)


def _check_mask(mask: ArrayLike, scores_shape: tuple[int, ...]) -> NDArray[np.bool_]:
    """Validate a boolean mask that must broadcast to the (..., T_q, T_k) scores."""
    m = np.asarray(mask)
    if m.dtype != bool:
        raise TypeError(
            f"mask must be boolean (True = may attend), got dtype {m.dtype}; "
            "use e.g. causal_mask(T) or an array compared with a condition"
        )
    try:
        # Leading (batch/head) dimensions may broadcast; the last two must fit (T_q, T_k) as they are.
        fits = np.broadcast_shapes(m.shape, scores_shape)[-2:] == scores_shape[-2:]
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"mask has shape {m.shape}, which does not broadcast to the attention "
            f"scores' shape {scores_shape} (..., T_q, T_k)"
        )
    return m


def scaled_dot_product_attention(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    mask: ArrayLike | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Scaled dot-product attention: ``softmax(Q K^T / sqrt(d_k)) V``.

    Inputs:
        Q: (..., T_q, d_k) queries.
        K: (..., T_k, d_k) keys.
        V: (..., T_k, d_v) values.
        mask: optional boolean array broadcastable to (..., T_q, T_k);
            True = may attend, False = gets weight exactly 0.
    Leading (batch, head) dimensions of Q, K, V and mask broadcast against each other.
    Returns:
        out: (..., T_q, d_v) weighted sums of the values.
        weights: (..., T_q, T_k) attention weights; each row sums to 1
            (a row whose keys are all masked out is all zeros and gives a zero output).
    """
    Q = float_array("Q", Q, min_ndim=2)
    K = float_array("K", K, min_ndim=2)
    V = float_array("V", V, min_ndim=2)
    lead = check_qkv(Q, K, V)
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k)  # (..., T_q, T_k); a Python float keeps Q's dtype
    if mask is not None:
        m = _check_mask(mask, (*lead, Q.shape[-2], K.shape[-2]))
        scores = np.where(m, scores, -np.inf)
    weights = softmax(scores, axis=-1)  # fully masked rows come out as zeros
    return weights @ V, weights


def causal_mask(T: int) -> NDArray[np.bool_]:
    """(T, T) boolean mask, True on and below the diagonal: token i may see tokens j <= i."""
    positive_int("T", T)
    return np.tril(np.ones((T, T), dtype=bool))


def padding_mask(lengths: ArrayLike, T: int) -> NDArray[np.bool_]:
    """(batch, 1, T) boolean mask, True where the key is a real token, False on padding.

    Inputs:
        lengths: (batch,) number of real tokens in each sequence (the rest is padding).
        T: padded sequence length.
    Returns:
        (batch, 1, T) mask; broadcasts against scores of shape (batch, T, T).
    """
    positive_int("T", T)
    lengths = np.asarray(lengths)
    if lengths.dtype == bool or not np.issubdtype(lengths.dtype, np.integer):
        raise TypeError(f"lengths must hold integers, got dtype {lengths.dtype}")
    if lengths.ndim != 1 or np.any(lengths < 0) or np.any(lengths > T):
        raise ValueError(
            f"lengths must be a 1-D array of values in [0, T={T}], "
            f"got shape {lengths.shape} and values {lengths.tolist()}"
        )
    return (np.arange(T)[None, :] < lengths[:, None])[:, None, :]


def blockwise_attention(
    Q: ArrayLike, K: ArrayLike, V: ArrayLike, block_size: int = 128
) -> FloatArray:
    """Exact attention computed over blocks of keys with a running (online) softmax.

    Gives the same result as ``scaled_dot_product_attention(Q, K, V)[0]`` but never
    builds the full (T_q, T_k) score matrix: memory grows with ``T_q * block_size``.

    Inputs:
        Q: (..., T_q, d_k), K: (..., T_k, d_k), V: (..., T_k, d_v); block_size: keys per block.
    Returns:
        out: (..., T_q, d_v).
    """
    Q = float_array("Q", Q, min_ndim=2)
    K = float_array("K", K, min_ndim=2)
    V = float_array("V", V, min_ndim=2)
    lead = check_qkv(Q, K, V)
    positive_int("block_size", block_size)
    scale = 1.0 / math.sqrt(Q.shape[-1])  # a Python float keeps the inputs' dtype
    T_q = Q.shape[-2]
    dtype = np.result_type(Q, K, V)
    running_max = np.full((*lead, T_q, 1), -np.inf, dtype=dtype)  # largest score seen so far
    running_sum = np.zeros((*lead, T_q, 1), dtype=dtype)  # sum of exp(score - running_max)
    acc = np.zeros((*lead, T_q, V.shape[-1]), dtype=dtype)  # sum of exp(score - running_max) * v
    for start in range(0, K.shape[-2], block_size):
        k = K[..., start : start + block_size, :]
        v = V[..., start : start + block_size, :]
        s = Q @ np.swapaxes(k, -1, -2) * scale  # (..., T_q, block)
        new_max = np.maximum(running_max, s.max(axis=-1, keepdims=True))
        correction = np.exp(running_max - new_max)  # rescale what was accumulated so far
        p = np.exp(s - new_max)
        running_sum = running_sum * correction + p.sum(axis=-1, keepdims=True)
        acc = acc * correction + p @ v
        running_max = new_max
    return acc / running_sum
