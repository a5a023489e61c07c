"""Lesson 13's checks name each typical mistake, written as a learner would write it, and no other; two
different right answers pass; a shortcut that skips what an exercise teaches does not."""

from __future__ import annotations

import math

import numpy as np
import pytest
from mistakes import message, names_only, right_answer_passes

from selfattention import checks

# ------------------------------------------------------------------------------- exercise 1
DECODE_PHRASES = {
    "old": "the new token's key and value are missing", "unscaled": "are not scaled",
    "d_v": "divided by sqrt(d_v)", "sum": "every weight is 1", "front": "has the new row first",
    "not_grown": "as many as before the step", "one": "should return three things",
    "k_as_q": "k_new was used as the query", "sqrt_T": "number of cached tokens",
    "sqrt_T1": "number of tokens (T + 1)",
}


def _softmax(s):
    e = np.exp(s - s.max())
    return e / e.sum()


def decode_right(q, k_new, v_new, K_cache, V_cache):
    K = np.concatenate([K_cache, k_new[None, :]], axis=0)
    V = np.concatenate([V_cache, v_new[None, :]], axis=0)
    return _softmax(K @ q / np.sqrt(len(q))) @ V, K, V


def decode_right_vstack(q, k_new, v_new, K_cache, V_cache):
    """Another right answer: vstack, then the weights as a (1, T+1) row, softmax along axis -1."""
    K, V = np.vstack([K_cache, k_new]), np.vstack([V_cache, v_new])
    scores = (q[None, :] @ K.T) / np.sqrt(K.shape[1])
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    return (weights @ V)[0], K, V


def decode_old(q, k_new, v_new, K_cache, V_cache):
    z = _softmax(K_cache @ q / np.sqrt(len(q))) @ V_cache  # attends before appending
    return z, np.vstack([K_cache, k_new]), np.vstack([V_cache, v_new])


def decode_unscaled(q, k_new, v_new, K_cache, V_cache):
    K, V = np.vstack([K_cache, k_new]), np.vstack([V_cache, v_new])
    return _softmax(K @ q) @ V, K, V


def decode_d_v(q, k_new, v_new, K_cache, V_cache):
    K, V = np.vstack([K_cache, k_new]), np.vstack([V_cache, v_new])
    return _softmax(K @ q / np.sqrt(V.shape[1])) @ V, K, V


def decode_axis(q, k_new, v_new, K_cache, V_cache):
    K, V = np.vstack([K_cache, k_new]), np.vstack([V_cache, v_new])
    s = (K @ q / np.sqrt(len(q)))[None, :]  # (1, T+1)
    w = np.exp(s - s.max(axis=0, keepdims=True))
    w = w / w.sum(axis=0, keepdims=True)  # softmax over the axis of length 1
    return (w @ V)[0], K, V


def decode_front(q, k_new, v_new, K_cache, V_cache):
    K, V = np.vstack([k_new, K_cache]), np.vstack([v_new, V_cache])  # prepended
    return _softmax(K @ q / np.sqrt(len(q))) @ V, K, V


def decode_not_grown(q, k_new, v_new, K_cache, V_cache):
    K, V = np.vstack([K_cache, k_new]), np.vstack([V_cache, v_new])
    return _softmax(K @ q / np.sqrt(len(q))) @ V, K_cache, V_cache


def decode_one(q, k_new, v_new, K_cache, V_cache):
    K, V = np.vstack([K_cache, k_new]), np.vstack([V_cache, v_new])
    return _softmax(K @ q / np.sqrt(len(q))) @ V


def decode_k_as_q(q, k_new, v_new, K_cache, V_cache):
    K, V = np.vstack([K_cache, k_new]), np.vstack([V_cache, v_new])
    return _softmax(K @ k_new / np.sqrt(len(q))) @ V, K, V


def decode_sqrt_T(q, k_new, v_new, K_cache, V_cache):
    K, V = np.vstack([K_cache, k_new]), np.vstack([V_cache, v_new])
    return _softmax(K @ q / np.sqrt(len(K_cache))) @ V, K, V


def decode_sqrt_T1(q, k_new, v_new, K_cache, V_cache):
    K, V = np.vstack([K_cache, k_new]), np.vstack([V_cache, v_new])
    return _softmax(K @ q / np.sqrt(len(K))) @ V, K, V


DECODE_WRONG = {"k_as_q": decode_k_as_q, "sqrt_T": decode_sqrt_T, "sqrt_T1": decode_sqrt_T1,
                "old": decode_old, "unscaled": decode_unscaled, "d_v": decode_d_v, "sum": decode_axis,
                "front": decode_front, "not_grown": decode_not_grown, "one": decode_one}


@pytest.mark.parametrize("answer", [decode_right, decode_right_vstack])
def test_decode_right_answers_pass(answer, capsys):
    right_answer_passes(checks.check_decode_step, answer, capsys)


@pytest.mark.parametrize("key", list(DECODE_WRONG))
def test_decode_mistake_is_named(key):
    names_only(message(checks.check_decode_step, DECODE_WRONG[key]), key, DECODE_PHRASES)


def test_decode_without_max_subtraction_overflows_on_the_large_case():
    def naive(q, k_new, v_new, K_cache, V_cache):
        K, V = np.vstack([K_cache, k_new]), np.vstack([V_cache, v_new])
        e = np.exp(K @ q / np.sqrt(len(q)))
        return e / e.sum() @ V, K, V
    text = message(checks.check_decode_step, naive)
    assert "NaN or infinite" in text and "subtract each row's maximum" in text


def test_decode_shortcut_that_recomputes_full_attention_without_growing_the_cache_fails():
    """Skipping the cache (recompute attention from the caches alone, never return the grown ones) fails."""
    def shortcut(q, k_new, v_new, K_cache, V_cache):
        z = decode_right(q, k_new, v_new, K_cache, V_cache)[0]
        return z, K_cache, V_cache
    names_only(message(checks.check_decode_step, shortcut), "not_grown", DECODE_PHRASES)


# ------------------------------------------------------------------------------- exercise 2
BOUND_PHRASES = {
    "no_cache": "the caches are missing", "flops1": "2 FLOPs, not 1", "bytes1": "counted as 1 byte",
    "none": "a batch is a whole number", "floor": "rounded down", "negative": "a negative batch",
    "per_seq": "read once per step for the whole batch", "no_T": "the cache of one token",
}


def bound_right(n_params, cache_bytes_per_token, T, bandwidth, flops_per_s):
    gain = 2 * n_params / flops_per_s - T * cache_bytes_per_token / bandwidth
    return math.ceil(2 * n_params / bandwidth / gain) if gain > 0 else math.inf


def bound_right_search(n_params, cache_bytes_per_token, T, bandwidth, flops_per_s):
    """Another right answer: grow the batch until the FLOP time catches up (doubling, then bisection)."""
    def compute_bound(b):
        return 2 * n_params * b / flops_per_s >= (2 * n_params + b * T * cache_bytes_per_token) / bandwidth
    if 2 * n_params / flops_per_s <= T * cache_bytes_per_token / bandwidth:
        return float("inf")
    high = 1
    while not compute_bound(high):
        high *= 2
    low = high // 2
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if compute_bound(mid) else (mid, high)
    return high


def _bound(n, c, T, bw, f, *, flops=2, wbytes=2, cache=True, rounding=math.ceil, inf=True):
    gain = flops * n / f - (T * c / bw if cache else 0)
    if gain <= 0 and inf:
        return math.inf
    exact = wbytes * n / bw / gain
    return rounding(exact) if rounding else exact


BOUND_WRONG = {
    "no_cache": lambda n, c, T, bw, f: _bound(n, c, T, bw, f, cache=False),
    "flops1": lambda n, c, T, bw, f: _bound(n, c, T, bw, f, flops=1),
    "bytes1": lambda n, c, T, bw, f: _bound(n, c, T, bw, f, wbytes=1),
    "none": lambda n, c, T, bw, f: _bound(n, c, T, bw, f, rounding=None),
    "floor": lambda n, c, T, bw, f: _bound(n, c, T, bw, f, rounding=math.floor),
    "negative": lambda n, c, T, bw, f: _bound(n, c, T, bw, f, rounding=None, inf=False) if (
        2 * n / f <= T * c / bw) else _bound(n, c, T, bw, f),
    "per_seq": lambda n, c, T, bw, f: math.inf,
    # the cache counted for one token, not T: on the lesson's cases this gives the no-cache batch
    "no_T": lambda n, c, T, bw, f: _bound(n, c, 1, bw, f),
}


@pytest.mark.parametrize("answer", [bound_right, bound_right_search])
def test_bound_right_answers_pass(answer, capsys):
    right_answer_passes(checks.check_compute_bound_batch, answer, capsys)


@pytest.mark.parametrize("key", list(BOUND_WRONG))
def test_bound_mistake_is_named(key):
    names_only(message(checks.check_compute_bound_batch, BOUND_WRONG[key]), key, BOUND_PHRASES)


def test_bound_shortcut_flops_per_byte_fails():
    """The H100's FLOPs per byte, the batch with no cache at all, is not the answer once caches are read."""
    text = message(checks.check_compute_bound_batch, lambda n, c, T, bw, f: math.ceil(f / bw))
    assert "the caches are missing" in text


# ------------------------------------------------------------------------------- exercise 3
PLACE_PHRASES = {
    "swapped": "are swapped", "plus_one": "off by one", "divisor": "the slots per block, not by",
    "early": "took a block although", "late": "needed a new block", "pop_end": "free_blocks.pop(0)",
}


def place_right(block_table, length, free_blocks, B):
    if length % B == 0:
        block_table.append(free_blocks.pop(0))
    return block_table[length // B], length % B


def place_right_last(block_table, length, free_blocks, B):
    """Another right answer: count the used slots, and the slot within the last block."""
    if len(block_table) * B <= length:
        block_table.append(free_blocks.pop(0))
    return block_table[-1], length - (len(block_table) - 1) * B


def _place(table, length, free, B, *, alloc=lambda n, t, B: n % B == 0, where=lambda n, B: (n // B, n % B),
           pop=0):
    if alloc(length, table, B):
        table.append(free.pop(pop))
    i, slot = where(length, B)
    return table[i], slot


PLACE_WRONG = {
    "swapped": lambda t, n, f, B: _place(t, n, f, B, where=lambda n, B: (n % B, n // B)),
    "plus_one": lambda t, n, f, B: _place(t, n, f, B, where=lambda n, B: ((n + 1) // B, (n + 1) % B)),
    "divisor": lambda t, n, f, B: _place(t, n, f, B, where=lambda n, B: (n // (B - 1), n % (B - 1))),
    "early": lambda t, n, f, B: _place(t, n, f, B, alloc=lambda n, t, B: n % B == B - 1 or not t),
    "late": lambda t, n, f, B: _place(t, n, f, B, alloc=lambda n, t, B: n > len(t) * B),
    "pop_end": lambda t, n, f, B: _place(t, n, f, B, pop=-1),
}


@pytest.mark.parametrize("answer", [place_right, place_right_last])
def test_place_right_answers_pass(answer, capsys):
    right_answer_passes(checks.check_place_token, answer, capsys)


@pytest.mark.parametrize("key", list(PLACE_WRONG))
def test_place_mistake_is_named(key):
    names_only(message(checks.check_place_token, PLACE_WRONG[key]), key, PLACE_PHRASES)


def test_place_shortcut_that_reads_without_allocating_fails():
    """Computing the place but never taking a block (the read side only) is named: the table must grow."""
    names_only(message(checks.check_place_token, lambda t, n, f, B: (n // B, n % B)), "late", PLACE_PHRASES)
