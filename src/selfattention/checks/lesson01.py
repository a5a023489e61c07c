"""Checks for lesson 01 (static embeddings): a vector on which the dot product and the cosine disagree, four
rankings of neighbours, and the share of "river" that tips "bank" towards the river sense."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from ._engine import ExerciseError, passed

__all__ = ["check_dot_cosine_disagree", "check_rankings", "check_river_share"]

# The lesson's hand-checkable 2-D vectors: A . C = 11, B . C = 26.
_A, _B, _C = np.array([1.0, 4.0]), np.array([4.0, 7.0]), np.array([3.0, 2.0])


DISAGREE_MIN_COS = 0.95  # exercise 1: cos(D, C) must exceed this while D . C = A . C


def _reference_cosine(u: np.ndarray, v: np.ndarray) -> float:
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


def _rounding_hint(dot: float, target: float) -> str:
    if abs(dot - target) < 0.05:
        return (" within 1e-6; yours is off by a little, most likely because its numbers were rounded: compute D "
                "with NumPy instead of typing rounded decimals")
    return ""


def check_dot_cosine_disagree(D: Any) -> None:
    """Exercise 1: a (2,) vector D with D . C = A . C = 11 but cos(D, C) > 0.95 (A's cosine is 0.740)."""
    if D is None or D is Ellipsis:
        raise ExerciseError("D has no value yet: set it to a NumPy array of two numbers.")
    try:
        d = np.asarray(D, dtype=float)
    except (TypeError, ValueError):
        raise ExerciseError(f"D should be two numbers, but it is a {type(D).__name__}: {D!r:.80}") from None
    if d.shape != _C.shape:
        raise ExerciseError(f"D has shape {d.shape}; it lives in the same 2-D plane as A and C, shape (2,).")
    if not np.all(np.isfinite(d)):
        raise ExerciseError(f"D = {d.tolist()} contains NaN or infinity; use two ordinary numbers.")
    target = float(_A @ _C)
    dot = float(d @ _C)
    cos = _reference_cosine(d, _C) if np.linalg.norm(d) > 0 else 0.0
    if np.allclose(d, _A):
        raise ExerciseError(f"D is A itself: the dot product is right ({target:g}) but the cosine is A's, {cos:.3f}; "
                            "turn D towards C, and change its length so that D . C stays 11.")
    if not np.isclose(dot, target, rtol=0, atol=1e-6):
        if cos > 1 - 1e-9:
            raise ExerciseError(f"D points exactly along C (cosine 1), but D . C = {dot:.6g}, not {target:g}: "
                                f"scale it so that D . C = {target:g}{_rounding_hint(dot, target)}.")
        raise ExerciseError(f"D . C = {dot:.6g}, but it must equal A . C = {target:g} (the same dot product as A)"
                            f"{_rounding_hint(dot, target)}.")
    if cos <= DISAGREE_MIN_COS:
        raise ExerciseError(f"D . C = {target:g} as asked, but cos(D, C) = {cos:.3f}; it must be above "
                            f"{DISAGREE_MIN_COS}: turn D more towards C, keeping D . C = {target:g}.")
    shorter = "shorter" if np.linalg.norm(d) < np.linalg.norm(_A) else "longer"
    passed(f"D . C = {dot:.3f} = A . C, but cos(D, C) = {cos:.3f} against cos(A, C) = {_reference_cosine(_A, _C):.3f}; "
           f"|D| = {np.linalg.norm(d):.3f} is {shorter} than |A| = {np.linalg.norm(_A):.3f}.")


# Exercise 2's toy table: the neighbours of "bank" = [1, 1] among six words. "giant" is long and points elsewhere,
# "dust" is tiny (length 0.0145) and points almost exactly like "bank".
_TOY_WORDS = ["money", "cash", "river", "giant", "shore", "dust"]
_TOY_ROWS = np.array([[1.0, 0.2], [0.9, 0.4], [0.1, 1.0], [6.0, -1.5], [0.5, 1.0], [1e-2, 1.05e-2]])
_TOY_BANK = np.array([1.0, 1.0])
_MEASURES = {  # name -> (what it is, score of each word: higher is nearer)
    "by_dot": ("the plain dot product", _TOY_ROWS @ _TOY_BANK),
    "by_cosine": ("the cosine", _TOY_ROWS @ _TOY_BANK / (np.linalg.norm(_TOY_ROWS, axis=1) * np.linalg.norm(_TOY_BANK))),
    "by_distance": ("the Euclidean distance between the rows as given", -np.linalg.norm(_TOY_ROWS - _TOY_BANK, axis=1)),
    "by_unit_distance": ("the distance between the rows scaled to length 1",
                         -np.linalg.norm(_TOY_ROWS / np.linalg.norm(_TOY_ROWS, axis=1, keepdims=True)
                                         - _TOY_BANK / np.linalg.norm(_TOY_BANK), axis=1)),
}


def _top(name: str, k: int = 3, farthest: bool = False) -> list[str]:
    scores = _MEASURES[name][1]
    order = np.argsort(scores if farthest else -scores, kind="stable")
    return [_TOY_WORDS[j] for j in order[:k]]


def _as_words(got: Any, name: str) -> list[str]:
    if got is None or got is Ellipsis:
        raise ExerciseError(f"{name} has no value yet: set it to a list of three words, nearest first.")
    if isinstance(got, np.ndarray):
        got = got.tolist()
    if isinstance(got, str) or not isinstance(got, (list, tuple)):
        raise ExerciseError(f"{name} should be a list of three words such as ['money', 'cash', 'river'], but it is "
                            f"a {type(got).__name__}.")
    words = [str(w).strip().lower() if isinstance(w, str) else w for w in got]
    unknown = [w for w in words if w not in _TOY_WORDS and w != "bank"]
    if unknown:
        raise ExerciseError(f"{name} holds {unknown[0]!r}, which is not a word of the toy table "
                            f"({', '.join(_TOY_WORDS)}).")
    return words


def _judge(name: str, words: list[str]) -> None:
    what, _ = _MEASURES[name]
    expected = _top(name)
    if words == expected:
        return
    if "bank" in words:
        raise ExerciseError(f"{name} holds 'bank' itself: every measure ranks a word nearest to itself, so leave "
                            "it out and list the three nearest OTHER words.")
    if len(words) != 3:
        raise ExerciseError(f"{name} holds {len(words)} words; it should hold the three nearest, nearest first.")
    for other in _MEASURES:
        if other != name and words == _top(other) and _top(other) != expected:
            raise ExerciseError(f"{name} = {words} is the ranking by {_MEASURES[other][0]}, not by {what}; "
                                + _WHY[name])
    if words == _top(name, farthest=True):
        raise ExerciseError(f"{name} = {words} lists the three FARTHEST words by {what}; nearest means the "
                            + ("smallest distance." if "distance" in name else "largest score."))
    if sorted(words) == sorted(expected):
        raise ExerciseError(f"{name} has the right three words in the wrong order; list the nearest first.")
    raise ExerciseError(f"{name} = {words} is not the ranking by {what}; " + _WHY[name])


_WHY = {
    "by_dot": "the dot product grows with the lengths, so a long row can win while pointing elsewhere.",
    "by_cosine": "the cosine divides both lengths out and keeps only the direction, however short a row is.",
    "by_distance": "the distance counts a difference in length as much as one in direction, so very short and "
                   "very long rows are both far.",
    "by_unit_distance": "for rows of length 1, |u - v|^2 = |u|^2 + |v|^2 - 2 u . v = 2 - 2 cos(u, v): work out "
                        "which of the other rankings that gives.",
}


def check_rankings(by_dot: Any, by_cosine: Any, by_distance: Any, by_unit_distance: Any) -> None:
    """Exercise 2: the three nearest neighbours of "bank" in the toy table by four measures, nearest first.

    Each list is judged on its own: "bank" itself kept, the ranking of another measure, the three farthest
    words, the right words in the wrong order, or a wrong length are each named.
    """
    given = {"by_dot": by_dot, "by_cosine": by_cosine, "by_distance": by_distance,
             "by_unit_distance": by_unit_distance}
    for name, got in given.items():
        _judge(name, _as_words(got, name))
    passed("by dot product " + ", ".join(_top("by_dot")) + "; by cosine " + ", ".join(_top("by_cosine"))
           + "; by distance " + ", ".join(_top("by_distance")) + "; by distance between unit rows "
           + ", ".join(_top("by_unit_distance")) + ". Why: the dot product puts \"giant\" first, over four times "
           "longer than \"bank\" though it points 59 degrees away; the cosine puts the tiny \"dust\" first, as it "
           "points almost exactly like \"bank\"; the distance buries both (\"dust\" sits near the origin, 1.4 from "
           "\"bank\") and brings in \"money\", as it asks for the same length and direction. For rows of length 1, "
           "|u - v|^2 = 2 - 2 cos(u, v), so (d) is the cosine's list. Were your predictions right?")


# ---- exercise 3: the share w of "river" at which (1 - w) bank + w river is as close to river as to money


@lru_cache(maxsize=1)
def _river_share_values() -> dict[str, float]:
    """The right crossing and the values that typical mistakes give, from the lesson's table (float64)."""
    from ..data import load_static_embeddings

    table = load_static_embeddings()
    b, r, m = (table.vector(w).astype(np.float64) for w in ("bank", "river", "money"))

    def unit(x: np.ndarray) -> np.ndarray:
        return x / np.linalg.norm(x)

    def crossing(d: np.ndarray) -> float:  # where the straight line (1 - w) b.d + w r.d crosses 0
        return float(b @ d / (b @ d - r @ d))

    right = crossing(unit(r) - unit(m))
    # the w at which cos(z, river) reaches the static cos(bank, money), found by bisection
    target, lo, hi = float(unit(b) @ unit(m)), 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        z = (1 - mid) * b + mid * r
        lo, hi = (mid, hi) if float(unit(z) @ unit(r)) < target else (lo, mid)
    # Euclidean: |z - r| <= |z - m| once z . (r - m) >= (|r|^2 - |m|^2) / 2, a straight line in w too
    half = float(r @ r - m @ m) / 2
    euclid = float((half - b @ (r - m)) / (r @ (r - m) - b @ (r - m)))
    d = unit(r) - unit(m)
    unit_mix = float(unit(b) @ d / (unit(b) @ d - unit(r) @ d))  # z mixes the unit rows of bank and river
    # the lesson's sense test after the exercise: the first w on a grid of 0.001 at which z leans to ten river
    # words over ten finance words (mean cosine), about 0.46
    river_side = ["shore", "stream", "water", "lake", "canal", "creek", "flood", "muddy", "fishing", "riverside"]
    finance = ["loan", "cash", "deposit", "mortgage", "credit", "finance", "loans", "savings", "account", "payment"]
    grid = np.linspace(0, 1, 1001)
    zs = (1 - grid)[:, None] * b + grid[:, None] * r
    zs = zs / np.linalg.norm(zs, axis=1, keepdims=True)

    def mean_unit(words: list[str]) -> np.ndarray:
        return np.mean([unit(table.vector(x).astype(np.float64)) for x in words], axis=0)

    lean = zs @ mean_unit(river_side) - zs @ mean_unit(finance)
    sense = float(grid[np.argmax(lean >= 0)])
    return {"right": right, "raw": crossing(r - m), "sense test": sense, "bank share": 1 - right, "static money": (lo + hi) / 2,
            "euclid": euclid, "unit mix": unit_mix,
            "grid 0.05": float(np.ceil(right / 0.05) * 0.05), "grid 0.01": float(np.ceil(right / 0.01) * 0.01)}


RIVER_SHARE_TOLERANCE = 1e-3  # three decimals, as the exercise asks
_MISTAKE_TOLERANCE = 3e-4  # the named mistakes lie at least 1.6e-3 from one another and from the right value


def check_river_share(w_river: Any) -> None:
    """Exercise 3: the smallest w in [0, 1] at which z(w) = (1 - w) x_bank + w x_river is at least as close to
    x_river as to x_money by cosine (about 0.137), within 0.001.

    Named mistakes: 0.5 (a guess), the crossing of dot products with the raw rows of river and money, bank's
    share 1 - w, the w at which cos(z, river) reaches the static cos(bank, money), the crossing by Euclidean
    distance, the crossing for a mix of unit rows, a search on a grid of 0.05, the sense test's
    tipping point (0.46, read ahead), and the crossing to two decimals (rounded, or a grid of 0.01: both give 0.14).
    """
    if w_river is None or w_river is Ellipsis:
        raise ExerciseError("w_river has no value yet: replace None with your number (or the code that computes "
                            "it).")
    if isinstance(w_river, (str, bytes)) or (hasattr(w_river, "__len__") and np.size(w_river) != 1):
        raise ExerciseError(f"w_river should be one number, but it is a {type(w_river).__name__}: {w_river!r:.80}")
    try:
        w = float(np.asarray(w_river, dtype=float).reshape(()))
    except (TypeError, ValueError):
        raise ExerciseError(f"w_river should be one number, but it is a {type(w_river).__name__}: "
                            f"{w_river!r:.80}") from None
    if not np.isfinite(w):
        raise ExerciseError(f"w_river = {w}: use an ordinary number between 0 and 1.")
    values = _river_share_values()
    right = values["right"]
    if abs(w - right) < RIVER_SHARE_TOLERANCE:
        passed(f"w = {right:.3f}: with {right:.1%} of river mixed in, z is as close to river as to money "
               f"(your value {w:.4f}). Well under 0.5, partly because z is judged against the very word mixed "
               "into it; below, the lesson judges it by other river words.")
        return
    if not 0.0 <= w <= 1.0:
        raise ExerciseError(f"w_river = {w:.4g} is outside [0, 1]: w is the share of river in z, between 0 "
                            "(all bank) and 1 (all river).")
    hints = {
        "0.5": (0.5, "0.5 is a guess, and the crossing is not at half the mix: the numerator z . (r_hat - "
                     "m_hat) is a straight line in w; find where it crosses 0."),
        "raw": (values["raw"], "it is where the dot products with the raw rows of river and money are equal. The "
                               "cosine divides by their lengths too: use r_hat and m_hat, the rows scaled to "
                               "length 1."),
        "bank share": (values["bank share"], "that is bank's share, 1 - w, where z is as close to river as to "
                                             "money; w is the share of river."),
        "static money": (values["static money"], "it is where cos(z, river) reaches the static cos(bank, money) = "
                                                 "0.398. But cos(z, money) changes with w too: compare cos(z, "
                                                 "river) with cos(z, money) of the same z."),
        "euclid": (values["euclid"], "it is where z becomes as near to river as to money by Euclidean distance, "
                                     "which counts the lengths of the rows too; the exercise asks for the cosine."),
        "unit mix": (values["unit mix"], "it is the crossing for a mix of bank and river scaled to length 1; z "
                                         "mixes the rows themselves, z(w) = (1 - w) x_bank + w x_river."),
        "sense test": (values["sense test"], "that is where z tips to the river sense judged by other river words, "
                                             "the test after the exercise. The exercise asks for the crossing by "
                                             "cosine with river and money themselves, which comes much earlier."),
        "grid 0.05": (values["grid 0.05"], "it is the first point of a grid with steps of 0.05: three decimals "
                                           "need a step of 0.001, or solve the straight line exactly."),
        "grid 0.01": (values["grid 0.01"], "it is the crossing to two decimals only (rounded, or the first point "
                                           "of a grid with steps of 0.01): three decimals are asked, so solve the "
                                           "straight line exactly or search with a step of 0.001."),
    }
    for value, explanation in hints.values():
        if abs(w - value) < _MISTAKE_TOLERANCE:
            raise ExerciseError(f"w_river = {w:.4f} is not right yet: {explanation}")
    side = "river" if w > right else "money"
    raise ExerciseError(f"w_river = {w:.4f} is not the crossing: at that w, z is closer to {side}. Recheck your "
                        "working (the crossing: z . (r_hat - m_hat) = 0).")
