"""Lesson 01's checks name each typical mistake, and only that one; right answers get "Correct:".

Every wrong answer below is written as a learner would write it; the check's message must name that mistake (a
phrase of its explanation) and no other; two different right answers must pass, and a shortcut that skips what
the exercise teaches must not.
"""

from __future__ import annotations

import numpy as np
import pytest
from mistakes import message, names_only, right_answer_passes

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


# ---------------------------------------------------------------- exercise 2: nearest_words
def ranked(word, vocab, table, k, *, by_dot=False, ascending=False, keep_self=False,  # noqa: PLR0913
           alphabetical=False, as_ids=False, pairs=False, extra=0, euclid=False, columns=False,
           drop_after=False):
    table = np.asarray(table, dtype=float)
    i = list(vocab).index(word)
    if euclid:
        sims = -np.linalg.norm(table - table[i], axis=1)
    elif columns:
        unit = table / np.linalg.norm(table, axis=0)
        sims = unit @ unit[i]
    elif by_dot:
        sims = table @ table[i]
    else:
        unit = table / np.linalg.norm(table, axis=1, keepdims=True)
        sims = unit @ unit[i]
    order = [j for j in np.argsort(sims if ascending else -sims) if keep_self or j != i][:k + extra]
    if drop_after:                       # the top k first, then the word itself dropped: k - 1 words are left
        order = [j for j in np.argsort(-sims)[:k] if j != i]
    if as_ids:
        return order
    if pairs:
        return [(vocab[j], float(sims[j])) for j in order]
    words = [vocab[j] for j in order]
    return sorted(words) if alphabetical else words


NEAREST = {
    "dot product": "plain dot product",
    "least similar": "LEAST similar",
    "keeps itself": "itself",
    "wrong order": "wrong order",
    "row numbers": "row numbers",
    "pairs": "return only the words",
    "one too many": "it should return k =",
    "euclidean": "Euclidean distance",
    "wrong axis": "wrong axis",
    "dropped after top k": "took one of the top k",
}
NEAREST_OPTIONS = {
    "dot product": dict(by_dot=True),            # the shortcut: skips the lengths the lesson divides out
    "least similar": dict(ascending=True),
    "keeps itself": dict(keep_self=True),
    "wrong order": dict(alphabetical=True),
    "row numbers": dict(as_ids=True),
    "pairs": dict(pairs=True),
    "one too many": dict(extra=1),
    "euclidean": dict(euclid=True),
    "wrong axis": dict(columns=True),
    "dropped after top k": dict(drop_after=True),
}


@pytest.mark.parametrize("mistake", sorted(NEAREST_OPTIONS))
def test_nearest_words_names_the_mistake(mistake: str) -> None:
    options = NEAREST_OPTIONS[mistake]
    names_only(message(checks.check_nearest_words, lambda w, v, t, k: ranked(w, v, t, k, **options)),
               mistake, NEAREST)


def test_nearest_words_euclidean_says_where_dust_sits() -> None:
    said = message(checks.check_nearest_words, lambda w, v, t, k: ranked(w, v, t, k, euclid=True))
    assert "near the origin" in said and "far from everything" not in said


def nearest_by_loop(word, vocab, table, k):
    """A second right answer: whole words only, as the lesson's E.neighbours, with a sorted list of pairs."""
    table = np.asarray(table, dtype=float)
    x = table[list(vocab).index(word)]
    scored = []
    for w, row in zip(vocab, table, strict=True):
        if w != word and w.isalpha():
            scored.append((float(row @ x / (np.linalg.norm(row) * np.linalg.norm(x))), w))
    return [w for _, w in sorted(scored, reverse=True)[:k]]


def nearest_with_eps(word, vocab, table, k, eps=1e-6):
    """A third right answer: a 'safe' normalisation that adds a small eps to every length."""
    table = np.asarray(table, dtype=float)
    unit = table / (np.linalg.norm(table, axis=1, keepdims=True) + eps)
    i = list(vocab).index(word)
    order = [j for j in np.argsort(-(unit @ unit[i])) if j != i]
    return [vocab[j] for j in order[:k]]


@pytest.mark.parametrize("answer", [lambda w, v, t, k: ranked(w, v, t, k), nearest_by_loop, nearest_with_eps,
                                    lambda w, v, t, k: nearest_with_eps(w, v, t, k, eps=1e-7)])
def test_nearest_words_right_answers(answer, capsys: pytest.CaptureFixture[str]) -> None:
    right_answer_passes(checks.check_nearest_words, answer, capsys)


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
