"""Checks for lesson 01 (static embeddings): one-hot rows, cosine similarity, a vector on which the dot product
and the cosine disagree, nearest words."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ._engine import ExerciseError, check_function, passed

__all__ = ["check_one_hot", "check_cosine_two_vectors", "check_dot_cosine_disagree", "check_nearest_words"]

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
        # numerically hard: lengths far from 1 (1e-6 and 1e6) and two nearly parallel vectors
        (1e-6 * rng.normal(size=5), 1e6 * rng.normal(size=5)),
        (np.array([1.0, 1e-4]), np.array([1.0, 2e-4])),
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


DISAGREE_MIN_COS = 0.95  # exercise 3: cos(D, C) must exceed this while D . C = A . C


def check_dot_cosine_disagree(D: Any) -> None:
    """Exercise 3: a (2,) vector D with D . C = A . C = 11 but cos(D, C) > 0.95 (A's cosine is 0.740)."""
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
            raise ExerciseError(f"D points exactly along C (cosine 1), but D . C = {dot:.4g}, not {target:g}: "
                                f"scale it, D = ({target:g} / (C @ C)) * C has D . C = {target:g}.")
        raise ExerciseError(f"D . C = {dot:.4g}, but it must equal A . C = {target:g} (the same dot product as A).")
    if cos <= DISAGREE_MIN_COS:
        raise ExerciseError(f"D . C = {target:g} as asked, but cos(D, C) = {cos:.3f}; it must be above "
                            f"{DISAGREE_MIN_COS}: turn D more towards C, keeping D . C = {target:g}.")
    shorter = "shorter" if np.linalg.norm(d) < np.linalg.norm(_A) else "longer"
    passed(f"D . C = {dot:.3f} = A . C, but cos(D, C) = {cos:.3f} against cos(A, C) = {_reference_cosine(_A, _C):.3f}; "
           f"|D| = {np.linalg.norm(d):.3f} is {shorter} than |A| = {np.linalg.norm(_A):.3f}.")


# A toy table in which ranking by dot product and by cosine differ: "giant" is long, "dust" is tiny (1e-6).
_TOY_VOCAB = ["bank", "money", "cash", "river", "giant", "shore", "dust"]
_TOY_TABLE = np.array(
    [
        [1.0, 1.0],  # bank: half money, half river
        [1.0, 0.2],  # money
        [0.9, 0.4],  # cash
        [0.1, 1.0],  # river
        [6.0, -1.5],  # giant: long, so its dot products are large, but it points elsewhere
        [0.4, 1.0],  # shore
        [1e-6, 1.05e-6],  # dust: tiny, so its dot products are near 0, but it points almost exactly like bank
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
           + " (cosine ignores how long 'giant' is and how short 'dust' is).")
