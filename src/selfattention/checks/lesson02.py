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


_UNSET = object()


# --------------------------------------------------------------------------- exercise 2
#: *river bank flows*, rows river, bank, flows; the point bank' must land on, and the weights that put it there.
_RBF = np.array([[0.1, 1.0, 0.0, 0.0], [0.7, 0.7, 0.0, 0.0], [0.2, 0.8, 0.0, 0.0]])
_RBF_WORDS = ("river", "bank", "flows")
MIX_TARGET = np.array([0.25, 0.88, 0.0, 0.0])
_MIX_TOL = 1e-3


def _mix_words(a: np.ndarray) -> str:
    return ", ".join(f"{w} {x:.3g}" for w, x in zip(_RBF_WORDS, a, strict=True))


def check_bank_mix(alpha_mix: Any) -> None:
    """Exercise 2: bank's three weights (river, bank, flows) in *river bank flows* that put
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
               "would need a negative weight, which softmax never gives. Which scores would give these weights? "
               "omega_j = ln alpha_j + c, so bank's own score would have to be the lowest, which these vectors' dot products cannot give "
               "(bank . bank = 0.98 beats river 0.77 and flows 0.70); lesson 04's projections can.")
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
                  not_numbers=f"{name} should be 4 numbers, but it is a {type(got).__name__}.")
    if v.size == 4 and v.ndim > 1 and max(v.shape) == 4:   # a row or column, as the hidden test reshapes it
        v = v.reshape(4)
    if v.shape != (4,):
        raise ExerciseError(f"{name} has shape {v.shape}: give 4 numbers (finance, nature, food, tech).")
    if not np.isfinite(v).all():
        raise ExerciseError(f"{name} = {_fmt(v)} is not finite.")
    return v


def check_one_sided(x_1: Any, x_3: Any = _UNSET) -> None:
    """Exercise 3: toy vectors x_1, x_3 (each of length at most 2) for the sentence (x_1, bank, x_3) with
    alpha_13 > 0.5 but alpha_31 < 0.2. Both weights have the numerator e^omega_13; they differ by the row sums,
    alpha_13 / alpha_31 = S_3 / S_1. Names the typical mistakes."""
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


# --------------------------------------------------------------------------- exercise 1: the tie length
#: Exercise 1's derivation: word 1 is x_1 = [2, 0]; word 2 is L [cos 60 deg, sin 60 deg].
TIE_X1_LENGTH, TIE_ANGLE = 2.0, np.pi / 3


def _tie_length(L_tie: Any) -> str:
    """Exercise 1's derivation: the length L of x_2 = L [cos 60 deg, sin 60 deg] at which omega_12 = omega_11
    for x_1 = [2, 0], i.e. |x_1| L cos 60 deg = |x_1|^2, L = |x_1| / cos 60 deg. Returns the sentence for the
    success line, or raises an ExerciseError that names the mistake (never the value)."""
    name = "L_tie"
    if L_tie is None or L_tie is Ellipsis:
        raise ExerciseError(f"{name} has no value yet: replace `None` with the length L you derived (a number).")
    if isinstance(L_tie, str):
        raise ExerciseError(f"{name} is text (a string), {L_tie!r:.40}, not a number: write the number itself, "
                            "without quotes.")
    L = _to_array(L_tie, name, not_numbers=f"{name} should be one number, but it is a {type(L_tie).__name__}.")
    if L.size != 1:
        raise ExerciseError(f"{name} has shape {L.shape}: it should be one number, the length L of x_2.")
    L = float(L.reshape(-1)[0])
    if not np.isfinite(L):
        raise ExerciseError(f"{name} is {L}: use an ordinary finite number.")
    n1, c = TIE_X1_LENGTH, np.cos(TIE_ANGLE)
    right = n1 / c
    omega_11, omega_12 = n1 ** 2, n1 * L * c
    said = f"{name} = {L:.4g}"
    if abs(L - right) < 1e-3:
        return (f"L_tie = {L:.3f}: omega_12 = |x_1| L cos 60 deg = {n1:g} x {L:.3f} x {c:.1f} = {omega_12:.3f} "
                f"equals omega_11 = |x_1|^2 = {omega_11:.3f}, so alpha_12 = alpha_11; a longer x_2 wins word 1's "
                "row. "
                "In general a neighbour j outscores word i itself when x_i . x_j > |x_i|^2, that is "
                "when |x_j| cos(theta_ij) > |x_i|.")

    def near(value: float) -> bool:
        return abs(L - value) < 1e-3

    if near(n1):
        raise ExerciseError(
            f"{said} makes x_2 as long as x_1, but equal lengths tie the scores only when the words point the same "
            "way: at 60 degrees, omega_12 = |x_1| L cos 60 deg falls short of |x_1|^2. Keep the cosine in omega_12 "
            "and solve omega_12 = omega_11 for L.")
    if near(n1 * c):
        raise ExerciseError(
            f"{said}: you multiplied by cos 60 deg where solving needs a division: from |x_1| L cos 60 deg = "
            "|x_1|^2, divide both sides by |x_1| cos 60 deg.")
    if near(n1 ** 2 / c):
        raise ExerciseError(
            f"{said}: you set L cos 60 deg equal to omega_11 = |x_1|^2, leaving out the factor |x_1| of "
            "omega_12 = |x_1| |x_2| cos theta_12.")
    if near(n1 / np.sin(TIE_ANGLE)):
        raise ExerciseError(
            f"{said}: you used sin 60 deg. A score is the two lengths times the cosine of the angle between the "
            "words, omega_12 = |x_1| |x_2| cos theta_12.")
    if near(n1 / np.cos(60.0)) or near(abs(n1 / np.cos(60.0))):
        raise ExerciseError(
            f"{said}: np.cos(60) reads 60 as radians (about 3438 degrees). 60 degrees is np.radians(60), "
            "or np.pi / 3.")
    raise ExerciseError(
        f"{said}: then omega_12 = |x_1| L cos 60 deg = {omega_12:.3f} and omega_11 = |x_1|^2 = {omega_11:.3f} do not "
        "tie. Write both scores for x_1 = [2, 0] and x_2 = L [cos 60 deg, sin 60 deg] and solve "
        "omega_12 = omega_11 for L.")


# --------------------------------------------------------------------------- exercise 1: river's row by hand
#: *the river flows near a bank*, toy table; the focus is word 2, river (index 1).
_TRFNAB_WORDS = ("the", "river", "flows", "near", "a", "bank")
_TRFNAB = np.array([[0.2, 0.1, 0.0, 0.1], [0.1, 1.0, 0.0, 0.0], [0.2, 0.8, 0.0, 0.0], [0.0, 0.3, 0.0, 0.1],
                    [0.1, 0.1, 0.1, 0.1], [0.7, 0.7, 0.0, 0.0]])
_RIVER = 1
_ROW_TOL = 1e-3


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, atol=_ROW_TOL))


def _river_scores(got: Any) -> np.ndarray:
    X, T = _TRFNAB, len(_TRFNAB_WORDS)
    if got is not None and not isinstance(got, str) and np.shape(got) == (T, T):
        raise ExerciseError("omega_river has shape (6, 6): every word's scores, the whole matrix. Give river's "
                            "row only: its 6 scores omega_2j = x_2 . x_j, shape (6,).")
    if got is not None and not isinstance(got, str) and np.size(got) == T - 1:
        raise ExerciseError("omega_river holds 5 scores: river's own score x_2 . x_2 is left out. River's row has "
                            "one score for every word of the sentence, river included: 6.")
    o = _vector(got, "omega_river", T, "river's 6 scores, one per word of the sentence")
    if _close(o, X @ X[_RIVER]):
        return o
    for k in range(T):
        if k != _RIVER and _close(o, X @ X[k]):
            raise ExerciseError(
                f"omega_river {_fmt(o)} are the scores of word {k + 1}, {_TRFNAB_WORDS[k]!r}, not of river"
                + (": Python counts from 0, so river, word 2, is row index 1." if k == 2 else
                   ". River is word 2, row index 1 of the sentence's matrix."))
    n = np.linalg.norm(X, axis=1)
    if _close(o, X @ X[_RIVER] / (n * n[_RIVER])):
        raise ExerciseError(
            f"omega_river {_fmt(o)} are cosines, not scores: a score is the dot product x_2 . x_j, which keeps "
            "both lengths (lesson 01's cosine divides them out).")
    raise ExerciseError(
        f"omega_river {_fmt(o)} are not river's scores: entry j should be x_2 . x_j, river's vector (row index 1) "
        "dotted with word j's, for all 6 words in order.")


def _river_weights(got: Any, omega: np.ndarray) -> np.ndarray:
    X, T = _TRFNAB, len(_TRFNAB_WORDS)
    right = reference_softmax(omega)
    if got is not None and not isinstance(got, str) and np.size(got) == T - 1:
        raise ExerciseError(
            "alpha_river holds 5 weights: river's own weight is left out. Softmax runs over all T = 6 words, "
            "river included (its own score is usually its largest).")
    a = _vector(got, "alpha_river", T, "river's 6 weights, one per word")
    if _close(a, right):
        return a
    said = f"alpha_river {_fmt(a)}"
    if a.shape == right.shape and np.allclose(a, right, atol=0.006):
        raise ExerciseError(f"{said} are river's softmax weights rounded to 2 decimals (so they sum to "
                            f"{a.sum():.3f}): keep 3 decimals or more, or use the array you computed.")
    if _close(a, omega):
        raise ExerciseError(f"{said} are the scores themselves: scores used as weights, with no softmax. They "
                            f"sum to {a.sum():.3f}, not 1; take e^omega_2j and divide by the row's sum.")
    if omega.sum() and _close(a, omega / omega.sum()):
        raise ExerciseError(f"{said}: the scores divided by their sum, not a softmax. Exponentiate first, "
                            "e^omega_2j, then divide by the sum of the e^omega_2k.")
    full = reference_softmax(X @ X.T, axis=-1)
    if _close(a, full[:, _RIVER]):
        raise ExerciseError(
            f"{said} sum to {a.sum():.3f}, not 1: they are a column of the weight matrix, the weights the other "
            "words give river (a transposed matrix, or a softmax over the wrong axis). River's weights are its "
            "own row: the softmax of river's 6 scores, which sums to 1.")
    others = [k for k in range(T) if k != _RIVER]
    left_out = np.zeros(T)
    left_out[others] = reference_softmax(omega[others])
    if _close(a, left_out):
        raise ExerciseError(f"{said}: river's own score is left out of the softmax (its weight is 0). The sum "
                            "runs over all T = 6 words, river included.")
    if abs(a.sum() - 1) >= _ROW_TOL:
        raise ExerciseError(f"{said} sum to {a.sum():.3f}, not 1: weights are shares. Take the softmax of "
                            "omega_river: e^omega_2j over the sum of e^omega_2k.")
    raise ExerciseError(f"{said} sum to 1 but are not the softmax of omega_river: weight j should be "
                        "e^omega_2j divided by the sum of e^omega_2k over the 6 words.")


def _river_vector(got: Any, omega: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    X, T = _TRFNAB, len(_TRFNAB_WORDS)
    if got is not None and not isinstance(got, str) and np.shape(got) == (T,):
        z6 = np.asarray(got, dtype=float)
        if _close(z6, (alpha[:, None] * X).sum(axis=1)) or _close(z6, X @ alpha[:4]):
            raise ExerciseError(
                f"z_river {_fmt(z6)} has 6 numbers, one per word: you summed over the wrong axis, over each "
                "word's coordinates. z_2 = sum_j alpha_2j x_j sums over the words j, leaving the 4 coordinates.")
        raise ExerciseError("z_river has 6 numbers, one per word; it should be a vector of the toy table, "
                            "4 coordinates (finance, nature, food, tech): sum over the words j.")
    z = _vector(got, "z_river", 4, "river's contextual vector, 4 coordinates")
    if _close(z, alpha @ X):
        return z
    said = f"z_river {_fmt(z)}"
    if _close(z, omega @ X):
        raise ExerciseError(f"{said} weights the words by their scores, not by alpha_river: the sum needs the shares.")
    if _close(z, alpha @ X - alpha[_RIVER] * X[_RIVER]):
        raise ExerciseError(f"{said}: river's own vector is left out of the sum. j runs over all 6 words, "
                            f"river included, with its weight {alpha[_RIVER]:.3f}.")
    if _close(z, X.mean(axis=0)):
        raise ExerciseError(f"{said} is the plain average of the 6 vectors: equal weights. Weight word j by "
                            "alpha_2j.")
    raise ExerciseError(f"{said} is not sum_j alpha_2j x_j: multiply each word's vector by its weight and add "
                        "the 6 products.")


def check_river_row(omega_river: Any, alpha_river: Any = _UNSET, z_river: Any = _UNSET,
                    L_tie: Any = _UNSET) -> None:
    """Exercise 1: river's row in *the river flows near a bank* (toy table), computed step by step: its scores
    ``omega_river`` (6,), weights ``alpha_river`` (6,) and contextual vector ``z_river`` (4,); then ``L_tie``,
    the length of x_2 = L [cos 60 deg, sin 60 deg] at which its score with x_1 = [2, 0] ties x_1's own (checked
    when given). Each step is judged on the learner's own previous step, so a mistake is named where it is."""
    omega = _river_scores(omega_river)
    alpha = _river_weights(None if alpha_river is _UNSET else alpha_river, omega)
    z = _river_vector(None if z_river is _UNSET else z_river, omega, alpha)
    tie = "" if L_tie is _UNSET else " " + _tie_length(L_tie)
    order = np.argsort(-alpha)
    top = ", ".join(f"{_TRFNAB_WORDS[k]} {alpha[k]:.3f}" for k in order[:3])
    passed(f"river's weights, largest first: {top}. Its own score |x_2|^2 = {omega[_RIVER]:.2f} is the largest, "
           f"flows ({omega[2]:.2f}) and bank ({omega[5]:.2f}) close behind, so no weight reaches 0.3 and "
           f"z_river = {_fmt(z)} mixes nature with some finance.{tie}")
