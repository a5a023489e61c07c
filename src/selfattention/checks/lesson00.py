"""Checks for lesson 00 (roadmap): the warm-up."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._engine import ExerciseError, check_array, passed

__all__ = ["check_warmup_mix"]

# The lesson's toy vectors for "love", "apple", "phones" (d_model = 2), stacked as the rows of X, and the warm-up's
# weight table: row i holds the weights alpha_i1, alpha_i2, alpha_i3 that token i gives tokens 1 to 3.
_LOVE, _APPLE, _PHONES = np.array([0.3, 0.3]), np.array([0.7, 0.7]), np.array([0.1, 1.0])
_X = np.stack([_LOVE, _APPLE, _PHONES])                        # (3, 2)
_JUICE = np.array([1.0, 0.1])                                   # section 2's neighbour, in "love apple juice"
_TABLE = np.array([[0.5, 0.3, 0.2],
                   [0.1, 0.3, 0.6],
                   [0.0, 0.2, 0.8]])                            # (3, 3), rows sum to 1
_SECTION2 = np.array([0.1, 0.5, 0.4])                           # the weights of the mix computed in section 2
_WORDS = ("love", "apple", "phones")
_TYPED = 6e-3  # a typed prediction rounded to two or three decimals still matches the mistake it makes


def _mistakes() -> dict[str, np.ndarray]:
    """Known wrong (2,) answers; every one differs from the others and from the right answer by more than _TYPED."""
    row = _TABLE[1]
    mistakes = {
        "you read column 2 of the table (0.3, 0.3, 0.2: the weights the three words give apple), not row 2 (the "
        "weights apple gives them). z_2 uses row 2; a column need not even sum to 1.": _TABLE[:, 1] @ _X,
        "you used row 1, love's weights: that is love's new vector, z_1. Apple is token 2, so use row 2.":
            _TABLE[0] @ _X,
        "you used row 3, phones' weights: that is phones' new vector, z_3. Apple is token 2, so use row 2.":
            _TABLE[2] @ _X,
        "it is phones alone, the word with the largest weight; the mix adds all three words, each times its "
        "weight.": _PHONES,
        "it is only the largest term, 0.6 * phones; add the love and apple terms too.": row[2] * _PHONES,
        "it is the plain average of the three vectors; use the weights of row 2 instead of a third each.":
            _X.mean(axis=0),
        "it is the sum of the three vectors; multiply each by its weight first.": _X.sum(axis=0),
        "it is the static apple, unchanged; its row gives apple itself only 0.3, so apple' moves.": _APPLE,
        "you used the weights of section 2 (0.1, 0.5, 0.4); this exercise's table gives apple other weights in "
        "row 2.": _SECTION2 @ _X,
        # juice = [1.0, 0.1] is phones = [0.1, 1.0] mirrored, so this mix equals the right one with its two
        # coordinates swapped: one vector, two possible slips, both named
        "you mixed love, apple and juice (the X of section 2 holds juice, not phones); this sentence has "
        "phones. The same numbers come from swapping the two coordinates: the first is food, the second "
        "technology.": row @ np.stack([_LOVE, _APPLE, _JUICE]),
    }
    for i, word in enumerate(_WORDS):
        kept = [j for j in range(3) if j != i]
        mistakes[f"it leaves out the {word} term ({row[i]:g} * {word}): without it the weights sum to "
                 f"{1 - row[i]:g}, not 1; the mix has all three words."] = row[kept] @ _X[kept]
    return mistakes


def check_warmup_mix(apple_in_context: Any) -> None:
    """Warm-up: the learner's prediction of z_2 = 0.1 * love + 0.3 * apple + 0.6 * phones (row 2 of the table).

    Every named mistake gives a different (2,) vector: a column read for a row, another word's row, the largest
    weight's word alone or its term alone, the plain average or sum, the static apple, section 2's weights,
    juice (section 2's sentence) for phones, which equals swapped coordinates, one term left out, the weights as percentages (a units slip), or the right mix times a
    factor (weights that do not sum to 1), or one coordinate right and the other not; the
    three rows' mixes at once, or the weighted vectors not yet added up, (3, 2), are named too. Any other wrong
    (2,) prediction gets the rule to apply. No message prints the right values.
    """
    expected = _TABLE[1] @ _X                                   # (2,)
    try:
        arr = np.asarray(apple_in_context, dtype=float)
    except (TypeError, ValueError):
        arr = None
    if arr is not None and arr.shape == _X.shape:
        if np.allclose(arr, _TABLE[1][:, None] * _X):
            raise ExerciseError("apple_in_context has shape (3, 2): these are the three weighted vectors, one per "
                                "row, not yet added up. Add them to get one vector, shape (2,).")
        if np.allclose(arr, _TABLE @ _X):
            raise ExerciseError("apple_in_context has shape (3, 2): these are all three new vectors, z_1, z_2 and "
                                "z_3. The exercise asks for apple's alone, z_2: one vector, shape (2,).")
        if np.allclose(arr, _X):
            raise ExerciseError("apple_in_context has shape (3, 2): these are the three vectors stacked, neither "
                                "weighted nor added up. Multiply each by its weight and add them: shape (2,).")
    if (arr is not None and arr.shape == expected.shape and np.all(np.isfinite(arr))
            and not np.allclose(arr, expected, rtol=0, atol=1e-6)):
        for explanation, wrong in _mistakes().items():
            if np.allclose(arr, wrong, rtol=0, atol=_TYPED):
                raise ExerciseError(f"apple_in_context is not right yet: {explanation}")
        scale = float(arr @ expected / (expected @ expected))
        if abs(scale - 100) < 0.1 and np.allclose(arr, 100 * expected, rtol=1e-3, atol=1e-4):
            raise ExerciseError(
                "apple_in_context is a units slip: you used the weights as percentages (10, 30, 60) instead of "
                "fractions (0.1, 0.3, 0.6), so the mix comes out 100 times too large. Use the weights as the "
                "table gives them."
            )
        if abs(scale - 1) > 1e-3 and scale > 0 and np.allclose(arr, scale * expected, rtol=1e-3, atol=1e-6):
            raise ExerciseError(
                f"apple_in_context is {scale:.3g} times the right mix: the weights must sum to 1, so use the "
                f"weights of row 2 as the table gives them (weights that add up to {scale:.3g} give this vector)."
            )
        right = np.abs(arr - expected) <= 1e-6
        if right.sum() == 1:
            good, bad = ("first (food)", "second (technology)") if right[0] else ("second (technology)", "first (food)")
            raise ExerciseError(
                f"apple_in_context is half right: its {good} coordinate is right, its {bad} one is not. Redo "
                "that coordinate: the three weights of row 2, each times that coordinate of its word, added up."
            )
        raise ExerciseError(
            "apple_in_context is not z_2 yet: take row 2 of the table (the weights apple gives love, apple and "
            "phones), multiply each word's vector by its weight, and add the three vectors coordinate by "
            "coordinate. Check each product again."
        )
    check_array(apple_in_context, expected, "apple_in_context", rtol=0, atol=1e-6)
    passed(f"apple in this context, z_2, is {np.round(expected, 3).tolist()}: next to phones it leans "
           "towards technology.")
