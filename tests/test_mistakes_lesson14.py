"""Lesson 14's checks name each typical mistake, written as a learner would write it, and no other; two
different right answers pass; a shortcut that skips what an exercise teaches does not."""

from __future__ import annotations

import numpy as np
import pytest
from mistakes import hidden_test_passes, message, names_only, right_answer_passes

import selfattention as sa
from selfattention import checks

# ------------------------------------------------------------------------------- exercise 1
ROPE_PHRASES = {
    "sign": "the sine coefficient has the wrong sign", "adjacent": "paired as (2i, 2i + 1)",
    "zero_sine": "s is zero", "swapped": "return (c, s) in that order",
    "whole_dot": "not the dot product of the whole",
}


def _pairs(q, k, adjacent=False):
    d = len(q)
    if adjacent:
        return q[0::2], q[1::2], k[0::2], k[1::2]
    return q[: d // 2], q[d // 2:], k[: d // 2], k[d // 2:]


def rope_right(q, k):
    a1, a2, b1, b2 = _pairs(q, k)
    return a1 * b1 + a2 * b2, a1 * b2 - a2 * b1


def rope_right_matrices(q, k):
    """Another right answer: per pair, a^T R(phi) b = cos(phi) a.b + sin(phi) a^T J b with
    phi = -offset theta_i, read off from the 2 x 2 matrices, returned as a list."""
    d, c, s = len(q), [], []
    J = np.array([[0.0, -1.0], [1.0, 0.0]])                # R(phi) = cos(phi) I + sin(phi) J
    for i in range(d // 2):
        a, b = np.array([q[i], q[i + d // 2]]), np.array([k[i], k[i + d // 2]])
        c.append(a @ b)
        s.append(-(a @ J @ b))                               # sin(-x) = -sin(x)
    return [np.array(c), np.array(s)]


def _wrong(kind):
    def answer(q, k):
        c, s = rope_right(q, k)
        if kind == "sign":
            return c, -s
        if kind == "adjacent":
            a1, a2, b1, b2 = _pairs(q, k, adjacent=True)
            return a1 * b1 + a2 * b2, a1 * b2 - a2 * b1
        if kind == "zero_sine":
            return c, np.zeros_like(s)
        if kind == "swapped":
            return s, c
        return np.full_like(c, q @ k), s                   # whole_dot
    return answer


ROPE_WRONG = {kind: _wrong(kind) for kind in ROPE_PHRASES}


@pytest.mark.parametrize("answer", [rope_right, rope_right_matrices])
def test_rope_right_answers_pass(answer, capsys):
    right_answer_passes(checks.check_rope_coefficients, answer, capsys)


@pytest.mark.parametrize("answer", [rope_right, rope_right_matrices])
def test_rope_right_answers_pass_the_hidden_test(answer):
    assert hidden_test_passes("14_long_context", "l14-rope-test", rope_coefficients=answer)


@pytest.mark.parametrize("key", list(ROPE_WRONG))
def test_rope_mistake_is_named(key):
    names_only(message(checks.check_rope_coefficients, ROPE_WRONG[key]), key, ROPE_PHRASES)
    assert not hidden_test_passes("14_long_context", "l14-rope-test", rope_coefficients=ROPE_WRONG[key])


def rope(x, positions, base=1e4):
    """The lesson's own rotation, as a learner's notebook defines it in section 1."""
    d = x.shape[-1]
    angle = positions[:, None] * base ** (-np.arange(0, d, 2) / d)
    x1, x2 = x[:, : d // 2], x[:, d // 2:]
    return np.concatenate([x1 * np.cos(angle) - x2 * np.sin(angle), x1 * np.sin(angle) + x2 * np.cos(angle)],
                          axis=-1)


def test_pasting_the_rotation_under_another_name_does_not_answer():
    """The old shortcut, the lesson's rotation pasted as `turn`, gives scores, not coefficients: it fails."""
    import types

    turn = types.FunctionType(rope.__code__, rope.__globals__, "turn", rope.__defaults__)

    def rotated_scores(q, k):
        return turn(q[None], np.array([3.0])) @ turn(k[None], np.array([0.0])).T, np.zeros(len(q) // 2)
    said = message(checks.check_rope_coefficients, rotated_scores)
    assert "c from rope_coefficients(q, k) with d = 4" in said and "rotates" not in said
    assert not hidden_test_passes("14_long_context", "l14-rope-test", rope_coefficients=rotated_scores)


def test_calling_rope_or_the_package_is_refused():
    import torch

    def via_rope(q, k):
        d = len(q)
        both = rope(q[None], np.array([0.0]))[0] * k
        return both[: d // 2] + both[d // 2:], np.zeros(d // 2)

    def via_rotary(q, k):
        qt = sa.llm.rotary(torch.tensor(q)[None], torch.tensor([0.0]))[0].numpy()
        return rope_right(qt, k)
    assert "rotates q and k" in message(checks.check_rope_coefficients, via_rope)
    assert "rotates q and k" in message(checks.check_rope_coefficients, via_rotary)
    assert not hidden_test_passes("14_long_context", "l14-rope-test", rope_coefficients=via_rotary)


# ------------------------------------------------------------------------------- exercise 2
INTERLEAVE_PHRASES = {
    "uncapped": "never holds more tokens than the text", "global_first": "one global layer too many",
    "fraction": "is not a whole number of global layers",
    "w_minus_1": "not window - 1", "all_global": "every layer was counted as global",
    "all_local": "every layer was counted as local", "no_plus_one": "misses the + 1",
    "kv_twice": "keys and values were counted apart",
}


def interleave_right(T, layers, window, local_per_global):
    period = local_per_global + 1
    n_global = layers // period
    return n_global * T + (layers - n_global) * min(T, window)


def interleave_right_loop(T, layers, window, local_per_global):
    return sum(T if layer % (local_per_global + 1) == local_per_global else min(window, T)
               for layer in range(layers))


def _loop(T, layers, window, k, *, cap=True, first=False, minus=False):
    total = 0
    for layer in range(layers):
        is_global = (layer % (k + 1) == 0) if first else (layer % (k + 1) == k)
        w = window - 1 if minus else window
        total += T if is_global else (min(T, w) if cap else w)
    return total


INTERLEAVE_WRONG = {
    "uncapped": lambda T, L, w, k: _loop(T, L, w, k, cap=False),
    "global_first": lambda T, L, w, k: _loop(T, L, w, k, first=True),
    "w_minus_1": lambda T, L, w, k: _loop(T, L, w, k, minus=True),
    "all_global": lambda T, L, w, k: L * T,
    "all_local": lambda T, L, w, k: L * min(T, w),
    "global_ceil": lambda T, L, w, k: -(-L // (k + 1)) * T + (L + (L // -(k + 1))) * min(T, w),
    "fraction": lambda T, L, w, k: L / (k + 1) * T + (L - L / (k + 1)) * min(T, w),
    "global_rounded": lambda T, L, w, k: round(L / (k + 1)) * T + (L - round(L / (k + 1))) * min(T, w),
    "no_plus_one": lambda T, L, w, k: (L // k) * T + (L - L // k) * min(T, w),
    "kv_twice": lambda T, L, w, k: 2 * interleave_right(T, L, w, k),
}


@pytest.mark.parametrize("answer", [interleave_right, interleave_right_loop])
def test_interleave_right_answers_pass(answer, capsys):
    right_answer_passes(checks.check_interleave_cache, answer, capsys)


@pytest.mark.parametrize("key", list(INTERLEAVE_WRONG))
def test_interleave_mistake_is_named(key):
    phrase_key = "global_first" if key in ("global_ceil", "global_rounded") else key
    names_only(message(checks.check_interleave_cache, INTERLEAVE_WRONG[key]), phrase_key, INTERLEAVE_PHRASES)


def test_interleave_a_rounded_count_fails_check_and_hidden_test_alike():
    """round(layers / (k + 1)) is right on 62, 12, 26 and 8 layers; 34 layers at 5:1 (Gemma 3 4B's shape, in
    the hidden test too) tells it apart."""
    rounded = INTERLEAVE_WRONG["global_rounded"]
    assert "one global layer too many" in message(checks.check_interleave_cache, rounded)
    assert not hidden_test_passes("14_long_context", "l14-interleave-test", interleave_cache=rounded)


def test_interleave_shortcut_with_a_fixed_ratio_fails():
    """A rule of thumb (a sixth of the layers global, whatever the pattern) does not pass."""
    def rule(T, layers, window, local_per_global):
        return layers / 6 * T + layers * 5 / 6 * min(T, window)
    with pytest.raises(checks.ExerciseError):
        checks.check_interleave_cache(rule)


# ------------------------------------------------------------------------------- exercise 3
TURNS_PHRASES = {
    "half_exponent": "not -i/d", "one_over_theta": "not 1 / theta_i", "from_one": "pairs are counted from 0",
    "more_than_one": "two or more full turns", "never": "never complete a turn",
    "theta": "returned in place of the wavelengths", "pi_over_theta": "is half a turn",
}


def turns_right(d, base, trained_length):
    theta = base ** (-2 * np.arange(d // 2) / d)
    wavelengths = 2 * np.pi / theta
    return wavelengths, int(np.sum(wavelengths <= trained_length))


def turns_right_loop(d, base, trained_length):
    """Another right answer: pair by pair, the largest trained angle L theta_i against one turn, 2 pi."""
    wavelengths, seen = [], 0
    for i in range(d // 2):
        theta = base ** (-2 * i / d)
        wavelengths.append(2 * np.pi / theta)
        if trained_length * theta >= 2 * np.pi:
            seen += 1
    return np.array(wavelengths), seen


def _turns(d, base, L, *, exponent=2.0, two_pi=True, first=0, count="right"):
    i = np.arange(first, first + d // 2)
    wavelengths = (2 * np.pi if two_pi else 1.0) * base ** (exponent * i / d)
    whole = L // wavelengths                                    # whole turns within the trained length
    seen = {"right": np.sum(whole >= 1), "more": np.sum(whole > 1), "never": np.sum(wavelengths > L)}[count]
    return wavelengths, int(seen)


TURNS_WRONG = {
    "half_exponent": lambda d, b, L: _turns(d, b, L, exponent=1.0),
    "one_over_theta": lambda d, b, L: _turns(d, b, L, two_pi=False),
    "from_one": lambda d, b, L: _turns(d, b, L, first=1),
    "more_than_one": lambda d, b, L: _turns(d, b, L, count="more"),
    "never": lambda d, b, L: _turns(d, b, L, count="never"),
    "theta": lambda d, b, L: (1 / _turns(d, b, L, two_pi=False)[0], _turns(d, b, L)[1]),
    "pi_over_theta": lambda d, b, L: (_turns(d, b, L)[0] / 2, _turns(d, b, L)[1]),
}


@pytest.mark.parametrize("answer", [turns_right, turns_right_loop])
def test_turns_right_answers_pass(answer, capsys):
    right_answer_passes(checks.check_rope_turns, answer, capsys)


@pytest.mark.parametrize("answer", [turns_right, turns_right_loop])
def test_turns_right_answers_pass_the_hidden_test(answer):
    assert hidden_test_passes("14_long_context", "l14-turns-test", rope_turns=answer)


@pytest.mark.parametrize("key", list(TURNS_WRONG))
def test_turns_mistake_is_named(key):
    names_only(message(checks.check_rope_turns, TURNS_WRONG[key]), key, TURNS_PHRASES)


def turns_shortcut(d, base, trained_length):
    """The shortcut: section 1's line through the package's frequencies (right numbers, nothing derived)."""
    wavelengths = 2 * np.pi / sa.llm.rope_frequencies(d, base)[0].numpy()
    return wavelengths, int(np.sum(wavelengths <= trained_length))


def test_turns_shortcut_through_the_package_fails_check_and_hidden_test():
    assert "calls sa.llm.rope_frequencies" in message(checks.check_rope_turns, turns_shortcut)
    assert not hidden_test_passes("14_long_context", "l14-turns-test", rope_turns=turns_shortcut)
