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
    "sign": "the sine term has the wrong sign", "adjacent": "paired as (2i, 2i + 1)",
    "theta": "the frequencies are off", "cos_only": "only the cosine term", "scaled": "divided by sqrt(d)",
}


def _pairs(q, k, adjacent=False):
    d = len(q)
    if adjacent:
        return q[0::2], q[1::2], k[0::2], k[1::2]
    return q[: d // 2], q[d // 2:], k[: d // 2], k[d // 2:]


def _score(q, k, offset, base, *, sign=1, adjacent=False, exponent=2.0, sine=True, scale=1.0):
    d = len(q)
    a1, a2, b1, b2 = _pairs(q, k, adjacent)
    t = sign * offset * base ** (-exponent * np.arange(d // 2) / d)
    return float(np.sum((a1 * b1 + a2 * b2) * np.cos(t) + sine * (a1 * b2 - a2 * b1) * np.sin(t))) / scale


def rope_right(q, k, offset, base=10_000):
    return _score(q, k, offset, base)


def rope_right_matrices(q, k, offset, base=10_000):
    """Another right answer: per pair, a^T R(-offset theta_i) b with an explicit 2 x 2 rotation matrix."""
    d, total = len(q), 0.0
    for i in range(d // 2):
        t = -offset * base ** (-2 * i / d)
        R = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
        total += np.array([q[i], q[i + d // 2]]) @ R @ np.array([k[i], k[i + d // 2]])
    return total


ROPE_WRONG = {
    "sign": lambda q, k, o, base=10_000: _score(q, k, o, base, sign=-1),
    "adjacent": lambda q, k, o, base=10_000: _score(q, k, o, base, adjacent=True),
    "theta": lambda q, k, o, base=10_000: _score(q, k, o, base, exponent=1.0),
    "cos_only": lambda q, k, o, base=10_000: _score(q, k, o, base, sine=False),
    "scaled": lambda q, k, o, base=10_000: _score(q, k, o, base, scale=np.sqrt(len(q))),
}


@pytest.mark.parametrize("answer", [rope_right, rope_right_matrices])
def test_rope_right_answers_pass(answer, capsys):
    right_answer_passes(checks.check_rope_score, answer, capsys)


@pytest.mark.parametrize("answer", [rope_right, rope_right_matrices])
def test_rope_right_answers_pass_the_hidden_test(answer):
    assert hidden_test_passes("14_long_context", "l14-rope-test", rope_score=answer)


@pytest.mark.parametrize("key", list(ROPE_WRONG))
def test_rope_mistake_is_named(key):
    names_only(message(checks.check_rope_score, ROPE_WRONG[key]), key, ROPE_PHRASES)


def rope(x, positions, base=1e4):
    """The lesson's own rotation, as a learner's notebook defines it in section 1."""
    d = x.shape[-1]
    angle = positions[:, None] * base ** (-np.arange(0, d, 2) / d)
    x1, x2 = x[:, : d // 2], x[:, d // 2:]
    return np.concatenate([x1 * np.cos(angle) - x2 * np.sin(angle), x1 * np.sin(angle) + x2 * np.cos(angle)],
                          axis=-1)


def rope_shortcut(q, k, offset, base=10_000):
    """The shortcut: rotate q at offset and k at 0 with the lesson's rope (right numbers, no derivation)."""
    rotated_q = rope(q[None], np.array([float(offset)]), base)
    rotated_k = rope(k[None], np.array([0.0]), base)
    return float((rotated_q @ rotated_k.T)[0, 0])


def test_rope_shortcut_that_rotates_fails_check_and_hidden_test():
    q, k = np.arange(4.0), np.ones(4)
    assert rope_shortcut(q, k, 3, 10.0) == pytest.approx(_score(q, k, 3, 10.0))   # right numbers
    assert "rotates q and k" in message(checks.check_rope_score, rope_shortcut)
    assert not hidden_test_passes("14_long_context", "l14-rope-test", rope_score=rope_shortcut)


def test_rope_shortcut_through_the_package_fails():
    import torch

    def via_rotary(q, k, offset, base=10_000):
        qt = sa.llm.rotary(torch.tensor(q)[None], torch.tensor([float(offset)]), base)
        return float(qt @ sa.llm.rotary(torch.tensor(k)[None], torch.tensor([0.0]), base).T)
    assert "rotates q and k" in message(checks.check_rope_score, via_rotary)


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
