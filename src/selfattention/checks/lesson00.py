"""Checks for lesson 00 (roadmap): the warm-up."""

from __future__ import annotations

from itertools import permutations
from typing import Any

import numpy as np

from ._engine import ExerciseError, check_array, passed

__all__ = ["check_warmup_mix"]

# The lesson's toy vectors for "love", "apple", "phones", "juice" (d = 2) and the mixing weights.
_LOVE, _APPLE, _PHONES = np.array([0.3, 0.3]), np.array([0.7, 0.7]), np.array([0.1, 1.0])
_JUICE = np.array([1.0, 0.1])
_WEIGHTS = np.array([0.1, 0.5, 0.4])
_WORDS = ("love", "apple", "phones")


def _mistakes(stack: np.ndarray) -> dict[str, np.ndarray]:
    """Known wrong (2,) answers; every one differs from the others and from the right answer."""
    mistakes = {
        "it is the plain average of the three vectors; use the weights 0.1, 0.5 and 0.4.": stack.mean(axis=0),
        "it is the sum of the three vectors; multiply each by its weight first.": stack.sum(axis=0),
        "it is apple next to juice, the mix computed above the exercise; this sentence has phones in "
        "place of juice.": _WEIGHTS @ np.stack([_LOVE, _APPLE, _JUICE]),
        "it is only the phones term, 0.4 * phones; add the love and apple terms too.": _WEIGHTS[2] * _PHONES,
        "it is phones itself, unweighted and alone; the mix has all three words, phones with weight 0.4.": _PHONES,
        "it is the static apple, unchanged; the mix gives phones weight 0.4, so apple' moves towards it.": _APPLE,
        "it is the mix with no weight on phones, (love + 5 apple) / 6; phones has weight 0.4 here.": (
            (_LOVE + 5 * _APPLE) / 6),
    }
    for i, word in enumerate(_WORDS):
        if i < 2:  # leaving out phones alone is named below with the other terms
            kept = [j for j in range(3) if j != i]
            mistakes[f"it leaves out the {word} term ({_WEIGHTS[i]:g} * {word}); the mix has all three words."] = (
                _WEIGHTS[kept] @ stack[kept])
    kept = [0, 1]
    mistakes["it leaves out the phones term (0.4 * phones), the word that changes with the sentence."] = (
        _WEIGHTS[kept] @ stack[kept])
    for order in permutations(range(3)):
        if order == (0, 1, 2):
            continue
        given = _WEIGHTS[list(order)]
        gave = ", ".join(f"{w} {g:g}" for w, g in zip(_WORDS, given, strict=True))
        mistakes[f"the weights went to the wrong words: you gave {gave}; the sentence's weights are love 0.1, "
                 "apple 0.5, phones 0.4."] = given @ stack
    return mistakes


def _prediction_slip(arr: np.ndarray) -> None:
    """Name the symmetry slip of a wrong (2,) prediction without printing the right values."""
    juice_mix = _WEIGHTS @ np.stack([_LOVE, _APPLE, _JUICE])
    if np.isclose(arr[0], arr[1]):
        raise ExerciseError(
            "apple_in_context has both coordinates the same: that would put the mix on the diagonal, with love and "
            "apple, but phones lies far off it, so the mix must lean to one side. Mirror the juice mix: swap both "
            "of its coordinates."
        )
    if arr[0] > arr[1]:
        raise ExerciseError(
            "apple_in_context leans to the first coordinate, as the juice mix does, but phones leans to the second: "
            "you did not mirror. Swap both coordinates of the juice mix."
        )
    if any(np.isclose(a, j) for a in arr for j in juice_mix):
        raise ExerciseError(
            "apple_in_context leans the right way, but only one of its numbers comes from the juice mix: you "
            "changed only one coordinate. Mirroring swaps the two, so the mix keeps both of the juice mix's numbers."
        )
    raise ExerciseError(
        "apple_in_context leans the right way, but its numbers are not the juice mix's two numbers: mirroring "
        "swaps the coordinates and changes neither number."
    )


def check_warmup_mix(apple_in_context: Any) -> None:
    """Warm-up: the learner's prediction of 0.1 * love + 0.5 * apple + 0.4 * phones (typed or computed).

    Every named mistake gives a different (2,) vector here: the plain average, the plain sum, the weights given to
    the wrong words (each permutation named), the juice sentence's mix (the value the lesson prints above the
    exercise), one term alone, phones unweighted, the static apple, the mix with no weight on phones, or one term left out, or the right mix times a
    factor (weights that do not sum to 1); a (3, 2) array of weighted vectors not yet added up is named
    too. Any other wrong (2,) prediction is named by its symmetry slip (both coordinates the same, not mirrored,
    one coordinate changed, other numbers), and no message prints the right values.
    """
    stack = np.stack([_LOVE, _APPLE, _PHONES])  # (3, 2)
    expected = _WEIGHTS @ stack
    try:
        arr = np.asarray(apple_in_context, dtype=float)
    except (TypeError, ValueError):
        arr = None
    if arr is not None and arr.shape == stack.shape:
        if np.allclose(arr, _WEIGHTS[:, None] * stack):
            raise ExerciseError("apple_in_context has shape (3, 2): these are the three weighted vectors, one per "
                                "row, not yet added up. Sum them over the words (axis 0) to get one vector, "
                                "shape (2,).")
        if np.allclose(arr, stack):
            raise ExerciseError("apple_in_context has shape (3, 2): these are the three vectors stacked, neither "
                                "weighted nor added up. Multiply each by its weight and add them: shape (2,).")
    if arr is not None and arr.shape == expected.shape and np.all(np.isfinite(arr)):
        scale = float(arr @ expected / (expected @ expected))
        if abs(scale - 1) > 1e-3 and scale > 0 and np.allclose(arr, scale * expected, rtol=1e-6, atol=1e-9):
            raise ExerciseError(
                f"apple_in_context is {scale:.3g} times the right mix: the weights must sum to 1, so use 0.1, 0.5 "
                f"and 0.4 (weights that add up to {scale:.3g} give this vector)."
            )
    mistakes = _mistakes(stack)
    if (arr is not None and arr.shape == expected.shape and np.all(np.isfinite(arr))
            and not np.allclose(arr, expected) and not any(np.allclose(arr, m) for m in mistakes.values())):
        _prediction_slip(arr)
    check_array(apple_in_context, expected, "apple_in_context", mistakes=mistakes)
    passed(f"apple in this context is {np.round(expected, 3).tolist()}, pulled towards phones.")
