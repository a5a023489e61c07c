"""Lesson 01's checks name each typical mistake, and only that one; the right answers get "Correct:"."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from selfattention import checks
from selfattention.checks import ExerciseError


def message_of(check: Callable[[object], None], answer: object) -> str:
    with pytest.raises(ExerciseError) as err:
        check(answer)
    return str(err.value)


def assert_names_only(message: str, mistake: str, phrases: dict[str, str]) -> None:
    assert phrases[mistake] in message, message
    others = [p for m, p in phrases.items() if m != mistake]
    assert not any(p in message for p in others), message


# ---- exercise 1: one_hot

def one_hot_every_column(ids, vocab_size):
    m = np.zeros((len(ids), vocab_size))
    m[:, ids] = 1.0
    return m


def one_hot_shifted(ids, vocab_size):
    m = np.zeros((len(ids), vocab_size))
    m[np.arange(len(ids)), np.asarray(ids) + 1] = 1.0   # counts from 1
    return m


def one_hot_transposed(ids, vocab_size):
    return np.eye(vocab_size)[:, ids]                    # (V, T)


ONE_HOT = {"every column": (one_hot_every_column, "every row has a 1 in the column of every word"),
           "shifted": (one_hot_shifted, "one column to the right"),
           "transposed": (one_hot_transposed, "looks transposed")}


@pytest.mark.parametrize("mistake", ONE_HOT)
def test_one_hot_names_the_mistake(mistake: str) -> None:
    fn, _ = ONE_HOT[mistake]
    assert_names_only(message_of(checks.check_one_hot, fn), mistake, {m: p for m, (_, p) in ONE_HOT.items()})


# ---- exercise 2: cosine_similarity

norm = np.linalg.norm
COSINE = {
    "dot": (lambda u, v: u @ v, "plain dot product"),
    "one length": (lambda u, v: u @ v / norm(u), "divides by |u| only"),
    "squared": (lambda u, v: u @ v / (norm(u) ** 2 * norm(v) ** 2), "squared lengths"),
    "sum of lengths": (lambda u, v: u @ v / (norm(u) + norm(v)), "divides by |u| + |v|"),
    "angle": (lambda u, v: np.arccos(u @ v / (norm(u) * norm(v))), "angle in radians"),
    "no sum": (lambda u, v: u * v / (norm(u) * norm(v)), "one number per coordinate"),
}


@pytest.mark.parametrize("mistake", COSINE)
def test_cosine_names_the_mistake(mistake: str) -> None:
    fn, _ = COSINE[mistake]
    message = message_of(checks.check_cosine_two_vectors, fn)
    assert_names_only(message, mistake, {m: p for m, (_, p) in COSINE.items()})


def test_cosine_plain_formula_is_right_on_hard_inputs(capsys: pytest.CaptureFixture[str]) -> None:
    """The check's hard inputs (lengths 1e-6 and 1e6, nearly parallel vectors) accept the plain formula."""
    checks.check_cosine_two_vectors(lambda u, v: float(u @ v / (norm(u) * norm(v))))
    assert capsys.readouterr().out.startswith("Correct:")


def test_cosine_that_rounds_fails() -> None:
    """A cosine rounded to 3 decimals is not taken for right (the check compares to 1e-6)."""
    rounded = lambda u, v: round(float(u @ v / (norm(u) * norm(v))), 3)  # noqa: E731
    message = message_of(checks.check_cosine_two_vectors, rounded)
    assert "differs" in message or "not right" in message, message


# ---- exercise 3: D with the same dot product as A but a larger cosine

A, C = np.array([1.0, 4.0]), np.array([3.0, 2.0])
DISAGREE = {
    "A itself": (A.copy(), "D is A itself"),
    "along C, wrong length": (C.copy(), "points exactly along C"),
    "wrong dot product": (np.array([1.0, 1.0]), "it must equal A . C"),
    "cosine too small": (np.array([11 / 3, 0.0]), "it must be above 0.95"),
    "wrong shape": (np.array([3.0, 1.0, 0.0]), "shape (3,)"),
    "blank": (None, "no value yet"),
}


@pytest.mark.parametrize("mistake", DISAGREE)
def test_disagree_names_the_mistake(mistake: str) -> None:
    answer, _ = DISAGREE[mistake]
    message = message_of(checks.check_dot_cosine_disagree, answer)
    assert_names_only(message, mistake, {m: p for m, (_, p) in DISAGREE.items()})


@pytest.mark.parametrize("D", [11 / 13 * C, np.array([3.0, 1.0])])
def test_disagree_right_answers(D: np.ndarray, capsys: pytest.CaptureFixture[str]) -> None:
    checks.check_dot_cosine_disagree(D)
    out = capsys.readouterr().out
    assert out.startswith("Correct:") and "shorter than |A|" in out, out


# ---- exercise 4: nearest_words

def ranked(word, vocab, table, k, *, by_dot=False, ascending=False, keep_self=False,  # noqa: PLR0913
           alphabetical=False, as_ids=False, pairs=False, extra=0):
    table = np.asarray(table, dtype=float)
    i = list(vocab).index(word)
    if by_dot:
        sims = table @ table[i]
    else:
        unit = table / np.linalg.norm(table, axis=1, keepdims=True)
        sims = unit @ unit[i]
    order = [j for j in np.argsort(sims if ascending else -sims) if keep_self or j != i][:k + extra]
    if as_ids:
        return order
    if pairs:
        return [(vocab[j], float(sims[j])) for j in order]
    words = [vocab[j] for j in order]
    return sorted(words) if alphabetical else words


NEAREST = {
    "dot product": (dict(by_dot=True), "plain dot product"),
    "least similar": (dict(ascending=True), "LEAST similar"),
    "keeps itself": (dict(keep_self=True), "itself"),
    "wrong order": (dict(alphabetical=True), "wrong order"),
    "row numbers": (dict(as_ids=True), "row numbers"),
    "pairs": (dict(pairs=True), "return only the words"),
    "one too many": (dict(extra=1), "it should return k ="),
}


@pytest.mark.parametrize("mistake", NEAREST)
def test_nearest_words_names_the_mistake(mistake: str) -> None:
    options, _ = NEAREST[mistake]
    message = message_of(checks.check_nearest_words, lambda w, v, t, k: ranked(w, v, t, k, **options))
    assert_names_only(message, mistake, {m: p for m, (_, p) in NEAREST.items()})


RIGHT = {
    "one_hot": (checks.check_one_hot, lambda ids, V: np.eye(V)[np.asarray(ids, dtype=int)]),
    "cosine": (checks.check_cosine_two_vectors, lambda u, v: float(u @ v / (norm(u) * norm(v)))),
    "nearest": (checks.check_nearest_words, lambda w, v, t, k: ranked(w, v, t, k)),
}


@pytest.mark.parametrize("exercise", RIGHT)
def test_right_answers_are_correct(exercise: str, capsys: pytest.CaptureFixture[str]) -> None:
    check, answer = RIGHT[exercise]
    check(answer)
    assert capsys.readouterr().out.startswith("Correct:")
