"""Checks for lesson 14 (long context): a RoPE score's coefficients per pair, fixed for every offset, the
cache of a local/global interleave of layers, and RoPE's wavelengths against a trained length."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import llm
from ._engine import (
    ExerciseError,
    check_array,
    check_value,
    code_names,
    learners_functions,
    passed,
    used_objects,
)

__all__ = ["check_rope_coefficients", "check_interleave_cache", "check_rope_turns", "rotates", "uses_rope_frequencies"]


# ------------------------------------------------ exercise 1: a RoPE score as a function of the offset
def rotates(fn: Callable[..., Any]) -> bool:
    """Whether ``fn``, or a function of the learner's that it reaches, calls the package's ``sa.llm.rotary``
    or a function of the learner's named ``rope``."""
    for f in learners_functions(fn):
        if f is not fn and getattr(f, "__name__", "") == "rope":
            return True
        if any(obj is llm.rotary for obj in used_objects(f).values()):
            return True
        code = getattr(f, "__code__", None)
        if code is not None and "rotary" in code_names(code):
            return True
    return False


def _coefficients(q: np.ndarray, k: np.ndarray, *, sign: float = 1.0,
                  adjacent: bool = False) -> tuple[np.ndarray, np.ndarray]:
    d = len(q)
    if adjacent:
        a1, a2, b1, b2 = q[0::2], q[1::2], k[0::2], k[1::2]
    else:
        a1, a2, b1, b2 = q[: d // 2], q[d // 2:], k[: d // 2], k[d // 2:]
    return a1 * b1 + a2 * b2, sign * (a1 * b2 - a2 * b1)


def _rotated_score(q: np.ndarray, k: np.ndarray, m: float, n: float, base: float = 10_000.0) -> float:
    """The score of q rotated at position m and k at n, by rotating them (what the coefficients replace)."""
    d = len(q)
    theta = base ** (-2 * np.arange(d // 2) / d)

    def turn(x: np.ndarray, p: float) -> np.ndarray:
        x1, x2, a = x[: d // 2], x[d // 2:], p * theta
        return np.concatenate([x1 * np.cos(a) - x2 * np.sin(a), x1 * np.sin(a) + x2 * np.cos(a)])

    return float(turn(q, m) @ turn(k, n))


def check_rope_coefficients(rope_coefficients: Callable[..., Any]) -> None:
    """Exercise 1: per pair i, c_i = a . b and s_i = a1 b2 - a2 b1, so that the score of q at m and k at n is
    sum_i c_i cos((m - n) theta_i) + s_i sin((m - n) theta_i)."""
    if not callable(rope_coefficients):
        raise ExerciseError("rope_coefficients should be a function: write it in the answer cell above.")
    if rotates(rope_coefficients):
        raise ExerciseError("rope_coefficients rotates q and k (it calls the lesson's rope or sa.llm.rotary): "
                            "the coefficients need no angle at all; derive them pair by pair from "
                            "R(phi)^T R(psi) = R(psi - phi).")
    rng = np.random.default_rng(1414)
    for d in (4, 16, 8):
        q, k = rng.normal(size=(2, d))
        call = f"rope_coefficients(q, k) with d = {d}"
        try:
            got = rope_coefficients(q.copy(), k.copy())
        except Exception as exc:
            raise ExerciseError(f"{call} raised {type(exc).__name__}: {exc}") from None
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise ExerciseError(f"{call} should return two arrays, (c, s), but it returned "
                                f"{type(got).__name__} {got!r:.80}.")
        c, s = _coefficients(q, k)
        ca, sa_ = _coefficients(q, k, adjacent=True)
        pairing = ("features were paired as (2i, 2i + 1); section 1 pairs feature i with feature i + d/2.")
        check_array(got[0], c, f"c from {call}", mistakes={
            pairing: ca,
            "those are the sine coefficients: c_i multiplies cos(offset theta_i), and a rotation by 0 leaves "
            "the plain dot product of the pair, a1 b1 + a2 b2; return (c, s) in that order.": s,
            "c_i is one number per pair, the dot product of that pair only (a1 b1 + a2 b2), not the dot "
            "product of the whole vectors.": np.full(d // 2, q @ k),
        })
        check_array(got[1], s, f"s from {call}", mistakes={
            "the sine coefficient has the wrong sign: offset is m - n, the query's position minus the key's, "
            "and a^T R((n - m) theta_i) b gives + (a1 b2 - a2 b1) sin(offset theta_i). Taking n - m flips it.": -s,
            pairing: sa_,
            "s is zero: the rotation R((n - m) theta_i) also mixes the two features of a pair, which adds "
            "(a1 b2 - a2 b1) sin(offset theta_i).": np.zeros(d // 2),
            "those are the cosine coefficients: s_i multiplies sin(offset theta_i), the cross term "
            "a1 b2 - a2 b1; return (c, s) in that order.": c,
        })
    q, k = rng.normal(size=(2, 16))
    c, s = (np.asarray(x, dtype=float) for x in rope_coefficients(q.copy(), k.copy()))
    theta = 1e4 ** (-2 * np.arange(8) / 16)
    parts = []
    for m, n in [(5, 2), (105, 102), (5, 4)]:
        mine = float(np.sum(c * np.cos((m - n) * theta) + s * np.sin((m - n) * theta)))
        parts.append(f"({m}, {n}) {mine:.4f} = {_rotated_score(q, k, m, n):.4f}")
    passed("the score is sum_i c_i cos(offset theta_i) + s_i sin(offset theta_i) with c, s fixed by q and k, "
           "so positions enter only as m - n. Yours against rotating the vectors (query, key positions; "
           "d = 16): " + ", ".join(parts) + ".")


# --------------------------------------------------- exercise 2: the cache of a local/global interleave
# the last: 34 / 6 = 5.67, so a count rounded to the nearest (6) is told from the right one (5)
_INTERLEAVE_CASES = [(131072, 62, 1024, 5), (500, 12, 1024, 1), (8192, 26, 512, 5), (4096, 8, 4096, 0),
                     (32768, 34, 1024, 5)]


def _interleave(T: int, layers: int, window: int, k: int, *, cap: bool = True, global_first: bool = False,
                window_minus_one: bool = False) -> int:
    total = 0
    for layer in range(layers):
        is_global = k == 0 or ((layer % (k + 1) == 0) if global_first else ((layer + 1) % (k + 1) == 0))
        w = window - 1 if window_minus_one else window
        total += T if is_global else (min(T, w) if cap else w)
    return total


def check_interleave_cache(interleave_cache: Callable[..., Any]) -> None:
    """Exercise 2: tokens held in the caches of all layers: min(T, window) per local layer, T per global."""
    if not callable(interleave_cache):
        raise ExerciseError("interleave_cache should be a function: write it in the answer cell above.")
    for T, layers, window, k in _INTERLEAVE_CASES:
        call = f"interleave_cache(T={T}, layers={layers}, window={window}, local_per_global={k})"
        try:
            got = interleave_cache(T, layers, window, k)
        except Exception as exc:
            raise ExerciseError(f"{call} raised {type(exc).__name__}: {exc}") from None
        hints = {
            "a local layer never holds more tokens than the text has: min(T, window).":
                _interleave(T, layers, window, k, cap=False),
            "that counts one global layer too many, ceil(layers / (local_per_global + 1)): as if the pattern "
            "began with its global layer, or with layers / (local_per_global + 1) rounded up or to the nearest. "
            "The pattern starts with local_per_global local layers, so only complete patterns end in a global "
            "one: layers // (local_per_global + 1) of them (layers local_per_global, 2 local_per_global + 1, ... "
            "counting from 0).": _interleave(T, layers, window, k, global_first=True),
            "a local layer holds window tokens (the newest one and the window - 1 before it), not window - 1.":
                _interleave(T, layers, window, k, window_minus_one=True),
            "every layer was counted as global.": layers * T,
        }
        hints["that is twice the count: keys and values were counted apart. The exercise counts tokens, each "
              "token's key and value together once per layer."] = 2 * _interleave(T, layers, window, k)
        if k:
            hints["every layer was counted as local."] = layers * min(T, window)
            n_wrong = layers // k
            hints["layers // local_per_global misses the + 1: one pattern is local_per_global local layers and "
                  "then its global one, local_per_global + 1 layers, so there are layers // (local_per_global "
                  "+ 1) global layers."] = n_wrong * T + (layers - n_wrong) * min(T, window)
            n_global = layers / (k + 1)
            hints["layers / (local_per_global + 1) is not a whole number of global layers: count only "
                  "complete patterns, layers // (local_per_global + 1)."] = (
                n_global * T + (layers - n_global) * min(T, window))
        right = _interleave(T, layers, window, k)
        hints = {e: v for e, v in hints.items() if v != right}
        check_value(got, right, call, hints=hints)
    full = 62 * 131072
    passed(f"with 5 local layers of 1,024 to 1 global, 62 layers at T = 131,072 hold "
           f"{_interleave(131072, 62, 1024, 5) / full:.1%} of the tokens of 62 global layers.")


# ------------------------------------------- exercise 3: which pairs turn a full circle in training
def uses_rope_frequencies(fn: Callable[..., Any]) -> bool:
    """Whether ``fn``, or a function of the learner's that it reaches, calls ``sa.llm.rope_frequencies``."""
    for f in learners_functions(fn):
        if any(obj is llm.rope_frequencies for obj in used_objects(f).values()):
            return True
        code = getattr(f, "__code__", None)
        if code is not None and "rope_frequencies" in code_names(code):
            return True
    return False


def _wavelengths(d: int, base: float, *, exponent: float = 2.0, two_pi: bool = True,
                 first: int = 0) -> np.ndarray:
    i = np.arange(first, first + d // 2)
    theta = base ** (-exponent * i / d)
    return (2 * np.pi if two_pi else 1.0) / theta


# (d, base, trained length): in each, some pair turns exactly once (1 <= L / wavelength < 2), and the
# pairs with at least one turn, those with two or more, and those with none are three different counts
_TURN_CASES = [(8, 10_000.0, 1000), (128, 10_000.0, 4096), (128, 500_000.0, 8192)]


def check_rope_turns(rope_turns: Callable[..., Any]) -> None:
    """Exercise 3: wavelengths 2 pi base^(2i/d), i = 0, ..., d/2 - 1, and the number of pairs whose
    wavelength fits in the trained length (at least one full turn)."""
    if not callable(rope_turns):
        raise ExerciseError("rope_turns should be a function: write it in the answer cell above.")
    if uses_rope_frequencies(rope_turns):
        raise ExerciseError("rope_turns calls sa.llm.rope_frequencies: compute theta_i = base^(-2i/d) from d and "
                            "base yourself.")
    for d, base, L in _TURN_CASES:
        call = f"rope_turns(d={d}, base={base:,.0f}, trained_length={L})"
        try:
            got = rope_turns(d, base, L)
        except Exception as exc:
            raise ExerciseError(f"{call} raised {type(exc).__name__}: {exc}") from None
        if not isinstance(got, tuple) or len(got) != 2:
            raise ExerciseError(f"{call} should return two things, (wavelengths, seen), but it returned "
                                f"{type(got).__name__} {got!r:.80}.")
        wavelengths, seen = got
        right = _wavelengths(d, base)
        mistakes = {
            "the exponent is -2i/d, not -i/d: theta_i = base^(-2i/d), so the slowest pair's wavelength is "
            "near 2 pi base, not 2 pi sqrt(base).": _wavelengths(d, base, exponent=1.0),
            "a wavelength is 2 pi / theta_i positions (one full turn is 2 pi radians), not 1 / theta_i.":
                _wavelengths(d, base, two_pi=False),
            "pairs are counted from 0: pair 0 has theta_0 = 1 and wavelength 2 pi; yours are shifted by one "
            "pair.": _wavelengths(d, base, first=1),
            "those are the angles theta_i = base^(-2i/d) per position, returned in place of the wavelengths: "
            "lambda_i = 2 pi / theta_i positions.": 1.0 / _wavelengths(d, base, two_pi=False),
            "pi / theta_i is half a turn: one full turn is 2 pi radians, so lambda_i = 2 pi / theta_i.":
                _wavelengths(d, base) / 2,
        }
        check_array(wavelengths, right, f"the wavelengths of {call}", mistakes=mistakes)
        turns = L / right
        hints = {
            "that counts the pairs with two or more full turns: a pair whose wavelength fits once in the "
            "trained length has completed one turn, so the test is L / wavelength >= 1 (or L theta_i >= 2 pi), "
            "not > 1 on whole turns.": float(np.sum(np.floor(turns) > 1)),
            "that counts the pairs that never complete a turn (wavelength longer than the trained length); the "
            "exercise asks for those that do.": float(np.sum(turns < 1)),
        }
        check_value(seen, float(np.sum(turns >= 1)), f"the count of {call}", hints=hints)
    slow = _wavelengths(128, 500_000.0)
    passed(f"with base 500,000 and d = 128, {int(np.sum(8192 / slow >= 1))} of the 64 pairs turn at least once "
           f"in 8,192 tokens; the slowest pair's wavelength is {slow[-1]:,.0f} tokens.")
