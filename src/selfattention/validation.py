"""Argument checks shared by the package's modules: one wording per mistake, wherever it is made.

Each check raises the error a learner reads (``T must be a positive integer, got 0``) or returns the
value in the form the caller computes with.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["positive_int", "positive_number", "float_array", "check_qkv"]


def positive_int(name: str, value: object) -> int:
    """``value`` as an int; ValueError naming ``name`` unless it is an integer >= 1 (a bool is not)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def positive_number(name: str, value: object, what: str = "a positive finite number") -> float:
    """``value`` as a float; ValueError naming ``name`` unless it is a finite number > 0 (a bool is not)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or (
            not math.isfinite(value) or value <= 0):
        raise ValueError(f"{name} must be {what}, got {value!r}")
    return float(value)


def float_array(name: str, x: ArrayLike, min_ndim: int) -> NDArray[np.floating]:
    """``x`` as a float array with at least ``min_ndim`` dimensions; TypeError/ValueError naming ``name``."""
    arr = np.asarray(x)
    if arr.dtype == bool or not (
        np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)
    ):
        raise TypeError(f"{name} must hold numbers, got dtype {arr.dtype}")
    if arr.ndim < min_ndim:
        raise ValueError(
            f"{name} must have at least {min_ndim} dimension(s)"
            f"{' (..., T, d)' if min_ndim == 2 else ''}, got shape {arr.shape}"
        )
    if not np.issubdtype(arr.dtype, np.floating):
        arr = arr.astype(np.float64)
    return arr


def check_qkv(Q: NDArray, K: NDArray, V: NDArray) -> tuple[int, ...]:
    """Check that queries, keys and values fit together; return their broadcast leading (batch/head) shape."""
    if K.shape[-2] == 0:
        raise ValueError(f"K has no tokens (shape {K.shape}); attention needs at least one key")
    d_k = Q.shape[-1]
    if K.shape[-1] != d_k:
        raise ValueError(
            f"Q has d_k={d_k} but K has d_k={K.shape[-1]} "
            f"(Q shape {Q.shape}, K shape {K.shape}); queries and keys must have the same size"
        )
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(
            f"K has T_k={K.shape[-2]} tokens but V has {V.shape[-2]} "
            f"(K shape {K.shape}, V shape {V.shape}); every key needs one value"
        )
    try:
        return np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    except ValueError:
        raise ValueError(
            f"the leading (batch/head) dimensions of Q {Q.shape[:-2]}, K {K.shape[:-2]} "
            f"and V {V.shape[:-2]} do not broadcast together"
        ) from None
