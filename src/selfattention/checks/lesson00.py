"""Checks for lesson 00 (roadmap): the warm-up."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._engine import check_array, passed

__all__ = ["check_warmup_mix"]

# The lesson's toy vectors for "love", "apple", "phones", "juice" (d = 2) and the mixing weights.
_LOVE, _APPLE, _PHONES = np.array([0.3, 0.3]), np.array([0.7, 0.7]), np.array([0.1, 1.0])
_JUICE = np.array([1.0, 0.1])
_WEIGHTS = np.array([0.1, 0.5, 0.4])


def check_warmup_mix(apple_in_context: Any) -> None:
    """Warm-up: 0.1 * love + 0.5 * apple + 0.4 * phones, with the lesson's vectors.

    Every named mistake gives a different (2,) vector here: the plain average, the plain sum, the weights
    reversed, the juice sentence's mix (the value the lesson prints above the exercise) and the phones term alone.
    """
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
            "it is apple next to juice, the mix computed above the exercise; this sentence has phones in "
            "place of juice.": _WEIGHTS @ np.stack([_LOVE, _APPLE, _JUICE]),
            "it is only the phones term, 0.4 * phones; add the love and apple terms too.": _WEIGHTS[2] * _PHONES,
        },
    )
    passed(f"apple in this context is {np.round(expected, 3).tolist()}, pulled towards phones.")
