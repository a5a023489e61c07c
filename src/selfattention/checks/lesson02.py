"""Checks for lesson 02 (basic self-attention: a word as a weighted sum of its sentence).

Every check builds its own inputs (the lesson's toy vectors) and its own reference answer, and names the
typical mistakes of its exercise in words, computed from what the learner returned.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from ._engine import (
    ExerciseError,
    _to_array,
    passed,
    reference_softmax,
)

__all__ = ["check_contextual_vectors", "check_notes_scores", "check_bank_mix", "check_one_sided"]

# The lesson's toy vectors; axes: (finance, nature, food, tech).
_TOY: dict[str, np.ndarray] = {
    "money": np.array([1.0, 0.1, 0.0, 0.0]),
    "bank": np.array([0.7, 0.7, 0.0, 0.0]),
    "grows": np.array([0.5, 0.3, 0.1, 0.0]),
    "river": np.array([0.1, 1.0, 0.0, 0.0]),
}
#: The typed-in weights for "bank" in *money bank grows* (money, bank, grows).
NOTES_BANK = np.array([0.25, 0.70, 0.05])
#: Their other rows: "money" in *money bank grows*, "bank" in *river bank flows*.
#: Section 3's toy scores of bank in *money bank grows* (a mistake to name, not an answer).
_TOY_BANK_SCORES = np.array([0.77, 0.98, 0.56])
_NOTES_MONEY = np.array([0.70, 0.20, 0.10])
_NOTES_RIVER_BANK = np.array([0.20, 0.78, 0.02])


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
        raise ExerciseError(f"{name} should be {what}, but it is a {type(got).__name__}: {got!r:.80}") from None
    if v.size == size and v.ndim > 1 and max(v.shape) == size:   # a row or column: its numbers, in order
        v = v.reshape(size)                                           # (the hidden test reshapes it too)
    if v.shape != (size,):
        raise ExerciseError(f"{name} has shape {v.shape}; it should be {what}, shape ({size},).")
    if not np.isfinite(v).all():
        raise ExerciseError(f"{name} contains NaN or infinite values; use ordinary finite numbers.")
    return v


def _fmt(x: np.ndarray) -> str:
    return str(np.round(np.asarray(x, dtype=float), 3).tolist())


# --------------------------------------------------------------------------- exercise 2
_UNSET = object()


def check_notes_scores(notes_scores: Any) -> None:
    """Exercise 2: three scores (money, bank, grows) whose softmax is bank's typed-in row
    [0.25, 0.70, 0.05] (any constant may be added to all three: the weights only see differences)."""
    s = _vector(notes_scores, "notes_scores", 3, "three scores (for money, bank, grows)")
    w = reference_softmax(s)
    said = f"softmax of your scores is {_fmt(w)}"
    if np.allclose(w, NOTES_BANK, atol=1e-3):
        gap = s[1] - s[0]
        ln_ratio = f"{np.log(0.70 / 0.25):.3f}"
        passed(f"{said}, bank's row asked for. Bank's score is {gap:.3f} above money's, "
               + (f"ln(0.70 / 0.25) = {ln_ratio}" if f"{gap:.3f}" == ln_ratio else
                  f"close to ln(0.70 / 0.25) = {ln_ratio} (your scores are rounded)")
               + ", whatever number your three scores start from.")
        return

    def same(scores: np.ndarray) -> bool:
        return bool(np.allclose(w, reference_softmax(scores), atol=1e-3))

    if same(NOTES_BANK):
        raise ExerciseError(
            f"these are the weights themselves (or the weights plus a constant): {said}, flatter than the "
            "row asked for. Softmax exponentiates the scores, so undo it with the logarithm: np.log.")
    if same(np.exp(NOTES_BANK)):
        raise ExerciseError(
            f"you exponentiated the weights: {said}. Softmax already exponentiates; to go back from weights "
            "to scores take the logarithm (np.log), the inverse of np.exp.")
    if same(np.log10(NOTES_BANK)):
        raise ExerciseError(
            f"you used the base-10 logarithm: {said}. Softmax uses e^x, so its inverse is the natural "
            "logarithm, np.log.")
    if same(np.log2(NOTES_BANK)):
        raise ExerciseError(
            f"you used the base-2 logarithm: {said}. Softmax uses e^x, so its inverse is the natural "
            "logarithm, np.log.")
    if same(-np.log(NOTES_BANK)):
        raise ExerciseError(
            f"your scores have the wrong sign: {said}; the largest weight needs the largest score.")
    for order in itertools.permutations(range(3)):
        if order != (0, 1, 2) and same(np.log(NOTES_BANK[list(order)])):
            raise ExerciseError(
                f"your scores are in the wrong order: {said}. The order is money, bank, grows.")
    if same(np.log(_NOTES_RIVER_BANK)):
        raise ExerciseError(
            f"these give bank's row of *river bank flows*, {_fmt(_NOTES_RIVER_BANK)}: the exercise asks for "
            f"*money bank grows*, {_fmt(NOTES_BANK)}.")
    if same(np.log(_NOTES_MONEY)):
        raise ExerciseError(
            f"these give the row of *money*, {_fmt(_NOTES_MONEY)}: the exercise asks for the row of *bank*, "
            f"{_fmt(NOTES_BANK)}.")
    if same(np.log(NOTES_BANK / (1 - NOTES_BANK))):
        raise ExerciseError(
            f"you took ln(a / (1 - a)) of each weight: {said}. That is the inverse of the two-way sigmoid of "
            "section 3's figure; for a row of three the inverse of softmax is ln of each weight plus any "
            "constant.")
    if np.allclose(s, 10 * NOTES_BANK, atol=0.05) or np.allclose(s, 100 * NOTES_BANK, atol=0.5):
        raise ExerciseError(
            f"your scores are the weights scaled: {said}. Softmax is not linear: scaling the weights is not "
            "their scores. Undo the exponential with the logarithm, np.log.")
    if np.allclose(s, _TOY_BANK_SCORES, atol=0.01):
        raise ExerciseError(
            f"these are the toy vectors' scores for bank in *money bank grows*: {said}. The exercise asks for "
            f"scores that give the notes' weights, {_fmt(NOTES_BANK)}: work backwards from those weights.")
    digits = _rounded_logs(s)
    if digits is not None:   # ln(alpha_j) + a constant, rounded too coarsely
        raise ExerciseError(
            f"{said}: close, but not the row asked for, {_fmt(NOTES_BANK)}. Your scores have the right form "
            "(the logarithms of the weights, plus any constant), but they are rounded too coarsely"
            + (f" ({digits} decimal{'' if digits == 1 else 's'})" if digits >= 0 else "")
            + ": keep three decimals, or let np.log compute them.")
    factor = _log_factor(w)
    if factor is not None:
        raise ExerciseError(
            f"your scores are the logarithms of the weights times {factor:.3g}: {said}. Adding the same number "
            "to every score keeps the weights; multiplying every score by a number does not (it sharpens or "
            "flattens the row).")
    raise ExerciseError(
        f"{said}, not the row asked for, {_fmt(NOTES_BANK)}. Write the softmax formula for one weight "
        "(section 3, From scores to weights) and solve it for the score: which function undoes the exponential, and what else may the scores contain?")


def _rounded_logs(s: np.ndarray) -> int | None:
    """The number of decimals if ``s`` is ln(alpha_j) + c (c = 0, or the minus log of one weight) rounded
    to 0, 1 or 2 decimals; -1 if it lies within such rounding of ln(alpha_j) + some constant; else None."""
    logs = np.log(NOTES_BANK)
    for digits in (0, 1, 2):
        for c in (0.0, *(-logs)):
            if np.allclose(s, np.round(logs + c, digits), atol=1e-9):
                return digits
    off = s - logs
    return -1 if np.abs(off - off.mean()).max() < 0.06 else None


def _log_factor(w: np.ndarray) -> float | None:
    """c if the weights ``w`` are the notes' row raised to a power c > 0, c != 1 (the scores are c ln(alpha_j)
    plus a constant), else None."""
    got, want = np.log(w) - np.log(w).mean(), np.log(NOTES_BANK) - np.log(NOTES_BANK).mean()
    c = float(got @ want / (want @ want))
    if c > 0 and abs(c - 1) > 0.01 and np.allclose(got, c * want, atol=2e-3):
        return c
    return None


# --------------------------------------------------------------------------- exercise 3
#: *river bank flows*, rows river, bank, flows; the point bank' must land on, and the weights that put it there.
_RBF = np.array([[0.1, 1.0, 0.0, 0.0], [0.7, 0.7, 0.0, 0.0], [0.2, 0.8, 0.0, 0.0]])
_RBF_WORDS = ("river", "bank", "flows")
MIX_TARGET = np.array([0.25, 0.88, 0.0, 0.0])
_MIX_TOL = 1e-3


def _mix_words(a: np.ndarray) -> str:
    return ", ".join(f"{w} {x:.3g}" for w, x in zip(_RBF_WORDS, a, strict=True))


def check_bank_mix(alpha_mix: Any) -> None:
    """Exercise 3: bank's three weights (river, bank, flows) in *river bank flows* that put
    bank' = sum_j alpha_j x_j on [0.25, 0.88, 0, 0]. Finance and nature give two linear equations; the
    weights summing to 1 gives the third, so [0.5, 0.2, 0.3] is the only answer. Names the typical mistakes,
    computed from the weights returned."""
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
        passed(f"weights {_fmt(a)} put bank' at {_fmt(z)}. Finance and nature give two equations and the shares "
               "summing to 1 a third: three equations for three weights, so no other weights land there. All are "
               ">= 0 because the target lies inside the triangle of river, bank and flows; a point outside it "
               "would need a negative weight, which softmax never gives.")
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


# --------------------------------------------------------------------------- exercise 4
#: The toy "bank" between the two designed words, and the bars of exercise 4.
_BANK = np.array([0.7, 0.7, 0.0, 0.0])
ONE_SIDED_HIGH, ONE_SIDED_LOW, ONE_SIDED_BOUND = 0.5, 0.2, 2.0


def _toy_word(got: Any, name: str) -> np.ndarray:
    v = _to_array(got, name, empty=f"{name} has no value yet: write 4 numbers (finance, nature, food, tech).",
                  not_numbers=f"{name} should be 4 numbers, but it is a {type(got).__name__}.")
    if v.size == 4 and v.ndim > 1 and max(v.shape) == 4:   # a row or column, as the hidden test reshapes it
        v = v.reshape(4)
    if v.shape != (4,):
        raise ExerciseError(f"{name} has shape {v.shape}: give 4 numbers (finance, nature, food, tech).")
    if not np.isfinite(v).all():
        raise ExerciseError(f"{name} = {_fmt(v)} is not finite.")
    return v


def check_one_sided(x_1: Any, x_3: Any = _UNSET) -> None:
    """Exercise 4: toy vectors x_1, x_3 (every coordinate in [-2, 2]) for the sentence (x_1, bank, x_3) with
    alpha_13 > 0.5 but alpha_31 < 0.2. Both weights have the numerator e^omega_13; they differ by the row sums,
    alpha_13 / alpha_31 = S_3 / S_1. Names the typical mistakes."""
    v1 = _toy_word(x_1, "x_1")
    v3 = _toy_word(None if x_3 is _UNSET else x_3, "x_3")
    big = max(np.abs(v1).max(), np.abs(v3).max())
    if big > ONE_SIDED_BOUND + 1e-9:
        raise ExerciseError(
            f"a coordinate of {big:.3g} is beyond 2: a huge vector wins any row by brute force. Within [-2, 2] "
            "the row sums must do it: the two weights share the numerator e^omega_13, so what else differs?")
    X = np.stack([v1, _BANK, v3])
    omega = X @ X.T
    e = np.exp(omega - omega.max())
    sums = e.sum(axis=1)
    A = e / sums[:, None]
    a13, a31 = float(A[0, 2]), float(A[2, 0])
    said = f"alpha_13 = {a13:.3f}, alpha_31 = {a31:.3f}"
    ratio = sums[2] / sums[0]
    if a13 > ONE_SIDED_HIGH and a31 < ONE_SIDED_LOW:
        passed(f"{said}, though omega_13 = omega_31 = {omega[0, 2]:.2f}. Both weights are e^{omega[0, 2]:.2f} "
               f"over a row sum, so alpha_13 / alpha_31 = S_3 / S_1 = {ratio:.2f}: word 3's row holds its own "
               f"large score |x_3|^2 = {omega[2, 2]:.2f}, word 1's row only {omega[0, 0]:.2f}. Symmetric scores, "
               "one-sided weights.")
        return
    if a13 <= ONE_SIDED_HIGH and omega[0, 2] <= 0 and (v1.any() and v3.any()):
        raise ExerciseError(
            f"{said}: omega_13 = x_1 . x_3 = {omega[0, 2]:.2f} is not above 0, because x_1 "
            + ("is at right angles to x_3" if abs(omega[0, 2]) < 1e-12 else "points away from x_3")
            + f". Then e^omega_13 = {np.exp(omega[0, 2]):.2f} is at most 1, while word 1's own score "
            f"puts e^omega_11 = {np.exp(omega[0, 0]):.2f} in the same row: word 3 cannot get more than half. "
            "Point x_1 partly the way x_3 points.")
    if abs(a13 - a31) < 1e-3:
        raise ExerciseError(
            f"{said}: equal, because the two rows have equal row sums (S_1 = S_3). The weights share the "
            "numerator e^omega_13; only different row sums can make them differ.")
    if a31 > ONE_SIDED_HIGH and a13 < ONE_SIDED_LOW:
        raise ExerciseError(
            f"{said}: the roles are swapped, word 3 gives word 1 most of its row. Asked: word 1 gives word 3 "
            "more than half, word 3 gives word 1 less than 0.2.")
    zero = [name for name, v in (("x_1", v1), ("x_3", v3)) if not v.any()]
    if zero and a13 <= ONE_SIDED_HIGH:
        raise ExerciseError(
            f"{said}: {' and '.join(zero)} {'is' if len(zero) == 1 else 'are'} the zero vector, so "
            "omega_13 = x_1 . x_3 = 0 and e^omega_13 = 1, while word 1's own score gives at least e^0 = 1 in "
            "the same row: word 3 cannot get more than half. Give both words a length, x_1 pointing partly "
            "the way x_3 points.")
    if a13 <= ONE_SIDED_HIGH:
        rest = float(np.exp(omega[0, 0]) + np.exp(omega[0, 1]))
        row_1 = (f"word 1 gives word 3 only {a13:.3f}. In row 1, e^omega_13 = {np.exp(omega[0, 2]):.2f} must "
                 f"beat the rest, e^omega_11 + e^omega_12 = {rest:.2f}: word 1's own score and its score with "
                 "bank compete with word 3")
        if a31 < ONE_SIDED_LOW:
            raise ExerciseError(f"{said}: {row_1}.")
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
        + (", though x_3 already reaches the bound of 2 on one coordinate (the others can still lengthen it),"
           if np.abs(v3).max() >= ONE_SIDED_BOUND - 1e-9 else "")
        + f" and a shorter x_1 (own score |x_1|^2 = {omega[0, 0]:.2f}) keeps S_1 smaller.")


def _longer_x3_fixes_both(v1: np.ndarray, v3: np.ndarray) -> bool:
    """Whether x_3 stretched in its own direction (every coordinate still within [-2, 2]) meets both bars."""
    if not v3.any():
        return False
    for scale in np.linspace(1.0, ONE_SIDED_BOUND / np.abs(v3).max(), 41)[1:]:
        X = np.stack([v1, _BANK, scale * v3])
        omega = X @ X.T
        e = np.exp(omega - omega.max(axis=1, keepdims=True))
        A = e / e.sum(axis=1, keepdims=True)
        if A[0, 2] > ONE_SIDED_HIGH and A[2, 0] < ONE_SIDED_LOW:
            return True
    return False


# --------------------------------------------------------------------------- exercise 1: every word's z_i
def _forward_cases() -> list[tuple[str, np.ndarray]]:
    """The inputs the check feeds: the toy sentence of section 4, T < d_model and T > d_model (so a (T, T)
    result cannot pass for a (T, d_model) one), and scores in the hundreds (a softmax without the shift
    overflows there)."""
    rng = np.random.default_rng(2)
    toy = np.stack([np.array(v, dtype=float) for v in (
        [0.1, 0.1, 0.1, 0.1], [0.7, 0.7, 0.0, 0.0], [0.0, 0.3, 0.0, 0.1], [0.2, 0.1, 0.0, 0.1],
        [0.1, 1.0, 0.0, 0.0])])
    return [("the toy sentence *a bank near the river* (T = 5, d_model = 4)", toy),
            ("a random X of shape (3, 6)", rng.normal(size=(3, 6))),
            ("a random X of shape (6, 2)", rng.normal(size=(6, 2))),
            ("a random X of shape (4, 3) with scores in the hundreds", 20.0 * rng.normal(size=(4, 3)))]


def _forward_reference(X: np.ndarray) -> np.ndarray:
    return reference_softmax(X @ X.T, axis=-1) @ X


def _forward_mistakes(X: np.ndarray) -> list[tuple[np.ndarray, str]]:
    """Each plausible wrong result for input X, with the words that name its mistake."""
    O = X @ X.T                                   # (T, T) scores
    A = reference_softmax(O, axis=-1)             # (T, T) weights, rows sum to 1
    with np.errstate(all="ignore"):
        E = np.exp(O)
        by_sum = O / O.sum(axis=1, keepdims=True)
    T = len(X)
    norms = np.linalg.norm(X, axis=1)
    Zr = A @ X
    return [
        (Zr.T, "Z is transposed: it has shape (d_model, T). Row i of Z must be word i's vector z_i"),
        (A, "these are the weights alpha_ij (T, T), step 2. Step 3 is still to do: row i of Z is the sum of "
            "the vectors x_j, each times its weight"),
        (O, "these are the scores omega_ij (T, T), step 1 only. Softmax each row into weights, then sum the "
            "vectors with those weights"),
        (A @ O, "you weighted the scores, not the vectors: step 3 sums the vectors x_j (rows of X), each "
                "times its weight, so each z_i has d_model numbers"),
        ((A * O).sum(axis=1), "you weighted the scores, not the vectors: step 3 sums the vectors x_j (rows "
                              "of X), each times its weight, so each z_i has d_model numbers"),
        (O @ X, "you used the scores themselves as the weights and forgot the softmax: they are neither >= 0 "
                "nor summing to 1 (section 2)"),
        (E @ X, "you took e^omega but never divided by the row's sum, so the weights do not sum to 1: that "
                "division is the second half of softmax"),
        (by_sum @ X, "you divided the scores by their row's sum without exponentiating first: a negative "
                     "score then gets a negative \"share\" (section 2). Softmax takes e^omega first"),
        (A.T @ X, "your softmax normalised each column of the scores, not each row: word i's weights are row "
                  "i, alpha_i1 ... alpha_iT, and it is each row that must sum to 1 (sa.softmax's default "
                  "axis=-1 does rows)"),
        (reference_softmax(O.reshape(-1)).reshape(T, T) @ X,
         "your softmax ran over the whole (T, T) matrix of scores at once, so all T * T weights sum to 1 "
         "together; each word's row must sum to 1 on its own"),
        (np.full((T, T), 1.0 / T) @ X, "every row is the plain average of the words (weights 1/T, lesson 01): "
                                       "the weights must come from the scores, through softmax"),
        (reference_softmax(O / np.outer(norms, norms), axis=-1) @ X,
         "your scores are cosines, but omega_ij = x_i . x_j is the dot product: a vector's length counts "
         "too (section 2)"),
        (reference_softmax(O / np.sqrt(X.shape[1]), axis=-1) @ X,
         "you divided the scores by sqrt(d_model): that scaling comes with lesson 06; basic self-attention "
         "takes the dot products as they are"),
        (np.diag(A)[:, None] * X, "each row of your Z is the word's own vector times its own weight alpha_ii: "
                                  "step 3 sums over every word j, alpha_ij x_j"),
        (X, "Z equals X: every word kept its static vector. Each z_i must mix all the words' vectors"),
        (X @ reference_softmax(X.T @ X, axis=-1), "your scores compare coordinates (X^T X is d_model x "
                                                  "d_model), not words: omega_ij = x_i . x_j is X X^T, "
                                                  "shape (T, T)"),
    ]


def check_contextual_vectors(contextual_vectors: Callable[[np.ndarray], Any]) -> None:
    """Exercise 1: ``contextual_vectors(X)``, X (T, d_model) -> Z (T, d_model), row i = z_i =
    sum_j softmax_j(x_i . x_j) x_j, the three steps of section 4 for every word; no ready-made attention."""
    from .lesson03 import ReadyMadeCalled, ready_made, ready_made_blocked

    name = "contextual_vectors"
    if not callable(contextual_vectors):
        raise ExerciseError(f"{name} should be a function of X, but it is a {type(contextual_vectors).__name__}: "
                            "run the cell that defines it.")
    shortcut = ready_made(contextual_vectors)
    if shortcut is not None:
        raise ExerciseError(f"{name} calls {shortcut}, a ready-made attention: the exercise asks you to write "
                            "the three steps (scores, softmax, weighted sum) yourself; sa.softmax is allowed.")
    for what, X in _forward_cases():
        try:
            with np.errstate(all="ignore"), ready_made_blocked():
                got = contextual_vectors(X.copy())
        except ReadyMadeCalled:
            raise ExerciseError(f"{name} reached a ready-made attention while it ran: write the three steps "
                                "yourself; sa.softmax is allowed.") from None
        except Exception as exc:  # noqa: BLE001  (the learner's code may raise anything)
            from ._engine import _learner_line
            raise ExerciseError(f"{name} raised {type(exc).__name__}{_learner_line(exc)} on {what}: "
                                f"{exc}") from None
        if got is None:
            raise ExerciseError(f"{name} returns None: end it with `return Z`.")
        if isinstance(got, tuple):
            raise ExerciseError(f"{name} returns a tuple of {len(got)}; return Z alone, shape (T, d_model).")
        try:
            Z = np.asarray(got.detach().cpu().numpy() if hasattr(got, "detach") else got, dtype=float)
        except (TypeError, ValueError):
            raise ExerciseError(f"{name} returns a {type(got).__name__}, not an array of numbers.") from None
        want = _forward_reference(X)
        if Z.shape == want.shape and np.isfinite(Z).all() and np.allclose(Z, want, atol=1e-6):
            continue
        for wrong, why in _forward_mistakes(X):
            if Z.shape == wrong.shape and np.isfinite(Z).all() and np.allclose(Z, wrong, atol=1e-6):
                raise ExerciseError(f"On {what}, {why}.")
        T, d = X.shape
        if Z.shape == want.shape and np.isfinite(Z).all():   # each row a multiple of z_i: weights not summing to 1
            c = np.einsum("td,td->t", Z, want) / np.einsum("td,td->t", want, want)
            if np.allclose(Z, c[:, None] * want, atol=1e-6) and (c > 0).all() and not np.allclose(c, 1.0):
                raise ExerciseError(
                    f"On {what}, each row of your Z is z_i times a number other than 1 (row 1 times "
                    f"{c[0]:.3g}): the weights are right in ratio but do not sum to 1. Divide the "
                    "exponentials by their row's sum: the second half of softmax.")
        if Z.shape == (d,) and any(np.allclose(Z, row, atol=1e-6) for row in want):
            raise ExerciseError(f"On {what}, {name} returns one word's vector, shape ({d},): Z must hold every "
                                f"word's z_i, one row each, shape ({T}, {d}).")
        if Z.shape != want.shape:
            raise ExerciseError(f"On {what}, {name} returns shape {Z.shape}; Z must have one row z_i per word, "
                                f"shape (T, d_model) = ({T}, {d}).")
        if not np.isfinite(Z).all():
            bad = sorted({int(r) + 1 for r in np.argwhere(~np.isfinite(Z))[:, 0]})
            raise ExerciseError(
                f"On {what}, rows {bad} of Z hold nan or inf: e^omega of a score in the hundreds overflows "
                "(section 3). Subtract each row's largest score first, or use sa.softmax, which does.")
        if not np.abs(Z).any():
            raise ExerciseError(f"{name} returns all zeros on {what}: fill in Z's rows.")
        wrong_rows = [int(r) + 1 for r in range(T) if not np.allclose(Z[r], want[r], atol=1e-6)]
        raise ExerciseError(
            f"On {what}, rows {wrong_rows} of your Z are not sum_j softmax_j(x_i . x_j) x_j (rows counted from "
            "1). Check each step for one of those words: its scores x_i . x_j over every j, their softmax, then "
            "the weighted sum of the rows of X.")
    passed(f"{name} gives every word its z_i on {len(_forward_cases())} inputs, scores in the hundreds included: "
           "each row took its own softmax over its own T scores, and row 2 of the toy sentence is section 4's z_2.")
