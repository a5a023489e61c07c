"""Checks for lesson 01 (static embeddings): one-hot rows, cosine similarity, nearest words."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ._engine import ExerciseError, check_array, check_function, passed

__all__ = ["check_one_hot", "check_cosine_two_vectors", "check_cosine_matrix", "check_nearest_words"]

# The lesson's hand-checkable 2-D vectors: A . C = 11, B . C = 26.
_A, _B, _C = np.array([1.0, 4.0]), np.array([4.0, 7.0]), np.array([3.0, 2.0])


def _reference_one_hot(ids: Sequence[int], vocab_size: int) -> np.ndarray:
    """(T, V) matrix with a single 1 per row, in column ids[t]."""
    return np.eye(vocab_size)[np.asarray(ids, dtype=int)]


def check_one_hot(one_hot: Callable[..., Any]) -> None:
    """Exercise 1: ``one_hot(ids, vocab_size)`` returns a (T, V) matrix of one-hot rows."""

    def every_column(case: tuple[list[int], int]) -> dict[str, np.ndarray]:
        ids, vocab_size = case
        m = np.zeros((len(ids), vocab_size))
        m[:, ids] = 1.0
        return {
            "every row has a 1 in the column of every word of the sentence. Each row t should have "
            "exactly one 1, in column ids[t]: M[t, ids[t]] = 1 (or M[np.arange(T), ids] = 1).": m,
            "the 1s are one column to the right: column ids[t] holds word ids[t] "
            "(Python counts from 0).": np.roll(_reference_one_hot(ids, vocab_size), 1, axis=1),
        }

    cases = [([1, 0, 2], 4), ([3, 3, 0, 5], 6), ([0], 1)]
    check_function(
        one_hot,
        _reference_one_hot,
        cases,
        "one_hot",
        describe=lambda case: f"ids={case[0]}, vocab_size={case[1]}",
        mistakes=every_column,
    )
    table = np.arange(18.0).reshape(6, 3)
    rows = np.asarray(one_hot([3, 3, 0, 5], 6), dtype=float) @ table
    passed(
        "one_hot([3, 3, 0, 5], 6) @ table gives rows 3, 3, 0 and 5 of the table: "
        f"{np.array_equal(rows, table[[3, 3, 0, 5]])}."
    )


def _reference_cosine(u: np.ndarray, v: np.ndarray) -> float:
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


def check_cosine_two_vectors(cosine_similarity: Callable[..., Any]) -> None:
    """Exercise 2: ``cosine_similarity(u, v)`` for two (d,) vectors returns one number."""
    rng = np.random.default_rng(1)
    cases = [
        (_A, _C),
        (_B, _C),
        (np.array([2.0, 0.0]), np.array([0.0, 3.0])),
        (np.array([1.0, -2.0, 2.0]), np.array([-2.0, 4.0, -4.0])),
        (rng.normal(size=384), rng.normal(size=384)),
    ]

    def typical(case: tuple[np.ndarray, np.ndarray]) -> dict[str, float]:
        u, v = case
        nu, nv, dot = np.linalg.norm(u), np.linalg.norm(v), float(u @ v)
        return {
            "it is the plain dot product u . v; divide it by the lengths |u| |v|.": dot,
            "it divides by |u| only; divide by both lengths, |u| |v|.": dot / nu,
            "it divides by the squared lengths |u|^2 |v|^2; np.linalg.norm is already the length, "
            "do not square it.": dot / (nu**2 * nv**2),
            "it divides by |u| + |v|; the lengths are multiplied, |u| * |v|.": dot / (nu + nv),
            "it is the angle in radians (arccos of the cosine); return the cosine itself.":
                float(np.arccos(np.clip(dot / (nu * nv), -1.0, 1.0))),
        }

    def guarded(u: np.ndarray, v: np.ndarray) -> Any:
        got = cosine_similarity(u, v)
        if got is not None and np.ndim(got) == 1 and np.shape(got) == np.shape(u):
            raise ExerciseError(
                f"cosine_similarity returned an array of shape {np.shape(got)}, one number per "
                "coordinate; the cosine similarity is a single number: sum the products "
                "(u @ v does that) before dividing by the lengths."
            )
        return got

    check_function(
        guarded,
        _reference_cosine,
        cases,
        "cosine_similarity",
        describe=lambda case: f"u={np.round(case[0], 2).tolist()[:4]}..., v={np.round(case[1], 2).tolist()[:4]}..."
        if len(case[0]) > 4 else f"u={case[0].tolist()}, v={case[1].tolist()}",
        mistakes=typical,
        rtol=1e-6,
        atol=1e-9,
    )
    passed(
        f"cos(A, C) = {_reference_cosine(_A, _C):.3f} and cos(B, C) = {_reference_cosine(_B, _C):.3f}; "
        "orthogonal vectors give 0, opposite ones -1."
    )


def check_cosine_matrix(S: Any) -> None:
    """Exercise 3: the (3, 3) matrix of cosine similarities between the rows A, B, C."""
    X = np.stack([_A, _B, _C])  # (3, 2)
    n = np.linalg.norm(X, axis=1, keepdims=True)  # (3, 1)
    unit = X / n
    expected = unit @ unit.T
    check_array(
        S,
        expected,
        "S",
        mistakes={
            "it holds the dot products X @ X.T; divide each row vector by its length first "
            "(X / norms with norms of shape (3, 1)), then take the products.": X @ X.T,
            "only the first factor was normalised, (X / norms) @ X.T; normalise both.": unit @ X.T,
            "only the second factor was normalised, X @ (X / norms).T; normalise both.": X @ unit.T,
            "the norms were divided along the wrong axis (X / norms.T or axis=0): each ROW of X is "
            "a word, so use np.linalg.norm(X, axis=1, keepdims=True).":
                (X / np.linalg.norm(X, axis=0, keepdims=True)) @ (X / np.linalg.norm(X, axis=0, keepdims=True)).T,
        },
    )
    passed(
        "the diagonal is 1 (every word is perfectly similar to itself) and S is symmetric; "
        f"S[1, 2] = cos(B, C) = {expected[1, 2]:.3f} > S[0, 2] = cos(A, C) = {expected[0, 2]:.3f}."
    )


# A toy table in which ranking by dot product and by cosine differ: "giant" is long.
_TOY_VOCAB = ["bank", "money", "cash", "river", "giant", "shore"]
_TOY_TABLE = np.array(
    [
        [1.0, 1.0],  # bank: half money, half river
        [1.0, 0.2],  # money
        [0.9, 0.4],  # cash
        [0.1, 1.0],  # river
        [6.0, -1.5],  # giant: long, so its dot products are large, but it points elsewhere
        [0.4, 1.0],  # shore
    ]
)


def _reference_nearest(word: str, vocab: Sequence[str], table: np.ndarray, k: int) -> list[str]:
    table = np.asarray(table, dtype=float)
    i = list(vocab).index(word)
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    sims = unit @ unit[i]
    order = [j for j in np.argsort(-sims, kind="stable") if j != i]
    return [vocab[j] for j in order[:k]]


def _ranking(word: str, vocab: Sequence[str], table: np.ndarray, by_dot: bool, keep_self: bool,
             ascending: bool) -> list[str]:
    i = list(vocab).index(word)
    if by_dot:
        sims = table @ table[i]
    else:
        unit = table / np.linalg.norm(table, axis=1, keepdims=True)
        sims = unit @ unit[i]
    order = np.argsort(sims if ascending else -sims, kind="stable")
    return [vocab[j] for j in order if keep_self or j != i]


def check_nearest_words(nearest_words: Callable[..., Any]) -> None:
    """Exercise 4: ``nearest_words(word, vocab, table, k)`` returns the k most cosine-similar words."""
    if not callable(nearest_words):
        raise ExerciseError(f"nearest_words should be a function, but it is a {type(nearest_words).__name__}.")
    for word, k in [("bank", 3), ("money", 2), ("river", 4)]:
        where = f"(on the toy table of the check, word={word!r}, k={k})"
        try:
            got = nearest_words(word, list(_TOY_VOCAB), _TOY_TABLE.copy(), k)
        except ExerciseError:
            raise
        except NotImplementedError:
            raise ExerciseError(
                "nearest_words still raises NotImplementedError: replace that line with your code."
            ) from None
        except Exception as exc:
            raise ExerciseError(f"nearest_words raised {type(exc).__name__} {where}: {exc}") from None
        if got is None or got is Ellipsis:
            raise ExerciseError("nearest_words returned None: finish the function and `return` the list of words.")
        if isinstance(got, np.ndarray):
            got = got.tolist()
        if isinstance(got, str) or not isinstance(got, (list, tuple)):
            raise ExerciseError(
                f"nearest_words should return a list of words, but it returned a {type(got).__name__} {where}."
            )
        got = list(got)
        if got and all(isinstance(g, (int, np.integer)) for g in got):
            raise ExerciseError(
                f"nearest_words returned row numbers {got} {where}; turn them into words with vocab[j]."
            )
        if got and all(isinstance(g, (tuple, list)) for g in got):
            raise ExerciseError(
                f"nearest_words returned pairs such as ({got[0][0]!r}, ...) {where}; return only the words."
            )
        expected = _reference_nearest(word, _TOY_VOCAB, _TOY_TABLE, k)
        if got == expected:
            continue
        if len(got) != k:
            raise ExerciseError(f"nearest_words returned {len(got)} words {where}; it should return k = {k}.")
        if word in got:
            raise ExerciseError(
                f"your list {got} contains {word!r} itself {where}; a word is always most similar "
                "to itself, so leave it out."
            )
        wrong = {
            "they are ranked by the plain dot product, which favours long vectors (the toy table's "
            "'giant' is long); rank by cosine similarity.": _ranking(word, _TOY_VOCAB, _TOY_TABLE, True, False, False),
            "they are the LEAST similar words: sort from the highest similarity down "
            "(np.argsort(-sims)).": _ranking(word, _TOY_VOCAB, _TOY_TABLE, False, False, True),
        }
        for explanation, ranking in wrong.items():
            if got == ranking[:k]:
                raise ExerciseError(f"your words {got} {where} are not right yet: {explanation}")
        if sorted(got) == sorted(expected):
            raise ExerciseError(
                f"you have the right words {where} but in the wrong order: {got} instead of {expected}; "
                "list the most similar first."
            )
        raise ExerciseError(f"nearest_words gave {got} {where}, but the right answer is {expected}.")
    passed("on the toy table, the neighbours of 'bank' are " + ", ".join(_reference_nearest("bank", _TOY_VOCAB, _TOY_TABLE, 3))
           + " (cosine ignores how long 'giant' is).")
