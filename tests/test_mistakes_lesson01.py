"""Lesson 01's checks name each typical mistake, and only that one; right answers get "Correct:".

Every wrong answer below is written as a learner would write it; the check's message must name that mistake (a
phrase of its explanation) and no other; two different right answers must pass, and a shortcut that skips what
the exercise teaches must not.
"""

from __future__ import annotations

import numpy as np
import pytest
from mistakes import exercise_cell, message, names_only, right_answer_passes

from selfattention import checks
from selfattention.data import load_static_embeddings

# ---------------------------------------------------------------- exercise 1: D . C = A . C, cos(D, C) > 0.95
A, C = np.array([1.0, 4.0]), np.array([3.0, 2.0])
DISAGREE = {
    "A itself": "D is A itself",
    "along C, wrong length": "points exactly along C",
    "wrong dot product": "it must equal A . C",
    "cosine too small": "it must be above 0.95",
    "wrong shape": "shape (3,)",
    "blank": "no value yet",
}
DISAGREE_WRONG = {
    "A itself": A.copy(),                        # the shortcut: A has the right dot product, not the cosine
    "along C, wrong length": C.copy(),
    "wrong dot product": np.array([1.0, 1.0]),
    "cosine too small": np.array([11 / 3, 0.0]),
    "wrong shape": np.array([3.0, 1.0, 0.0]),
    "blank": None,
}


@pytest.mark.parametrize("mistake", sorted(DISAGREE_WRONG))
def test_disagree_names_the_mistake(mistake: str) -> None:
    names_only(message(checks.check_dot_cosine_disagree, DISAGREE_WRONG[mistake]), mistake, DISAGREE)


@pytest.mark.parametrize("D", [C, 2 * C, 0.5 * C])
def test_disagree_along_c_does_not_give_the_formula(D: np.ndarray) -> None:
    text = message(checks.check_dot_cosine_disagree, D)
    assert "scale it so that D . C = 11" in text and "C @ C" not in text and "/" not in text, text


def test_disagree_rounded_answer_is_called_rounded() -> None:
    text = message(checks.check_dot_cosine_disagree, np.array([2.538, 1.692]))   # 11/13 C, typed rounded
    assert "10.998" in text and "rounded" in text, text


@pytest.mark.parametrize("D", [11 / 13 * C, np.array([3.0, 1.0])])
def test_disagree_right_answers(D: np.ndarray, capsys: pytest.CaptureFixture[str]) -> None:
    checks.check_dot_cosine_disagree(D)
    out = capsys.readouterr().out
    assert out.startswith("Correct:") and "shorter than |A|" in out, out


# ---------------------------------------------------------------- exercise 2: four rankings of the neighbours
TOY_WORDS = ["money", "cash", "river", "giant", "shore", "dust"]
TOY_ROWS = np.array([[1.0, 0.2], [0.9, 0.4], [0.1, 1.0], [6.0, -1.5], [0.5, 1.0], [1e-2, 1.05e-2]])
X_BANK = np.array([1.0, 1.0])


def top3(scores, nearest_is_high=True):
    order = np.argsort(-scores if nearest_is_high else scores)
    return [TOY_WORDS[j] for j in order[:3]]


DOT = top3(TOY_ROWS @ X_BANK)
COSINE = top3(TOY_ROWS @ X_BANK / (np.linalg.norm(TOY_ROWS, axis=1) * np.linalg.norm(X_BANK)))
DISTANCE = top3(np.linalg.norm(TOY_ROWS - X_BANK, axis=1), nearest_is_high=False)
UNIT_ROWS = TOY_ROWS / np.linalg.norm(TOY_ROWS, axis=1, keepdims=True)
UNIT = top3(np.linalg.norm(UNIT_ROWS - X_BANK / np.linalg.norm(X_BANK), axis=1), nearest_is_high=False)
RIGHT = dict(by_dot=DOT, by_cosine=COSINE, by_distance=DISTANCE, by_unit_distance=UNIT)

RANKINGS = {
    "cosine given the dot ranking": "by_cosine = ['giant', 'shore', 'cash'] is the ranking by the plain dot",
    "dot given the cosine ranking": "by_dot = ['dust', 'shore', 'cash'] is the ranking by the cosine",
    "distance given the cosine ranking": "by_distance = ['dust', 'shore', 'cash'] is the ranking by the co",
    "unit distance given the raw distance": "ranking by the Euclidean distance between the rows as given",
    "farthest by distance": "FARTHEST",
    "keeps bank": "'bank' itself",
    "wrong order": "wrong order",
    "too few": "holds 2 words",
    "blank": "no value yet",
    "not a word": "not a word of the toy table",
    "a string": "should be a list of three words",
}
RANKINGS_WRONG = {
    "cosine given the dot ranking": dict(by_cosine=DOT),       # the shortcut: one ranking for every measure
    "dot given the cosine ranking": dict(by_dot=COSINE),
    "distance given the cosine ranking": dict(by_distance=COSINE),
    "unit distance given the raw distance": dict(by_unit_distance=DISTANCE),
    "farthest by distance": dict(by_distance=["giant", "dust", "river"]),   # largest distance first
    "keeps bank": dict(by_cosine=["bank", "dust", "shore"]),
    "wrong order": dict(by_distance=["cash", "shore", "money"]),
    "too few": dict(by_dot=["giant", "shore"]),
    "blank": dict(by_unit_distance=None),
    "not a word": dict(by_dot=["giant", "shore", "coins"]),
    "a string": dict(by_cosine="dust, shore, cash"),
}


@pytest.mark.parametrize("mistake", sorted(RANKINGS_WRONG))
def test_rankings_name_the_mistake(mistake: str) -> None:
    answer = {**RIGHT, **RANKINGS_WRONG[mistake]}
    names_only(message(lambda a: checks.check_rankings(**a), answer), mistake, RANKINGS)


def test_rankings_unit_distance_hint_derives_the_cosine() -> None:
    wrong = {**RIGHT, "by_unit_distance": ["money", "river", "giant"]}
    said = message(lambda a: checks.check_rankings(**a), wrong)
    assert "2 - 2 cos(u, v)" in said, said


def computed() -> dict:
    """A second right answer: every ranking computed, as a learner would with the toy rows."""
    unit_bank = X_BANK / np.linalg.norm(X_BANK)
    scores = {"by_dot": TOY_ROWS @ X_BANK, "by_cosine": UNIT_ROWS @ unit_bank,
              "by_distance": -np.linalg.norm(TOY_ROWS - X_BANK, axis=1),
              "by_unit_distance": -np.linalg.norm(UNIT_ROWS - unit_bank, axis=1)}
    return {name: [TOY_WORDS[j] for j in np.argsort(-s)[:3]] for name, s in scores.items()}


@pytest.mark.parametrize("answer", [
    dict(by_dot=["giant", "shore", "cash"], by_cosine=["dust", "shore", "cash"],
         by_distance=["shore", "cash", "money"], by_unit_distance=["dust", "shore", "cash"]),   # typed
    computed(),
    {k: tuple(w.capitalize() for w in v) for k, v in RIGHT.items()},                        # tuples, capitals
])
def test_rankings_right_answers(answer, capsys: pytest.CaptureFixture[str]) -> None:
    right_answer_passes(lambda a: checks.check_rankings(**a), answer, capsys)


# ---------------------------------------------------------------- exercise 3: the share of river
E = load_static_embeddings()
b, r, m = (E.vector(w).astype(np.float64) for w in ("bank", "river", "money"))


def unit(x):
    return x / np.linalg.norm(x)


def cos(u, v):
    return float(unit(u) @ unit(v))


def crossing(d):
    return float(b @ d / (b @ d - r @ d))


def first_on_grid(step: float) -> float:
    """A learner's search: the first w of a grid at which z is at least as close to river as to money."""
    for w in np.arange(0.0, 1.0 + step / 2, step):
        z = (1 - w) * b + w * r
        if cos(z, r) >= cos(z, m):
            return round(float(w), 10)
    raise AssertionError("no crossing on the grid")


def reaches_static_money() -> float:
    """The w at which cos(z, river) reaches the static cos(bank, money), found on a fine grid."""
    target = cos(b, m)
    return next(float(w) for w in np.arange(0, 1, 1e-5) if cos((1 - w) * b + w * r, r) >= target)


def euclidean_crossing() -> float:
    """The first w on a fine grid at which z(w) is as near to river as to money by Euclidean distance."""
    return next(float(w) for w in np.arange(0, 1, 1e-5)
                if np.linalg.norm((1 - w) * b + w * r - r) <= np.linalg.norm((1 - w) * b + w * r - m))


def crossing_of_unit_rows() -> float:
    """The cosine crossing when z mixes bank and river scaled to length 1, found on a fine grid."""
    return next(float(w) for w in np.arange(0, 1, 1e-5)
                if cos((1 - w) * unit(b) + w * unit(r), r) >= cos((1 - w) * unit(b) + w * unit(r), m))


RIVER = {
    "guess": "0.5 is a guess",
    "raw rows": "raw rows of river and money",
    "bank's share": "that is bank's share",
    "static money": "reaches the static cos(bank, money)",
    "euclidean": "by Euclidean distance",
    "unit mix": "scaled to length 1; z",
    "grid 0.05": "a grid with steps of 0.05",
    "grid 0.01": "to two decimals only",
    "sense test": "tips to the river sense",
    "rounded": "to two decimals only (rounded",
    "not a number": "should be one number",
    "outside": "outside [0, 1]",
    "blank": "no value yet",
}
RIVER_WRONG = {
    "guess": 0.5,                                # the shortcut: no derivation at all
    "raw rows": crossing(r - m),
    "bank's share": 1 - crossing(unit(r) - unit(m)),
    "static money": reaches_static_money(),
    "euclidean": euclidean_crossing(),
    "unit mix": crossing_of_unit_rows(),
    "grid 0.05": first_on_grid(0.05),
    "grid 0.01": first_on_grid(0.01),
    "sense test": 0.46,                          # read ahead: the tipping point printed after the exercise
    "rounded": round(crossing(unit(r) - unit(m)), 2),
    "not a number": "0.137",
    "outside": -crossing(unit(r) - unit(m)),
    "blank": None,
}


@pytest.mark.parametrize("mistake", sorted(RIVER_WRONG))
def test_river_share_names_the_mistake(mistake: str) -> None:
    # a grid of 0.01 and rounding to two decimals both give 0.14: one message names both, and nothing else
    same = {"grid 0.01": "rounded", "rounded": "grid 0.01"}
    phrases = {k: v for k, v in RIVER.items() if k != same.get(mistake)}
    names_only(message(checks.check_river_share, RIVER_WRONG[mistake]), mistake, phrases)


def test_river_share_rounded_is_called_rounded() -> None:
    assert RIVER_WRONG["rounded"] == RIVER_WRONG["grid 0.01"] == 0.14
    assert "rounded" in message(checks.check_river_share, RIVER_WRONG["rounded"])


def bisection() -> float:
    lo, hi = 0.0, 1.0
    for _ in range(40):
        mid = (lo + hi) / 2
        z = (1 - mid) * b + mid * r
        lo, hi = (mid, hi) if cos(z, r) < cos(z, m) else (lo, mid)
    return hi


@pytest.mark.parametrize("answer", [crossing(unit(r) - unit(m)), bisection(), first_on_grid(0.001),
                                    np.float32(crossing(unit(r) - unit(m)))])
def test_river_share_right_answers(answer, capsys: pytest.CaptureFixture[str]) -> None:
    right_answer_passes(checks.check_river_share, answer, capsys)


def test_river_share_other_values_say_which_side() -> None:
    assert "closer to money" in message(checks.check_river_share, 0.1)
    assert "closer to river" in message(checks.check_river_share, 0.3)


@pytest.mark.parametrize("form", [float, lambda w: [w], lambda w: np.array([w])])
def test_river_share_hidden_test_accepts_every_form_the_check_accepts(form) -> None:
    """The test cell with its hidden part (as the grader runs it) passes what the visible check passes."""
    w = crossing(unit(r) - unit(m))
    cell = exercise_cell("01_static_embeddings", "l01-river-share-test")
    exec(cell, {"checks": checks, "w_river": form(round(w, 4))})  # noqa: S102
