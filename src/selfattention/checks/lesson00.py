"""Checks for lesson 00 (roadmap): the warm-up."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._engine import check_array, passed

__all__ = ["check_warmup_mix"]

# The lesson's toy vectors for "love", "apple", "phones" (d = 2) and the mixing weights.
_LOVE, _APPLE, _PHONES = np.array([0.3, 0.3]), np.array([0.7, 0.7]), np.array([0.1, 1.0])
_WEIGHTS = np.array([0.1, 0.5, 0.4])


def check_warmup_mix(apple_in_context: Any) -> None:
    """Warm-up: 0.1 * love + 0.5 * apple + 0.4 * phones, with the lesson's vectors."""
    stack = np.stack([_LOVE, _APPLE, _PHONES])  # (3, 2)
    expected = _WEIGHTS @ stack
    check_array(
        apple_in_context,
        expected,
        "apple_in_context",
        mistakes={
            "it is the plain average of the three vectors; use the weights 0.1, 0.5 and 0.4.":
                stack.mean(axis=0),
            "it is the sum of the three vectors; multiply each by its weight first.":
                stack.sum(axis=0),
            "the weights went to the wrong words: 0.1 belongs to love, 0.5 to apple, 0.4 to phones.":
                _WEIGHTS[::-1] @ stack,
        },
    )
    passed(f"apple in this context is {np.round(expected, 3).tolist()}, pulled towards phones.")
