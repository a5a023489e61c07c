"""Checks for lesson 00 (roadmap): the warm-up, a weight row designed to a brief."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._engine import ExerciseError, _to_array, passed

__all__ = ["check_warmup_weights", "warmup_problems"]

# The lesson's toy vectors for "love", "apple", "phones" (d_model = 2: food, technology), stacked as the rows of X.
_WORDS = ("love", "apple", "phones")
_X = np.array([[0.3, 0.3], [0.7, 0.7], [0.1, 1.0]])            # (3, 2)
MIN_LEAN = 0.45   # apple' must have technology - food at least this
_PER_PHONES = float(_X[2, 1] - _X[2, 0])   # 0.9: love and apple lie on the diagonal, so only phones moves the lean
BEST_PHONES = MIN_LEAN / _PER_PHONES       # 0.5: the smallest phones weight that reaches MIN_LEAN
_TYPED = 1e-3     # a bound met to three decimals (1/3 typed as 0.333) counts as met
_SUM_TOL = 1.5e-3  # the weights sum to 1 to the same rounding (0.333 * 3 = 0.999 counts)


def _numbers(apple_weights: Any) -> np.ndarray:
    """The learner's weights as a (3,) float array, or an ExerciseError naming what they gave instead."""
    name = "apple_weights"
    if isinstance(apple_weights, str) or (
            isinstance(apple_weights, (list, tuple)) and any(isinstance(v, str) for v in apple_weights)):
        raise ExerciseError(f"{name} holds text ({apple_weights!r:.60}): write each weight as a number "
                            "(0.2, not \"0.2\").")
    w = _to_array(apple_weights, name)
    if w.shape == (3, 3):
        raise ExerciseError(f"{name} is a whole (3, 3) table; the exercise asks for row 2 only: the three "
                            "weights apple gives love, apple and phones, shape (3,).")
    if w.shape == (3, 1):
        raise ExerciseError(f"{name} is a column, shape (3, 1); write the row as a flat list of three numbers, "
                            "shape (3,).")
    if w.shape in ((2,), (1, 2)):
        raise ExerciseError(f"{name} holds two numbers: that is a vector in the plane, like apple' itself. The "
                            "exercise asks for the three weights apple gives love, apple and phones.")
    if w.shape != (3,):
        raise ExerciseError(f"{name} has shape {w.shape}; expected (3,): one weight each for love, apple and "
                            "phones.")
    if not np.all(np.isfinite(w)):
        bad = [_WORDS[i] for i in np.flatnonzero(~np.isfinite(w))]
        raise ExerciseError(f"{name} has a weight that is not a finite number (for {', '.join(bad)}); "
                            "each weight is a plain number from 0 to 1.")
    return w


def warmup_problems(w: np.ndarray) -> list[str]:
    """Every rule of the warm-up that the (3,) weights ``w`` break, in words (empty when none)."""
    problems = []
    negative = [f"{_WORDS[i]} {w[i]:g}" for i in np.flatnonzero(w < 0)]
    if negative:
        problems.append(f"a weight is negative ({', '.join(negative)}); weights are shares, from 0 to 1")
    total = float(w.sum())
    if abs(total - 100) < 1e-6:
        problems.append("the weights sum to 100: they are percentages; write them as fractions that sum to 1")
    elif abs(total - 1) > _SUM_TOL:
        fix = f" (dividing each by {total:.4g} fixes that)" if total > 0 and not negative else ""
        problems.append(f"the weights sum to {total:.4g}, not 1{fix}")
    if abs(total - 100) < 1e-6:
        return problems                       # percentages: the lean is read once they are fractions
    mixed = w @ _X
    lean = float(mixed[1] - mixed[0])
    where = f"apple' = {np.round(mixed, 3).tolist()}"
    # The lean and the target only: how each weight moves the lean is what the learner works out.
    if lean < -1e-9:
        problems.append(f"{where} leans towards food (technology - food = {lean:.3g}), not technology; "
                        f"the brief asks for a lean towards technology of at least {MIN_LEAN}")
    elif lean < 1e-9:
        problems.append(f"{where} does not lean at all (technology - food = 0); the brief asks for at least "
                        f"{MIN_LEAN}")
    elif lean < MIN_LEAN - _TYPED:
        problems.append(f"{where} leans towards technology by {lean:.3g} only; the brief asks for at least "
                        f"{MIN_LEAN}")
    elif w[2] > BEST_PHONES + _TYPED:
        problems.append(f"{where} leans by {lean:.3g}, more than the {MIN_LEAN} asked: a phones weight of "
                        f"{w[2]:g} is not the smallest that reaches {MIN_LEAN}")
    return problems


def check_warmup_weights(apple_weights: Any) -> None:
    """Warm-up: row 2 of a weight table for *love apple phones* with the smallest phones weight that makes
    apple' = row @ X lean towards technology by at least 0.45 (technology - food); the weights are
    non-negative and sum to 1. Every broken rule is named, computed from the learner's own row; a failure
    reports the lean and the target, never how each weight moves the lean (that is the exercise)."""
    w = _numbers(apple_weights)
    problems = warmup_problems(w)
    if problems:
        raise ExerciseError("apple_weights does not meet the brief yet: " + "; ".join(problems) + ".")
    mixed = w @ _X
    lean = float(mixed[1] - mixed[0])
    # A row typed to three decimals (phones 0.499) passes: say so, rather than call 0.449 "0.45 reached".
    rounded = "" if lean >= MIN_LEAN - 1e-9 else (f", short of {MIN_LEAN} by less than "
                                                      f"the {_TYPED:g} the check allows for rounding")
    shown = f"{lean:.4f}" if rounded else f"{lean:.3g}"   # 4 decimals where 0.449... would print as 0.45
    passed(f"apple' = {np.round(mixed, 3).tolist()}: technology - food = {shown} = {_PER_PHONES:g} x "
           f"{w[2]:g}{rounded}. Love and apple lie on the diagonal, so phones alone moves the lean, and "
           f"{MIN_LEAN} / {_PER_PHONES:g} = {BEST_PHONES:g} is the smallest phones weight that reaches {MIN_LEAN}.")
