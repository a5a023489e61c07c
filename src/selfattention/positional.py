"""Positional encodings: giving attention a sense of order (lesson 09)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .validation import positive_int

__all__ = ["sinusoidal_positional_encoding"]


def sinusoidal_positional_encoding(T: int, d: int, base: float = 10000.0) -> NDArray[np.float64]:
    """The sine/cosine encoding of "Attention Is All You Need".

    ``PE[pos, 2i] = sin(pos / base^(2i/d))`` and ``PE[pos, 2i+1] = cos(pos / base^(2i/d))``.

    Inputs:
        T: number of positions; d: encoding size (odd d drops the last cosine column).
    Returns:
        (T, d) array, added to (T, d) token embeddings.
    """
    for name, value in (("T", T), ("d", d)):
        positive_int(name, value)
    if not np.isfinite(base) or base <= 0:
        raise ValueError(f"base must be a positive finite number, got {base!r}")
    positions = np.arange(T)[:, None]  # (T, 1)
    freqs = base ** (-np.arange(0, d, 2) / d)  # (ceil(d/2),)
    angles = positions * freqs  # (T, ceil(d/2))
    pe = np.zeros((T, d))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles[:, : d // 2])
    return pe
