"""Checks for lesson 04 (learnable projections): design a query, write attention with projections,
design the lookup query that attends to the letter before its own.

Every check's own inputs make each named mistake give a result different from the right answer and from
every other named mistake: no identity or square projection matrices, T != d_in != d_k != d_v, and a case
with scores large enough that a softmax without max-subtraction overflows.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ._engine import ExerciseError, _copied, _learner_line, _to_array, check_array, passed, reference_softmax

__all__ = ["check_apple_query", "check_self_attention", "check_letter_before"]

# The lesson's toy sentence "Sam ate (a) red apple": features person, action, food, fruit, red (d_in = 5).
WORDS = ("Sam", "ate", "red", "apple")
_X_TOY = np.array(
    [
        [1.0, 0.0, 0.0, 0.0, 0.0],  # Sam
        [0.0, 1.0, 0.0, 0.0, 0.0],  # ate
        [0.0, 0.0, 0.0, 0.0, 1.0],  # red
        [0.0, 0.0, 1.0, 1.0, 1.0],  # apple
    ]
)
# Query and key axes (d_k = 3): person, action, food. Row f of W_Q: what feature f makes a word look for.
_W_Q = np.array(
    [
        [0.0, 2.0, 0.0],  # person -> looks for an action
        [1.0, 0.0, 2.0],  # action -> looks for food, and a little for a person
        [0.0, 0.0, 0.0],  # food
        [0.0, 0.0, 0.0],  # fruit
        [0.0, 0.0, 2.0],  # red -> looks for a thing to describe (food here)
    ]
)
_W_K = np.array(
    [
        [1.0, 0.0, 0.0],  # person -> is found as a person
        [0.0, 1.0, 0.0],  # action -> as an action
        [0.0, 0.0, 1.0],  # food -> as food
        [0.0, 0.0, 0.0],  # fruit
        [0.0, 0.0, 0.0],  # red
    ]
)


def _toy_weights(W_q: np.ndarray) -> np.ndarray:
    """softmax((X W_q)(X W_K)^T) for the toy sentence, (4, 4), no scaling (as in the lesson's Exercise 1)."""
    return reference_softmax((_X_TOY @ W_q) @ (_X_TOY @ _W_K).T)


def check_apple_query(W_Q_apple: Any, predicted_weight: Any) -> None:
    """Exercise 1: a W_Q (5, 3) with which 'apple' gives >= 0.8 of its attention to 'ate' while the other
    three words keep their queries; and the weight predicted before running it."""
    W = _to_array(W_Q_apple, "W_Q_apple")
    if W.shape == _W_Q.T.shape:
        raise ExerciseError(
            "W_Q_apple has shape (3, 5): that is PyTorch's nn.Linear layout (out, in). Here a projection "
            "is (d_in, d_k) = (5, 3) and is used as X_toy @ W_Q_apple."
        )
    if W.shape != _W_Q.shape:
        raise ExerciseError(f"W_Q_apple has shape {W.shape}; it should have the shape of W_Q, (5, 3).")
    if not np.all(np.isfinite(W)):
        raise ExerciseError("W_Q_apple contains NaN or infinite values.")
    apple, ate = 3, 1
    if np.allclose(W, _W_Q):
        raise ExerciseError(
            "W_Q_apple is still the lesson's W_Q: 'apple' still looks for food (itself). Change the rows of "
            "the features only 'apple' has."
        )
    old_q, new_q = _X_TOY @ _W_Q, _X_TOY @ W
    for i, word in enumerate(WORDS):
        if i != apple and not np.allclose(old_q[i], new_q[i]):
            raise ExerciseError(
                f"the query of '{word}' changed too (from {old_q[i].round(2).tolist()} to "
                f"{new_q[i].round(2).tolist()}): a row of W_Q is used by every word that has that feature. "
                f"Change only the rows of features that 'apple' alone has (food, fruit)."
            )
    weights = _toy_weights(W)[apple]
    if weights[ate] < 0.8:
        top = WORDS[int(weights.argmax())]
        raise ExerciseError(
            f"with W_Q_apple, 'apple' gives 'ate' {weights[ate]:.2f} of its attention and most to '{top}' "
            f"({weights.max():.2f}); it should give 'ate' at least 0.8. The key of 'ate' is [0, 1, 0] "
            f"(the action axis); the query of 'apple' must point there, and away from what it looks for now."
        )
    if predicted_weight is None or predicted_weight is Ellipsis:
        raise ExerciseError(
            "predicted_weight has no value yet: before running anything, work out by hand the weight "
            "'apple' gives 'ate' with your W_Q_apple and write it there."
        )
    try:
        p = float(np.asarray(predicted_weight, dtype=float))
    except (TypeError, ValueError):
        raise ExerciseError(
            f"predicted_weight should be a number, but it is a {type(predicted_weight).__name__}."
        ) from None
    right = float(weights[ate])
    if abs(p - right) <= 0.005:
        scores = (_X_TOY @ W)[apple] @ (_X_TOY @ _W_K).T
        passed(
            f"'apple' now scores {np.round(scores, 2).tolist()} and gives 'ate' {right:.3f}; you predicted "
            f"{p:.3f}."
        )
        return
    scores = new_q[apple] @ (_X_TOY @ _W_K).T
    wrong = {
        "that is the score q_apple . k_ate, not the weight: apply softmax over the four scores.":
            scores[ate],
        "that is the weight with 1/sqrt(d_k): this exercise leaves scaling out.":
            reference_softmax(scores / np.sqrt(3))[ate],
        "that is the weight 'apple' gave 'ate' with the lesson's unchanged W_Q.": _toy_weights(_W_Q)[apple, ate],
        "that looks like a percentage: write the weight as a number between 0 and 1.": 100 * right,
    }
    for explanation, value in wrong.items():
        if abs(p - value) <= 0.005 * max(1.0, abs(value)):
            raise ExerciseError(f"predicted_weight = {p:.4g} is not the weight yet: {explanation}")
    raise ExerciseError(
        f"predicted_weight = {p:.4g}, but W_Q_apple gives 'ate' {right:.3f}. The scores of 'apple' are "
        f"{np.round(scores, 2).tolist()}: the weight is e^(score of ate) / (sum of e^score)."
    )


def _reference_attention(X: np.ndarray, W_q: np.ndarray, W_k: np.ndarray, W_v: np.ndarray) -> np.ndarray:
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    return reference_softmax(Q @ K.T) @ V


def _attention_cases() -> list[tuple[np.ndarray, ...]]:
    """(X, W_q, W_k, W_v): T = 3, d_in = 5, d_k = 4, d_v = 2 (no two sizes equal, no square W); the
    second case has scores near 1000, where exp overflows without the max subtracted."""
    rng = np.random.default_rng(3)
    T, d_in, d_k, d_v = 3, 5, 4, 2
    cases = []
    for scale in (1.0, 12.0):
        X = rng.normal(size=(T, d_in)) * scale
        cases.append((X, rng.normal(size=(d_in, d_k)), rng.normal(size=(d_in, d_k)), rng.normal(size=(d_in, d_v))))
    return cases


def _attention_mistakes(case: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
    X, W_q, W_k, W_v = case
    T, d_k, d_v = X.shape[0], W_q.shape[1], W_v.shape[1]
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    S = Q @ K.T
    return {
        "the scores were divided by sqrt(d_k). Leave that factor out here (lesson 06 is about it).":
            reference_softmax(S / np.sqrt(d_k)) @ V,
        "the scores were divided by sqrt(d_v), the size of the values; this exercise has no scaling.":
            reference_softmax(S / np.sqrt(d_v)) @ V,
        "the scores were divided by sqrt(T), the number of tokens; this exercise has no scaling.":
            reference_softmax(S / np.sqrt(T)) @ V,
        "the scores were divided by d_k; this exercise has no scaling.": reference_softmax(S / d_k) @ V,
        "softmax was taken down the columns (axis=0). Each query's weights over the keys must sum "
        "to 1: use axis=-1.": reference_softmax(S, axis=0) @ V,
        "softmax is missing: the raw scores were used as weights.": S @ V,
        "the weights came from K @ Q.T instead of Q @ K.T (row i must hold query i's scores).":
            reference_softmax(K @ Q.T) @ V,
        "the weights were transposed before mixing the values (alpha.T @ V); row i of alpha belongs to "
        "query i: use alpha @ V.": reference_softmax(S).T @ V,
        "the scores came from X @ X.T (lesson 02's parameter-free attention); use the projected "
        "queries and keys.": reference_softmax(X @ X.T) @ V,
    }


def _diagnose_shapes(case: Sequence[np.ndarray], got: Any) -> str | None:
    """Words for the shape mistakes the value comparison cannot name: weights times X, values with W_q."""
    X, W_q, W_k, W_v = case
    arr = np.asarray(got, dtype=float) if got is not None and got is not Ellipsis else None
    if arr is None or arr.shape == (X.shape[0], W_v.shape[1]):
        return None
    A = reference_softmax((X @ W_q) @ (X @ W_k).T)
    if arr.shape == X.shape and np.allclose(arr, A @ X):
        return "the weights multiply X instead of the values V = X @ W_v."
    if arr.shape == (X.shape[0], W_q.shape[1]) and np.allclose(arr, A @ (X @ W_q)):
        return "the values were computed with W_q: V = X @ W_v."
    return None


def _transposed_weights(fn: Callable[..., Any], case: Sequence[np.ndarray]) -> str | None:
    """If fn only works (and is right) when some W is passed transposed, the learner wrote X @ W.T."""
    X, *Ws = case
    expected = _reference_attention(*case)
    names = ("W_q", "W_k", "W_v")
    for flips in itertools.product((False, True), repeat=3):
        if not any(flips):
            continue
        args = [W.T if flip else W for W, flip in zip(Ws, flips, strict=True)]
        try:
            got = np.asarray(fn(*_copied((X, *args))), dtype=float)
        except Exception:  # noqa: BLE001 - any failure means this is not the learner's layout
            continue
        if got.shape == expected.shape and np.allclose(got, expected, rtol=1e-6, atol=1e-8):
            which = ", ".join(f"X @ {n}.T" for n, f in zip(names, flips, strict=True) if f)
            return (
                f"you wrote {which}: that is PyTorch's nn.Linear habit (its weight is (out, in)). Here each "
                f"W is (d_in, d_k) or (d_in, d_v), so Q = X @ W_q, K = X @ W_k, V = X @ W_v, no transpose."
            )
    return None


def check_self_attention(self_attention: Callable[..., Any]) -> None:
    """Exercise 2: self_attention(X, W_q, W_k, W_v) -> Z = softmax(Q K^T) V, no scaling."""
    if self_attention is None or self_attention is Ellipsis:
        raise ExerciseError("self_attention is not defined yet: write the function in the answer cell above.")
    if not callable(self_attention):
        raise ExerciseError(f"self_attention should be a function, but it is a {type(self_attention).__name__}.")
    for case in _attention_cases():
        X, W_q, _, W_v = case
        what = f"X of shape {X.shape}, W_q and W_k of shape {W_q.shape}, W_v of shape {W_v.shape}"
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                got = self_attention(*_copied(case))
        except NotImplementedError:
            raise ExerciseError("self_attention still raises NotImplementedError: replace it with your code.") from None
        except Exception as exc:  # the learner's code crashed: a transposed W, or say where
            hint = _transposed_weights(self_attention, case)
            if hint:
                raise ExerciseError(f"the result of self_attention is not right yet: {hint} (on {what})") from None
            raise ExerciseError(
                f"self_attention raised {type(exc).__name__}{_learner_line(exc)} on {what}: {exc}"
            ) from None
        hint = _diagnose_shapes(case, got)
        if hint:
            raise ExerciseError(f"the result of self_attention is not right yet: {hint} (on {what})")
        try:
            check_array(got, _reference_attention(*case), "the result of self_attention",
                        mistakes=_attention_mistakes(case), rtol=1e-6, atol=1e-8)
        except ExerciseError as err:
            raise ExerciseError(f"{err} (on {what})") from None
    Z = _reference_attention(_X_TOY, _W_Q, _W_K, _TOY_W_V)
    passed(f"on the toy sentence, 'ate' becomes {np.round(Z[1], 2).tolist()} (person, food): it knows "
           f"someone ate something.")


# Value axes (d_v = 2): person, food. Only the person and food features are handed over.
_TOY_W_V = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0], [0.0, 0.0], [0.0, 0.0]])

# The lookup task: 8 letters, 8 digits, a query flag (D_IN = 17); the query token is letter s + flag.
_N_SYM = 8
_D_IN = 2 * _N_SYM + 1
_LETTERS = "ABCDEFGH"


def _before_sequences() -> tuple[np.ndarray, np.ndarray]:
    """For each query letter s: items with keys s-1 (the target), s, s+1 and s+3, fixed digits; the query
    token last. Returns X (8, 5, 17) and the position of the target item in each sequence (8,)."""
    rng = np.random.default_rng(7)
    X = np.zeros((_N_SYM, 5, _D_IN))
    target = np.zeros(_N_SYM, dtype=int)
    for s in range(_N_SYM):
        keys = [(s - 1) % _N_SYM, s, (s + 1) % _N_SYM, (s + 3) % _N_SYM]
        order = rng.permutation(4)
        digits = rng.permutation(_N_SYM)[:4]
        for pos, i in enumerate(order):
            X[s, pos, keys[i]] = 1.0
            X[s, pos, _N_SYM + digits[i]] = 1.0
        target[s] = int(np.flatnonzero(order == 0)[0])
        X[s, 4, s] = X[s, 4, -1] = 1.0
    return X, target


def check_letter_before(W_q_before: Any, W_k_before: Any) -> None:
    """Exercise 3: W_q_before, W_k_before of shape (17, d_k) with which the query ?s gives at least 0.9 of
    its attention (softmax of raw scores over the 5 tokens) to the item whose letter comes before s."""
    Wq, Wk = _to_array(W_q_before, "W_q_before"), _to_array(W_k_before, "W_k_before")
    for name, W in (("W_q_before", Wq), ("W_k_before", Wk)):
        if W.ndim != 2 or _D_IN not in W.shape:
            raise ExerciseError(f"{name} has shape {W.shape}; it should be (D_IN, d_k) = (17, d_k).")
        if W.shape[0] != _D_IN:
            raise ExerciseError(
                f"{name} has shape {W.shape}: that is PyTorch's nn.Linear layout (out, in). Here a "
                f"projection is (d_in, d_k) = (17, d_k), used as x @ {name}."
            )
        if not np.all(np.isfinite(W)):
            raise ExerciseError(f"{name} contains NaN or infinite values.")
    if Wq.shape[1] != Wk.shape[1]:
        raise ExerciseError(
            f"W_q_before gives queries of size {Wq.shape[1]} and W_k_before keys of size {Wk.shape[1]}: "
            f"a dot product needs the same d_k for both."
        )
    X, target = _before_sequences()
    failed = []
    for s in range(_N_SYM):
        q, K = X[s, 4] @ Wq, X[s] @ Wk
        with np.errstate(over="ignore"):
            w = reference_softmax(q @ K.T)
        if w[target[s]] < 0.9:
            failed.append((s, w))
    if not failed:
        passed("every query ?s gives at least 0.9 of its attention to the item under the letter before s "
               "(?A to H).")
        return
    s, w = failed[0]
    letters = [_LETTERS[int(X[s, p, :_N_SYM].argmax())] for p in range(4)]
    top = int(w.argmax())
    who = "the query token itself" if top == 4 else f"the item {letters[top]}"
    where = (f"the query ?{_LETTERS[s]} gives the item {_LETTERS[(s - 1) % _N_SYM]} (the letter before) "
             f"{w[target[s]]:.2f} of its attention and most to {who} ({w[top]:.2f})")
    if np.ptp(w) < 1e-9:
        where = (f"the query ?{_LETTERS[s]} spreads its attention evenly ({w[0]:.2f} on each token): its "
                 f"query and the keys do not meet")
    wanted = {(s + 1) % _N_SYM: "the letter after: your shift goes the wrong way (roll the other way).",
              s: "its own letter, the distractor: the query and key letters match one to one; shift one of them."}
    if len(failed) == 1 and s == 0:
        raise ExerciseError(f"{where}. Only ?A fails: before A comes H (the alphabet wraps around, like the "
                            f"task's H -> A); np.eye(8, k=...) does not wrap, np.roll does.")
    if top < 4 and letters[top] in {_LETTERS[k] for k in wanted}:
        reason = wanted[_LETTERS.index(letters[top])]
        raise ExerciseError(f"{where}: it attends to {reason}")
    if top == 4:
        raise ExerciseError(f"{where}. The query token matches its own key: the flag row or the letter rows "
                            f"make q . k largest for the query itself.")
    if top == target[s]:
        raise ExerciseError(f"{where}: the right item has the largest weight, but not 0.9 of it. Make the "
                            f"scores larger (multiply W_q_before by a bigger number).")
    raise ExerciseError(f"{where}.")
