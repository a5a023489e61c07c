"""Checks for lesson 02 (basic self-attention: a word as a weighted sum of its sentence).

Every check builds its own inputs (the lesson's toy vectors) and its own reference answer, and names the
typical mistakes of its exercise in words, computed from what the learner returned.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ._engine import (
    ExerciseError,
    _to_array,
    passed,
    reference_softmax,
)

__all__ = ["check_bank_mix", "check_one_sided", "check_river_row"]

# The lesson's toy vectors; axes: (finance, nature, food, tech).
_TOY: dict[str, np.ndarray] = {
    "money": np.array([1.0, 0.1, 0.0, 0.0]),
    "bank": np.array([0.7, 0.7, 0.0, 0.0]),
    "grows": np.array([0.5, 0.3, 0.1, 0.0]),
    "river": np.array([0.1, 1.0, 0.0, 0.0]),
}


def _one_number(got: Any, name: str, what: str, shape_tail: str, yes_no: str | None = None,
                finite_with_shape: bool = True) -> float:
    """``got`` as one float, or an ExerciseError that says what it is instead: blank (``what``: what to write),
    text, True/False (only when ``yes_no`` is given: the message's tail), or not one number (``shape_tail``: what
    it should be; non-finite numbers count as wrong here unless ``finite_with_shape`` is False)."""
    if got is None or got is Ellipsis:
        raise ExerciseError(f"{name} has no value yet: replace `None` with {what} (a number).")
    if isinstance(got, str):
        raise ExerciseError(f"{name} is text (a string), {got!r:.40}, not a number: write the number "
                            "itself, without quotes.")
    if yes_no is not None and isinstance(got, (bool, np.bool_)):
        raise ExerciseError(f"{name} is {got}, {_a(got)}: it should be a number, {yes_no}")
    v = _to_array(got, name, not_numbers=f"{name} should be one number, but it is {_a(got)}.")
    if v.size != 1 or finite_with_shape and not np.isfinite(v).all():
        raise ExerciseError(f"{name} has shape {v.shape}: it should be {shape_tail}")
    return float(v.reshape(-1)[0])


def _vector(got: Any, name: str, size: int, what: str) -> np.ndarray:
    """``got`` as a float vector of ``size`` finite numbers, or an ExerciseError that says what it is."""
    if got is None or got is Ellipsis:
        raise ExerciseError(f"{name} has no value yet: replace `None` with {what}.")
    if isinstance(got, str) or isinstance(got, (list, tuple)) and any(isinstance(v, str) for v in got):
        raise ExerciseError(f"{name} is text (a string), {got!r:.40}, not a number: it should be {what}; "
                            "write the numbers themselves, without quotes.")
    try:
        v = np.asarray(got.detach().cpu().numpy() if hasattr(got, "detach") else got, dtype=float)
    except (TypeError, ValueError):
        raise ExerciseError(f"{name} should be {what}, but it is {_a(got)}: {got!r:.80}") from None
    if v.size == size and v.ndim > 1 and max(v.shape) == size:   # a row or column: its numbers, in order
        v = v.reshape(size)                                           # (the hidden test reshapes it too)
    if v.shape != (size,):
        raise ExerciseError(f"{name} has shape {v.shape}; it should be {what}, shape ({size},).")
    if not np.isfinite(v).all():
        raise ExerciseError(f"{name} contains NaN or infinite values; use ordinary finite numbers.")
    return v


def _a(got: Any) -> str:
    """The type name of ``got`` with its article: "an int", "a list"."""
    name = type(got).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def _fmt(x: np.ndarray) -> str:
    return str(np.round(np.asarray(x, dtype=float), 3).tolist())


_UNSET = object()


# --------------------------------------------------------------------------- exercise 2
#: *river bank flows*, rows river, bank, flows; the point bank' must land on, and the weights that put it there.
_RBF = np.array([[0.1, 1.0, 0.0, 0.0], [0.7, 0.7, 0.0, 0.0], [0.2, 0.8, 0.0, 0.0]])
_RBF_WORDS = ("river", "bank", "flows")
MIX_TARGET = np.array([0.25, 0.88, 0.0, 0.0])
_MIX_TOL = 1e-3
#: The score gap omega_bank - omega_river the weights [0.5, 0.2, 0.3] need, and the tolerance on it: the
#: hidden test uses the same two, so weights a hair off [0.5, 0.2, 0.3] (within _MIX_TOL) still pass both.
GAP_RIGHT = float(np.log(0.2 / 0.5))
_GAP_TOL = 5e-3


def _mix_words(a: np.ndarray) -> str:
    return ", ".join(f"{w} {x:.3g}" for w, x in zip(_RBF_WORDS, a, strict=True))


def _score_verdict(a: np.ndarray, gap_needed: Any, gap_plain: Any) -> str:
    """Exercise 2's second part, for the right weights ``a``: the score gap omega_bank - omega_river that
    softmax needs for them, ln(alpha_bank / alpha_river), and ``gap_plain``, the gap plain scores give,
    x_2 . x_2 - x_2 . x_1 (+0.21: the wrong sign). Returns the success sentence (empty when neither was
    given), or raises an ExerciseError that names the mistake (never the value)."""
    if gap_needed is _UNSET:
        return ""
    right = GAP_RIGHT
    dots = _RBF @ _RBF[1]
    dot_gap = float(dots[1] - dots[0])
    gap = _one_number(gap_needed, "gap_needed", "the score gap you derived",
                      "one finite number, omega_bank - omega_river.")
    said = f"gap_needed = {gap:.4g}"
    ratio = 0.2 / 0.5

    def near(value: float) -> bool:
        return abs(gap - value) < _GAP_TOL

    if not near(right):
        if abs(gap - right) < 0.03:
            why = ("close, but not close enough: the weights' ratio is exactly 0.2 / 0.5, so give the gap to "
                   "three decimals, or compute it with np.log")
        elif near(-right):
            why = ("the sign is flipped: that is river's score minus bank's. The gap asked is bank's own "
                   "score minus its score with river, omega_bank - omega_river")
        elif near(dot_gap):
            why = ("that is the gap plain dot products give, not the gap these weights need. Start from the "
                   "weights")
        elif near(a[1] - a[0]):
            why = ("a difference of weights. Weights are e^omega over the row's sum, so their ratio is "
                   "e^(omega_bank - omega_river): the gap is the log of the ratio")
        elif near(ratio):
            why = ("the ratio of the two weights itself. That ratio is e^(omega_bank - omega_river): take its "
                   "natural log to get the gap")
        elif near(float(np.log10(ratio))):
            why = ("a base-10 log (np.log10). Softmax uses e, so the gap is the natural log, np.log")
        else:
            why = ("it does not give these weights: alpha_bank / alpha_river = e^(omega_bank - omega_river), "
                   "the row's sum cancelling; solve that for the gap")
        raise ExerciseError(f"{said}: {why}.")
    plain = _one_number(None if gap_plain is _UNSET else gap_plain, "gap_plain", "the gap plain scores give",
                        "one finite number.", yes_no="the gap x_2 . x_2 - x_2 . x_1, not a yes or no.")

    def near_plain(value: float) -> bool:
        return abs(plain - value) < _GAP_TOL

    if not near_plain(dot_gap):
        own_mix = reference_softmax(dots)
        if near_plain(-dot_gap):
            why = ("the sign is flipped: that is bank's score with river minus its own. The gap asked is "
                   "omega_22 - omega_21, bank's own score first")
        elif near_plain(gap):
            why = ("that is gap_needed again, the gap these weights need. gap_plain is the gap that plain "
                   "scores x_2 . x_j give, from the vectors alone")
        elif near_plain(float(dots[1] - dots[2])):
            why = ("that is bank's own score minus its score with flows (word 3); the gap asked is with river, "
                   "word 1 (X_rbf[0])")
        elif near_plain(float(dots[1] / dots[0])):
            why = "a ratio of the two scores; the gap is their difference, omega_22 - omega_21"
        elif near_plain(float(own_mix[1] - own_mix[0])):
            why = ("a difference of the weights that plain scores give; the gap asked is the difference of the "
                   "scores themselves")
        else:
            why = ("it is not x_2 . x_2 - x_2 . x_1: write bank's own score and its score with river, from "
                   "X_rbf, and subtract")
        raise ExerciseError(f"gap_plain = {plain:.4g}: {why}.")
    return (f" gap_needed = {gap:.3f}: alpha_bank / alpha_river = 0.2 / 0.5 = e^gap, the row's sum cancelling, "
            f"so bank's own score must sit {-right:.3f} below its score with river. Plain scores give "
            f"gap_plain = {dots[1]:.2f} - {dots[0]:.2f} = {dot_gap:+.2f}: bank ahead of river, the wrong sign. "
            "x . x fixes the weights once the vectors are fixed; lesson 04's projections give scores that can "
            "put bank behind river.")


def check_bank_mix(alpha_mix: Any, gap_needed: Any = _UNSET, gap_plain: Any = _UNSET) -> None:
    """Exercise 2: bank's three weights (river, bank, flows) in *river bank flows* that put
    bank' = sum_j alpha_j x_j on [0.25, 0.88, 0, 0]. Finance and nature give two linear equations; the
    weights summing to 1 gives the third, so [0.5, 0.2, 0.3] is the only answer. Then (checked when given)
    ``gap_needed``, the score gap omega_bank - omega_river = ln(alpha_bank / alpha_river) these weights need,
    and ``gap_plain``, the gap plain scores x_2 . x_j give (+0.21: the wrong sign). Names the typical
    mistakes, computed from what was returned."""
    if alpha_mix is not None and not isinstance(alpha_mix, str) and np.size(alpha_mix) == 4:
        raise ExerciseError(
            f"alpha_mix holds 4 numbers, like a point z ({_fmt(np.ravel(np.asarray(alpha_mix, dtype=float)))}), "
            "but it should be bank's 3 weights, one per word of *river bank flows* (river, bank, flows).")
    a = _vector(alpha_mix, "alpha_mix", 3, "bank's three weights (river, bank, flows)")
    z = a @ _RBF
    total = float(a.sum())
    lands = bool(np.allclose(z, MIX_TARGET, atol=_MIX_TOL))
    said = f"your weights ({_mix_words(a)}) put bank' at {_fmt(z)}"
    if lands and abs(total - 1) < _MIX_TOL and (a >= -1e-9).all():
        scores = _score_verdict(a, gap_needed, gap_plain)
        passed(f"weights {_fmt(a)} put bank' at {_fmt(z)}. Finance and nature give two equations and the shares "
               "summing to 1 a third: three equations for three weights, so no other weights land there. All are "
               ">= 0 because the target lies inside the triangle of river, bank and flows; a point outside it "
               "would need a negative weight, which softmax never gives." + scores)
        return
    if abs(total - 100) < 0.1 and np.allclose((a / 100) @ _RBF, MIX_TARGET, atol=_MIX_TOL):
        raise ExerciseError(
            f"your weights sum to {total:.4g}: they are per cent. A weight is a share written as a fraction, "
            "0.25 for a quarter: divide by 100.")
    for order in itertools.permutations(range(3)):
        if order != (0, 1, 2) and np.allclose(a[list(order)] @ _RBF, MIX_TARGET, atol=_MIX_TOL) \
                and abs(total - 1) < _MIX_TOL and not lands:
            raise ExerciseError(
                f"{said}, not on the target {_fmt(MIX_TARGET)}: these are the right weights in the wrong order. "
                "Weight j goes with word j, in the sentence's order: river, bank, flows.")
    if lands:   # on the target's coordinates, but not a mix
        raise ExerciseError(
            f"{said}, the target's coordinates, but your weights sum to {total:.4f}, not 1"
            + (" (and one is negative)" if (a < -1e-9).any() else "")
            + ": they are not shares. Finance and nature give only two equations for three weights, so many "
            "weights hit these coordinates; section 1's rule that "
            "the weights sum to 1 is the third equation, and only one set satisfies all three.")
    transposed = np.linalg.solve(np.column_stack([_RBF[:, 0], _RBF[:, 1], np.ones(3)]), [*MIX_TARGET[:2], 1.0])
    if np.allclose(a, transposed, atol=_MIX_TOL):
        raise ExerciseError(
            f"{said}, not on the target {_fmt(MIX_TARGET)}: your M has one row per word (its finance, nature, 1), "
            "the transpose of the system. In z_2 = sum_j alpha_2j x_j each equation is one coordinate, so M needs "
            "one row per equation (finance, nature, sum) and one column per word.")
    if np.allclose(z[:2], MIX_TARGET[1::-1], atol=_MIX_TOL):
        raise ExerciseError(
            f"{said}: finance and nature swapped. Your equations ask for finance {MIX_TARGET[1]:g} and nature "
            f"{MIX_TARGET[0]:g}; the target is finance {MIX_TARGET[0]:g}, nature {MIX_TARGET[1]:g}: the "
            "right-hand side must list them in the order of M's rows.")
    if (a < -1e-9).any():
        neg = [w for w, x in zip(_RBF_WORDS, a, strict=True) if x < -1e-9]
        raise ExerciseError(
            f"{said}, not on the target {_fmt(MIX_TARGET)}, and the weight of {' and '.join(neg)} is negative: "
            "a share is never below 0. Write z_2 = sum_j alpha_2j x_j coordinate by coordinate: one row of M per "
            "equation, one column per word (river, bank, flows).")
    bank_own = reference_softmax(_RBF @ _RBF[1])
    if np.allclose(a, bank_own, atol=_MIX_TOL):
        raise ExerciseError(
            f"these are the softmax of bank's own scores, as in section 4: {said}, not on the target "
            f"{_fmt(MIX_TARGET)}. The exercise asks for the weights that land bank' there, whatever scores "
            "would give them: solve z_2 = sum_j alpha_2j x_j for the weights.")
    if abs(total - 1) >= _MIX_TOL:
        raise ExerciseError(
            f"{said}, not on the target {_fmt(MIX_TARGET)}, and they sum to {total:.4g}, not 1: weights are "
            "shares. Write one equation per nonzero coordinate of z_2 = sum_j alpha_2j x_j, and section 1's "
            "rule for the third.")
    off = z - MIX_TARGET
    scale = float(z[:2] @ MIX_TARGET[:2] / (z[:2] @ z[:2])) if z[:2].any() else 0.0
    if abs(scale - 1) > _MIX_TOL and np.allclose(scale * z, MIX_TARGET, atol=_MIX_TOL):
        raise ExerciseError(
            f"{said}, not on the target {_fmt(MIX_TARGET)}: your weights are the weights that land on the target, "
            f"divided by {scale:.4g}. Rescaling them to sum to 1 moved bank' off the target, to {1 / scale:.4g} "
            "times its coordinates. Sum-to-one must be one of the equations solved together with finance and "
            "nature, not imposed afterwards.")
    raise ExerciseError(
        f"{said}, not on the target {_fmt(MIX_TARGET)}: off by {off[0]:+.3f} in finance and {off[1]:+.3f} in "
        "nature. Your weights sum to 1, so that equation holds; now make finance and nature match: "
        "sum_j alpha_2j x_j[finance] = 0.25, and the same for nature.")


# --------------------------------------------------------------------------- exercise 3
#: The toy "bank" between the two designed words, and the bars of exercise 3.
_BANK = np.array([0.7, 0.7, 0.0, 0.0])
ONE_SIDED_HIGH, ONE_SIDED_LOW, ONE_SIDED_BOUND = 0.5, 0.2, 2.0


def _toy_word(got: Any, name: str) -> np.ndarray:
    v = _to_array(got, name, empty=f"{name} has no value yet: write 4 numbers (finance, nature, food, tech).",
                  not_numbers=f"{name} should be 4 numbers, but it is {_a(got)}.")
    if v.size == 4 and v.ndim > 1 and max(v.shape) == 4:   # a row or column, as the hidden test reshapes it
        v = v.reshape(4)
    if v.shape != (4,):
        raise ExerciseError(f"{name} has shape {v.shape}: give 4 numbers (finance, nature, food, tech).")
    if not np.isfinite(v).all():
        raise ExerciseError(f"{name} = {_fmt(v)} is not finite.")
    return v


def _ratio_s(ratio_S: Any, omega: np.ndarray) -> str:
    """Exercise 3's derivation for the learner's own design: ``ratio_S`` = S_3 / S_1, the row sums
    S_i = sum_k e^omega_ik of the scores ``omega`` (3, 3), which equals alpha_13 / alpha_31. Returns the
    success sentence (empty when not given), or raises an ExerciseError that names the mistake (never the
    value)."""
    if ratio_S is _UNSET:
        return ""
    got = _one_number(ratio_S, "ratio_S", "S_3 / S_1 for your x_1, x_3", "one finite number, S_3 / S_1.",
                      yes_no="S_3 / S_1.")
    sums = np.exp(omega).sum(axis=1)
    right = float(sums[2] / sums[0])
    shifted = np.exp(omega - omega.max(axis=1, keepdims=True)).sum(axis=1)   # each row shifted by its own max

    def near(value: float) -> bool:
        return abs(got - value) <= _RATIO_RTOL * abs(value)

    no_bank = np.exp(omega[:, [0, 2]]).sum(axis=1)   # row sums without bank's term e^omega_i2
    score_sums = bool(omega[0].sum()) and near(float(omega[2].sum() / omega[0].sum()))
    lengths = bool(omega[0, 0]) and near(float(np.sqrt(omega[2, 2] / omega[0, 0])))
    if near(right):
        return (f" ratio_S = {got:.2f} = S_3 / S_1 = alpha_13 / alpha_31: the same numerator cancels, so the row "
                "with the larger sum gives the smaller weight.")
    if near(1 / right):
        why = "the ratio is inverted: that is S_1 / S_3. Asked: word 3's row sum over word 1's"
    elif near(float(omega[2, 2] / omega[0, 0])) if omega[0, 0] else False:
        why = ("a ratio of own scores, |x_3|^2 / |x_1|^2. S_i sums e^omega_ik over the whole row, bank's and "
               "the other word's terms included")
    elif near(float(np.exp(omega[2, 2] - omega[0, 0]))):
        why = ("only the own terms, e^omega_33 / e^omega_11. S_i sums e^omega_ik over the whole row, bank's and "
               "the other word's terms included")
    elif near(float(no_bank[2] / no_bank[0])):
        why = ("bank's term is left out: S_i sums e^omega_ik over all three words of row i, bank's "
               "e^omega_i2 included")
    elif score_sums and lengths:
        why = ("for this design that is both |x_3| / |x_1| and the score sums' ratio, and neither is S_3 / S_1: "
               "S_i sums the exponentials e^omega_ik of row i's scores")
    elif score_sums:
        why = "a ratio of score sums: S_i sums the exponentials e^omega_ik, not the scores omega_ik"
    elif lengths:
        why = ("a ratio of lengths, |x_3| / |x_1|: S_i sums the exponentials e^omega_ik of row i's scores, "
               "not lengths")
    elif near(float(shifted[2] / shifted[0])):
        why = ("row sums of shifted scores: subtracting each row's largest score (as a stable softmax does) "
               "divides each S_i by its own e^(max), a different factor per row, so their ratio changes. Use the "
               "plain sums S_i = sum_k e^omega_ik")
    elif abs(got - right) <= _CLOSE_RTOL * right:
        why = ("close: the right ratio, rounded too far. Round less (3 decimals) or compute it from your row "
               "sums, S[2] / S[0]")
    else:
        why = ("it is not S_3 / S_1 for your x_1 and x_3: S_i = sum_k e^omega_ik over row i of the scores of "
               "x_1, bank, x_3")
    raise ExerciseError(f"ratio_S = {got:.4g}: {why}.")


def _row_sum(got: Any, i: int, omega: np.ndarray) -> None:
    """Exercise 3's row sum S_i = sum_k e^omega_ik of row ``i`` (0 or 2) of the learner's own scores ``omega``
    (3, 3). Raises an ExerciseError that names the mistake (never the value)."""
    name, other = ("S_1", "S_3") if i == 0 else ("S_3", "S_1")
    got = _one_number(got, name, f"word {i + 1}'s row sum for your x_1, x_3", f"one finite number, {name}.",
                      yes_no=f"{name}.")
    sums = np.exp(omega).sum(axis=1)
    right = float(sums[i])

    def near(value: float) -> bool:
        return abs(got - value) <= _RATIO_RTOL * abs(value)

    if near(right):
        return
    row = omega[i]
    if near(float(sums[2 - i])):
        why = f"that is {other}, the other word's row sum: {name} sums row {i + 1}, e^omega_{i + 1}k over k"
    elif near(float(np.exp(row[[0, 2]]).sum())):
        why = (f"bank's term is left out: row {i + 1} has three words, so {name} also holds "
               f"e^omega_{i + 1}2, the term of bank's score")
    elif near(float(np.exp(row[i]))):
        why = f"only the own term e^omega_{i + 1}{i + 1}: {name} sums e^omega_{i + 1}k over all three words"
    elif near(float(row.sum())):
        why = f"a sum of scores: {name} sums the exponentials e^omega_{i + 1}k, not the scores"
    elif near(float(np.exp(row - row.max()).sum())):
        why = (f"a sum of shifted scores: subtracting the row's largest score (as a stable softmax does) "
               f"divides {name} by e^(max). Use the plain sum of e^omega_{i + 1}k")
    elif abs(got - right) <= _CLOSE_RTOL * right:
        why = "close: the right sum, rounded too far. Round less (3 decimals) or compute it from your scores"
    else:
        why = (f"it is not the row sum for your x_1 and x_3: {name} = sum_k e^omega_{i + 1}k over row {i + 1} of "
               "the scores of x_1, bank, x_3")
    raise ExerciseError(f"{name} = {got:.4g}: {why}.")


def check_one_sided(x_1: Any, x_3: Any = _UNSET, ratio_S: Any = _UNSET, S_1: Any = _UNSET,
                    S_3: Any = _UNSET) -> None:
    """Exercise 3: toy vectors x_1, x_3 (each of length at most 2) for the sentence (x_1, bank, x_3) with
    alpha_13 > 0.5 but alpha_31 < 0.2. Both weights have the numerator e^omega_13; they differ by the row sums,
    alpha_13 / alpha_31 = S_3 / S_1, and ``ratio_S`` (checked when given, once the design holds) is that
    ratio for the learner's own design; ``S_1`` and ``S_3`` (checked when given, before ``ratio_S``) the row
    sums themselves. Names the typical mistakes."""
    v1 = _toy_word(x_1, "x_1")
    v3 = _toy_word(None if x_3 is _UNSET else x_3, "x_3")
    for name, v in (("x_1", v1), ("x_3", v3)):
        if np.linalg.norm(v) > ONE_SIDED_BOUND + 1e-9:
            raise ExerciseError(
                f"{name} = {_fmt(v)} has length {np.linalg.norm(v):.3g}, longer than 2: a huge vector wins any "
                "row by brute force. With lengths at most 2 the row sums must do it: the two weights share the "
                "numerator e^omega_13, so what else differs?")
    X = np.stack([v1, _BANK, v3])
    omega = X @ X.T
    e = np.exp(omega - omega.max())
    sums = e.sum(axis=1)
    A = e / sums[:, None]
    a13, a31 = float(A[0, 2]), float(A[2, 0])
    said = f"alpha_13 = {a13:.3f}, alpha_31 = {a31:.3f}"
    ratio = sums[2] / sums[0]
    if a13 > ONE_SIDED_HIGH and a31 < ONE_SIDED_LOW:
        for i, got in ((0, S_1), (2, S_3)):
            if got is not _UNSET:
                _row_sum(got, i, omega)
        derived = _ratio_s(ratio_S, omega)
        passed(f"{said}, though omega_13 = omega_31 = {omega[0, 2]:.2f}. Both weights are e^{omega[0, 2]:.2f} "
               f"over a row sum, so alpha_13 / alpha_31 = S_3 / S_1 = {ratio:.2f}: word 3's row holds its own "
               f"large score |x_3|^2 = {omega[2, 2]:.2f}, word 1's row only {omega[0, 0]:.2f}. Symmetric scores, "
               "one-sided weights." + derived)
        return
    if a13 <= ONE_SIDED_HIGH and omega[0, 2] <= 0 and (v1.any() and v3.any()):
        raise ExerciseError(
            f"{said}: omega_13 = x_1 . x_3 = {omega[0, 2]:.2f} is not above 0, because x_1 "
            + ("is at right angles to x_3" if abs(omega[0, 2]) < 1e-12 else "points away from x_3")
            + f". Then e^omega_13 = {np.exp(omega[0, 2]):.2f} is at most 1, while word 1's own score "
            f"puts e^omega_11 = {np.exp(omega[0, 0]):.2f} in the same row: word 3 cannot get more than half. "
            "Point x_1 partly the way x_3 points.")
    # A zero vector first: two zero vectors also give equal rows, but the zero length is the cause.
    zero = [name for name, v in (("x_1", v1), ("x_3", v3)) if not v.any()]
    if zero and a13 <= ONE_SIDED_HIGH:
        raise ExerciseError(
            f"{said}: {' and '.join(zero)} {'is' if len(zero) == 1 else 'are'} the zero vector, so "
            "omega_13 = x_1 . x_3 = 0 and e^omega_13 = 1, while word 1's own score gives at least e^0 = 1 in "
            "the same row: word 3 cannot get more than half. Give both words a length, x_1 pointing partly "
            "the way x_3 points.")
    if abs(a13 - a31) < 1e-3:
        raise ExerciseError(
            f"{said}: equal, because the two rows have equal row sums (S_1 = S_3). The weights share the "
            "numerator e^omega_13; only different row sums can make them differ.")
    if a31 > ONE_SIDED_HIGH and a13 < ONE_SIDED_LOW:
        raise ExerciseError(
            f"{said}: the roles are swapped, word 3 gives word 1 most of its row. Asked: word 1 gives word 3 "
            "more than half, word 3 gives word 1 less than 0.2.")
    if a13 <= ONE_SIDED_HIGH:
        rest = float(np.exp(omega[0, 0]) + np.exp(omega[0, 1]))
        row_1 = (f"word 1 gives word 3 only {a13:.3f}. In row 1, e^omega_13 = {np.exp(omega[0, 2]):.2f} must "
                 f"beat the rest, e^omega_11 + e^omega_12 = {rest:.2f}: word 1's own score and its score with "
                 "bank compete with word 3")
        if a31 < ONE_SIDED_LOW:
            levers = _stretches_that_fix(v1, v3)
            raise ExerciseError(
                f"{said}: {row_1}."
                + (f" Word 3's side already holds (alpha_31 < 0.2), and a change of length alone fixes row 1: "
                   f"{' or '.join(levers)}, in the direction it has, meets both bars." if levers else
                   " Point x_1 more the way x_3 points, and away from bank, so omega_13 beats omega_11 and "
                   "omega_12."))
        longer = _longer_x3_fixes_both(v1, v3)
        raise ExerciseError(
            f"{said}: both miss. {row_1[0].upper()}{row_1[1:]}. And word 3 still gives word 1 {a31:.3f}, not "
            "below 0.2."
            + (" One change fixes both: a longer x_3, in the direction it has, raises omega_13 in row 1 and "
               "fills row 3's sum S_3 with its own score |x_3|^2, which grows faster." if longer else
               " Both weights have the numerator e^omega_13, so alpha_13 / alpha_31 = S_3 / S_1: word 3's row "
               "needs the larger sum (a larger own score |x_3|^2), word 1's the smaller."))
    raise ExerciseError(
        f"{said}: word 3 still gives word 1 {a31:.3f}, not below 0.2. alpha_13 / alpha_31 = S_3 / S_1 is only "
        f"{ratio:.2f}. Two levers raise it: a larger own score |x_3|^2 (now {omega[2, 2]:.2f}) fills S_3"
        + (", though x_3 already has the largest length allowed, 2,"
           if np.linalg.norm(v3) >= ONE_SIDED_BOUND - 1e-9 else "")
        + f" and a shorter x_1 (own score |x_1|^2 = {omega[0, 0]:.2f}) keeps S_1 smaller.")


def _meets_both(v1: np.ndarray, v3: np.ndarray) -> bool:
    X = np.stack([v1, _BANK, v3])
    omega = X @ X.T
    e = np.exp(omega - omega.max(axis=1, keepdims=True))
    A = e / e.sum(axis=1, keepdims=True)
    return bool(A[0, 2] > ONE_SIDED_HIGH and A[2, 0] < ONE_SIDED_LOW)


def _stretches_that_fix(v1: np.ndarray, v3: np.ndarray) -> list[str]:
    """Which one-word change in length only (its direction kept, its length at most 2) meets both bars."""
    found = []
    for name, v, other, first in (("x_1", v1, v3, True), ("x_3", v3, v1, False)):
        if not v.any():
            continue
        top = ONE_SIDED_BOUND / np.linalg.norm(v)
        for label, scales in (("longer", np.linspace(1, top, 41)[1:] if top > 1 else []),
                              ("shorter", np.linspace(1, 0, 41)[1:-1])):
            if any(_meets_both(s * v, other) if first else _meets_both(other, s * v) for s in scales):
                found.append(f"a {'slightly ' if label == 'longer' else ''}{label} {name}")
    return found


def _longer_x3_fixes_both(v1: np.ndarray, v3: np.ndarray) -> bool:
    """Whether x_3 stretched in its own direction (to length at most 2) meets both bars."""
    if not v3.any():
        return False
    for scale in np.linspace(1.0, max(1.0, ONE_SIDED_BOUND / np.linalg.norm(v3)), 41)[1:]:
        X = np.stack([v1, _BANK, scale * v3])
        omega = X @ X.T
        e = np.exp(omega - omega.max(axis=1, keepdims=True))
        A = e / e.sum(axis=1, keepdims=True)
        if A[0, 2] > ONE_SIDED_HIGH and A[2, 0] < ONE_SIDED_LOW:
            return True
    return False


# --------------------------------------------------------------------------- exercise 1: bank doubled
#: *the river flows near a bank*, toy table; the focus is word 2, river (index 1); bank is word 6 (index 5).
_TRFNAB_WORDS = ("the", "river", "flows", "near", "a", "bank")
_TRFNAB = np.array([[0.2, 0.1, 0.0, 0.1], [0.1, 1.0, 0.0, 0.0], [0.2, 0.8, 0.0, 0.0], [0.0, 0.3, 0.0, 0.1],
                    [0.1, 0.1, 0.1, 0.1], [0.7, 0.7, 0.0, 0.0]])
_RIVER, _BANK_ROW = 1, 5
_RATIO_RTOL = 1e-3
#: Exercise 1's tolerance on c_tie: 0.5 per cent, so 1.01 / 0.77 worked by hand to 1.31 passes and 1.3 does not.
_TIE_RTOL = 5e-3
#: A hand-rounded answer within 1 per cent of the right one that matches no named mistake: named as rounding.
_CLOSE_RTOL = 0.01


def _river_row(X: np.ndarray) -> str:
    """River's weights in the sentence ``X`` (6, 4), largest first, for the success line."""
    a = reference_softmax(X @ X[_RIVER])
    return ", ".join(f"{_TRFNAB_WORDS[k]} {a[k]:.3f}" for k in np.argsort(-a)[:3])


def _tie_factor(c_tie: Any) -> str:
    """Exercise 1: ``c_tie``, the factor c in x_6 -> c x_6 at which bank's weight in river's row equals river's
    own: alpha_26 / alpha_22 = e^(c omega_26 - omega_22) = 1, so c = omega_22 / omega_26, the row's sum
    cancelling. Returns the success sentence, or raises an ExerciseError that names the mistake (never the
    value)."""
    name = "c_tie"
    got = _one_number(c_tie, name, "the factor you derived", "one number, the factor c.", finite_with_shape=False)
    if not np.isfinite(got):
        raise ExerciseError(f"{name} is {got}: use an ordinary finite number.")
    X = _TRFNAB
    own, bank = float(X[_RIVER] @ X[_RIVER]), float(X[_RIVER] @ X[_BANK_ROW])
    right = own / bank
    said = f"{name} = {got:.4g}"

    def near(value: float) -> bool:
        return abs(got - value) <= _TIE_RTOL * abs(value)

    if near(right):
        X2 = X.copy()
        X2[_BANK_ROW] *= 2
        return (f"{name} = {got:.4g}, omega_22 / omega_26 = {own:.2f} / {bank:.2f} = {right:.3f}: scaling x_6 by c scales river's "
                f"score with bank, x_2 . (c x_6) = c {bank:.2f}, and leaves river's own {own:.2f}; the row's sum "
                "cancels in alpha_26 / alpha_22 = e^(c omega_26 - omega_22), which is 1 at the tie. River's "
                f"weights, largest first: before, {_river_row(X)}; after doubling (c = 2, past the tie), "
                f"{_river_row(X2)}: |2x_6| cos(theta_26) = {2 * bank / np.linalg.norm(X[_RIVER]):.2f} > |x_2| = "
                f"{np.linalg.norm(X[_RIVER]):.2f}.")
    shifted = [float(X[r] @ X[r] / (X[r] @ X[b]))   # word 2 read as index 2, word 6 as index 4
               for r, b in ((_RIVER + 1, _BANK_ROW), (_RIVER, _BANK_ROW - 1), (_RIVER + 1, _BANK_ROW - 1))]
    if any(near(v) for v in shifted):
        why = ("a row is off by one: Python counts from 0, so word 2 (river) is X_r[1] and word 6 (bank) is "
               "X_r[5], not X_r[2] or X_r[4]")
    elif near(bank / own):
        why = ("the factor is inverted: omega_26 / omega_22. c multiplies bank's score with river, and must "
               "lift it up to river's own score")
    elif near(float(np.sqrt(right))):
        why = ("you let bank's score with river grow as c^2. Only bank's own score |c x_6|^2 does; its score "
               "with river, x_2 . (c x_6), grows as c")
    elif near(float(np.linalg.norm(X[_RIVER]) / np.linalg.norm(X[_BANK_ROW]))):
        why = ("a ratio of lengths, |x_2| / |x_6|: it leaves out the alignment. A score is length times "
               "alignment, so bank's score with river carries cos(theta_26)")
    elif near(float(np.exp(2 * bank - own))):
        why = ("that is alpha_26 / alpha_22 after the doubling, a ratio of weights, not the factor c. Find the c "
               "that makes the two scores equal")
    elif near(float(np.linalg.norm(X[_RIVER]) * np.linalg.norm(X[_BANK_ROW]) / bank)):
        why = ("that is 1 / cos(theta_26): the lengths are left out. A score is length times alignment, so the "
               "tie needs |c x_6| cos(theta_26) = |x_2|, with both lengths")
    elif near(float(X[_BANK_ROW] @ X[_BANK_ROW]) / bank):
        why = ("that uses bank's own score omega_66 = x_6 . x_6. The weights tie within river's row, so compare "
               "river's own score omega_22 = x_2 . x_2 with its score with bank")
    elif near(own - bank):
        why = "a score gap, not a factor: c multiplies bank's score with river"
    elif near(2.0):
        why = ("c = 2 is the doubling of the prediction, already past the tie. Find the c at which river's "
               "score with c x_6 equals river's own score")
    elif abs(got - right) <= _CLOSE_RTOL * right:
        why = ("close: you solved it, but the factor is rounded too far for the two weights to tie. Give 3 "
               "significant figures or compute it from the two scores, omega_22 / omega_26")
    else:
        why = ("at this c the two weights are not equal: alpha_26 / alpha_22 = e^(c omega_26 - omega_22), so "
               "write river's own score x_2 . x_2 and its score with bank, x_2 . x_6, and solve for c")
    raise ExerciseError(f"{said}: {why}.")


_TRFNAB_WORDS = ("the", "river", "flows", "near", "a", "bank")


def _top_after(top_after: Any) -> None:
    """Exercise 1's prediction: ``top_after``, the word with river's largest weight once x_6 -> 2 x_6 ("bank":
    river . 2 x_6 = 1.54 beats river's own 1.01). Raises an ExerciseError that names the mistake."""
    if top_after is None or top_after is Ellipsis:
        raise ExerciseError("top_after has no value yet: replace `None` with the word you predict, in quotes "
                            '(e.g. "flows").')
    if not isinstance(top_after, str):
        raise ExerciseError(f"top_after is {_a(top_after)}, {top_after!r:.40}: it should be a word, in quotes "
                            '(e.g. "flows").')
    word = top_after.strip().lower()
    if word == "bank":
        return
    X = _TRFNAB
    own, bank = float(X[_RIVER] @ X[_RIVER]), float(X[_RIVER] @ X[_BANK_ROW])
    if word == "river":
        why = (f"river leads before the doubling, but then its score with 2 x_6 is twice {bank:.2f} = {2 * bank:.2f}, "
               f"above its own {own:.2f}: within one row the larger score gets the larger weight")
    elif word in _TRFNAB_WORDS:
        why = (f"{word}'s score with river does not change when bank doubles, and it is below river's own "
               f"{own:.2f}. Compare the scores after the doubling: which one grows")
    else:
        why = f"it is not a word of *the river flows near a bank* ({', '.join(_TRFNAB_WORDS)})"
    raise ExerciseError(f"top_after = {top_after!r:.40}: {why}.")


def check_river_row(c_tie: Any, top_after: Any = _UNSET) -> None:
    """Exercise 1: in *the river flows near a bank* (toy table), ``c_tie`` is the factor c in x_6 -> c x_6 at
    which the weight river gives bank equals the weight it gives itself: c = omega_22 / omega_26 = 1.01 / 0.77
    (within 0.5 per cent); ``top_after`` (checked when given) the predicted word with river's largest weight
    after x_6 -> 2 x_6, "bank". Names the typical mistake."""
    if top_after is not _UNSET:
        _top_after(top_after)
    passed(_tie_factor(c_tie))
