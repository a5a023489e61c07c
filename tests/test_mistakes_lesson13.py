"""Lesson 13's checks name each typical mistake, written as a learner would write it, and no other."""

from __future__ import annotations

import numpy as np
import pytest

from selfattention import checks
from selfattention.checks import ExerciseError

# A phrase unique to each named mistake's message, per check.
KV_PHRASES = {
    "keys": "only the keys are counted", "gib": "GiB", "layers": "the layers are missing",
    "batch": "the batch is missing", "bytes": "the bytes per number are missing", "square": "grows like T^2",
}
ROPE_PHRASES = {
    "interleaved": "neighbouring features", "direction": "the wrong way", "exponent": "the exponent is i/d",
    "from1": "positions start at 1", "swap": "cos and sin are swapped",
}
GQA_PHRASES = {
    "tile": "round-robin", "unscaled": "are not scaled", "d_v": "divided by sqrt(d_v)",
    "T": "divided by sqrt(T)", "axis": "over the queries", "first": "the first key/value group only",
}


def _message(check, fn) -> str:
    with pytest.raises(ExerciseError) as err:
        check(fn)
    return str(err.value)


def _names_only(message: str, phrases: dict[str, str], key: str) -> None:
    named = [k for k, p in phrases.items() if p in message]
    assert named == [key], f"expected only {key!r} to be named, got {named}: {message}"


# ------------------------------------------------------------------------------- exercise 1
def kv_right(num_layers, num_kv_heads, d_k, T, batch=1, bytes_per_number=2):
    return 2 * num_layers * num_kv_heads * d_k * T * batch * bytes_per_number / 1e9


KV_WRONG = {
    "keys": lambda L, g, d, T, b=1, n=2: L * g * d * T * b * n / 1e9,
    "gib": lambda L, g, d, T, b=1, n=2: 2 * L * g * d * T * b * n / 2**30,
    "layers": lambda L, g, d, T, b=1, n=2: 2 * g * d * T * b * n / 1e9,
    "batch": lambda L, g, d, T, b=1, n=2: 2 * L * g * d * T * n / 1e9,
    "bytes": lambda L, g, d, T, b=1, n=2: 2 * L * g * d * T * b / 1e9,
    "square": lambda L, g, d, T, b=1, n=2: 2 * L * g * d * T * T * b * n / 1e9,
}


def test_kv_right_answer_is_correct(capsys):
    checks.check_kv_cache_gb(kv_right)
    assert capsys.readouterr().out.startswith("Correct:")


@pytest.mark.parametrize("key", list(KV_WRONG))
def test_kv_mistake_is_named(key):
    _names_only(_message(checks.check_kv_cache_gb, KV_WRONG[key]), KV_PHRASES, key)


# ------------------------------------------------------------------------------- exercise 2
def rope_right(x, base=10000.0):
    T, d = x.shape
    angles = np.arange(T)[:, None] * base ** (-np.arange(0, d, 2) / d)
    x1, x2 = x[:, : d // 2], x[:, d // 2:]
    return np.concatenate([x1 * np.cos(angles) - x2 * np.sin(angles),
                           x2 * np.cos(angles) + x1 * np.sin(angles)], axis=1)


def rope_interleaved(x, base=10000.0):
    T, d = x.shape
    out = np.zeros_like(x)
    for p in range(T):
        for i in range(d // 2):
            a = p / base ** (2 * i / d)
            out[p, 2 * i] = x[p, 2 * i] * np.cos(a) - x[p, 2 * i + 1] * np.sin(a)
            out[p, 2 * i + 1] = x[p, 2 * i + 1] * np.cos(a) + x[p, 2 * i] * np.sin(a)
    return out


def rope_direction(x, base=10000.0):
    T, d = x.shape
    angles = np.arange(T)[:, None] * base ** (-np.arange(0, d, 2) / d)
    x1, x2 = x[:, : d // 2], x[:, d // 2:]
    return np.concatenate([x1 * np.cos(angles) + x2 * np.sin(angles),
                           x2 * np.cos(angles) - x1 * np.sin(angles)], axis=1)


def rope_exponent(x, base=10000.0):
    T, d = x.shape
    angles = np.arange(T)[:, None] / base ** (np.arange(d // 2) / d)
    x1, x2 = x[:, : d // 2], x[:, d // 2:]
    return np.hstack([x1 * np.cos(angles) - x2 * np.sin(angles), x2 * np.cos(angles) + x1 * np.sin(angles)])


def rope_from1(x, base=10000.0):
    T, d = x.shape
    angles = np.arange(1, T + 1)[:, None] * base ** (-np.arange(0, d, 2) / d)
    x1, x2 = x[:, : d // 2], x[:, d // 2:]
    return np.hstack([x1 * np.cos(angles) - x2 * np.sin(angles), x2 * np.cos(angles) + x1 * np.sin(angles)])


def rope_swap(x, base=10000.0):
    T, d = x.shape
    angles = np.arange(T)[:, None] * base ** (-np.arange(0, d, 2) / d)
    x1, x2 = x[:, : d // 2], x[:, d // 2:]
    return np.hstack([x1 * np.sin(angles) - x2 * np.cos(angles), x2 * np.sin(angles) + x1 * np.cos(angles)])


ROPE_WRONG = {"interleaved": rope_interleaved, "direction": rope_direction, "exponent": rope_exponent,
              "from1": rope_from1, "swap": rope_swap}


def test_rope_right_answer_is_correct(capsys):
    checks.check_rope(rope_right)
    assert capsys.readouterr().out.startswith("Correct:")


@pytest.mark.parametrize("key", list(ROPE_WRONG))
def test_rope_mistake_is_named(key):
    _names_only(_message(checks.check_rope, ROPE_WRONG[key]), ROPE_PHRASES, key)


# ------------------------------------------------------------------------------- exercise 3
def _softmax(s, axis=-1):
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def gqa_right(Q, K, V):
    r = Q.shape[0] // K.shape[0]
    K, V = np.repeat(K, r, axis=0), np.repeat(V, r, axis=0)
    return _softmax(Q @ K.transpose(0, 2, 1) / np.sqrt(Q.shape[-1])) @ V


def gqa_tile(Q, K, V):
    r = Q.shape[0] // K.shape[0]
    K, V = np.tile(K, (r, 1, 1)), np.tile(V, (r, 1, 1))
    return _softmax(Q @ K.transpose(0, 2, 1) / np.sqrt(Q.shape[-1])) @ V


def gqa_unscaled(Q, K, V):
    r = Q.shape[0] // K.shape[0]
    return _softmax(Q @ np.repeat(K, r, axis=0).transpose(0, 2, 1)) @ np.repeat(V, r, axis=0)


def gqa_d_v(Q, K, V):
    r = Q.shape[0] // K.shape[0]
    scores = Q @ np.repeat(K, r, axis=0).transpose(0, 2, 1) / np.sqrt(V.shape[-1])
    return _softmax(scores) @ np.repeat(V, r, 0)


def gqa_T(Q, K, V):
    r = Q.shape[0] // K.shape[0]
    return _softmax(Q @ np.repeat(K, r, axis=0).transpose(0, 2, 1) / np.sqrt(K.shape[1])) @ np.repeat(V, r, 0)


def gqa_axis(Q, K, V):
    r = Q.shape[0] // K.shape[0]
    scores = Q @ np.repeat(K, r, axis=0).transpose(0, 2, 1) / np.sqrt(Q.shape[-1])
    return _softmax(scores, axis=1) @ np.repeat(V, r, 0)


def gqa_first(Q, K, V):
    return _softmax(Q @ K[0].T / np.sqrt(Q.shape[-1])) @ V[0]


GQA_WRONG = {"tile": gqa_tile, "unscaled": gqa_unscaled, "d_v": gqa_d_v, "T": gqa_T, "axis": gqa_axis,
             "first": gqa_first}


def test_gqa_right_answer_is_correct(capsys):
    checks.check_grouped_query_attention(gqa_right)
    assert capsys.readouterr().out.startswith("Correct:")


@pytest.mark.parametrize("key", list(GQA_WRONG))
def test_gqa_mistake_is_named(key):
    _names_only(_message(checks.check_grouped_query_attention, GQA_WRONG[key]), GQA_PHRASES, key)


def test_gqa_softmax_without_max_subtraction_overflows_on_the_large_case():
    def naive(Q, K, V):
        r = Q.shape[0] // K.shape[0]
        e = np.exp(Q @ np.repeat(K, r, axis=0).transpose(0, 2, 1) / np.sqrt(Q.shape[-1]))
        return e / e.sum(axis=-1, keepdims=True) @ np.repeat(V, r, 0)
    with np.errstate(over="ignore", invalid="ignore"):
        message = _message(checks.check_grouped_query_attention, naive)
    assert "NaN or infinite" in message and "subtract each row's maximum" in message
