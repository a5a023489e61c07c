"""Checks for lesson 14 (long context): a RoPE score derived from the offset alone, the cache of a
local/global interleave of layers, and RoPE's wavelengths against a trained length."""

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

__all__ = ["check_rope_score", "check_interleave_cache", "check_rope_turns", "rotates", "uses_rope_frequencies"]


# ----------------------------------------------------------- exercise 1: a RoPE score from the offset
def rotates(fn: Callable[..., Any]) -> bool:
    """Whether ``fn``, or a function of the learner's that it reaches, rotates vectors: calls the lesson's
    ``rope`` (a function of the learner's of that name) or the package's ``sa.llm.rotary``."""
    for f in learners_functions(fn):
        if f is not fn and getattr(f, "__name__", "") == "rope":
            return True
        if any(obj is llm.rotary for obj in used_objects(f).values()):
            return True
        code = getattr(f, "__code__", None)
        if code is not None and "rotary" in code_names(code):
            return True
    return False


def _rope_score(q: np.ndarray, k: np.ndarray, offset: float, base: float, *, sign: float = 1.0,
                adjacent: bool = False, exponent: float = 2.0, sine: bool = True) -> float:
    d = len(q)
    angle = sign * offset * base ** (-exponent * np.arange(d // 2) / d)
    if adjacent:
        a1, a2, b1, b2 = q[0::2], q[1::2], k[0::2], k[1::2]
    else:
        a1, a2, b1, b2 = q[: d // 2], q[d // 2:], k[: d // 2], k[d // 2:]
    cross = (a1 * b2 - a2 * b1) * np.sin(angle) if sine else 0.0
    return float(np.sum((a1 * b1 + a2 * b2) * np.cos(angle) + cross))


# (d, offset, base): a positive offset, a negative one, and a slow base with a long offset
_ROPE_CASES = [(4, 3, 10.0), (16, -40, 10_000.0), (8, 1000, 500_000.0)]


def check_rope_score(rope_score: Callable[..., Any]) -> None:
    """Exercise 1: the score of q at m and k at n from offset = m - n, per pair:
    sum_i (a . b) cos(offset theta_i) + (a1 b2 - a2 b1) sin(offset theta_i)."""
    if not callable(rope_score):
        raise ExerciseError("rope_score should be a function: write it in the answer cell above.")
    if rotates(rope_score):
        raise ExerciseError("rope_score rotates q and k (it calls the lesson's rope or sa.llm.rotary): derive the "
                            "score from the offset pair by pair instead, with R(a)^T R(b) = R(b - a).")
    rng = np.random.default_rng(1414)
    for d, offset, base in _ROPE_CASES:
        q, k = rng.normal(size=(2, d))
        call = f"rope_score(q, k, offset={offset}, base={base:,.0f}) with d = {d}"
        try:
            got = rope_score(q.copy(), k.copy(), offset, base)
        except Exception as exc:
            raise ExerciseError(f"{call} raised {type(exc).__name__}: {exc}") from None
        right = _rope_score(q, k, offset, base)
        hints = {
            "the sine term has the wrong sign: offset is m - n, the query's position minus the key's. Taking "
            "n - m, or writing the cross term a2 b1 - a1 b2, flips it.": _rope_score(q, k, offset, base, sign=-1),
            "features were paired as (2i, 2i + 1); section 1 pairs feature i with feature i + d/2.":
                _rope_score(q, k, offset, base, adjacent=True),
            "the frequencies are off: theta_i = base^(-2i/d) for pair i = 0, ..., d/2 - 1, not base^(-i/d).":
                _rope_score(q, k, offset, base, exponent=1.0),
            "only the cosine term is there: R(b - a) also mixes the two features of a pair, which adds "
            "(a1 b2 - a2 b1) sin(offset theta_i).": _rope_score(q, k, offset, base, sine=False),
            "the score was divided by sqrt(d): the exercise asks for the plain dot product of the rotated "
            "vectors.": right / np.sqrt(d),
        }
        hints = {m: v for m, v in hints.items() if not np.isclose(v, right)}
        check_value(got, right, call, hints=hints)
    passed("a score from the offset alone: per pair, (a . b) cos(offset theta_i) + (a1 b2 - a2 b1) "
           "sin(offset theta_i); positions m and n enter only as m - n.")


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
