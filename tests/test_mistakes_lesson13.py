"""Lesson 13's checks name each typical mistake, written as a learner would write it, and no other; two
different right answers pass; a shortcut that skips what an exercise teaches does not."""

from __future__ import annotations

import numpy as np
import pytest
from mistakes import message, names_only, right_answer_passes

from selfattention import checks

# ------------------------------------------------------------------------------- exercise 1
DECODE_PHRASES = {
    "old": "the new token's key and value are missing", "unscaled": "are not scaled",
    "d_v": "divided by sqrt(d_v)", "sum": "every weight is 1", "front": "has the new row first",
    "not_grown": "as many as before the step", "one": "should return three things",
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


DECODE_WRONG = {"old": decode_old, "unscaled": decode_unscaled, "d_v": decode_d_v, "sum": decode_axis,
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
ROOFLINE_PHRASES = {
    "per_seq": "read once per sequence", "cache_once": "each sequence has its own cache", "add": "were added",
    "flops1": "2 FLOPs, not 1", "no_cache": "caches are missing", "bytes1": "counted as 1 byte",
    "ms": "in milliseconds",
}


def roofline_right(n_params, cache_bytes_per_token, T, batch, bandwidth, flops_per_s):
    reading = (2 * n_params + batch * T * cache_bytes_per_token) / bandwidth
    return max(reading, 2 * n_params * batch / flops_per_s)


def roofline_right_steps(n_params, cache_bytes_per_token, T, batch, bandwidth, flops_per_s):
    weights_bytes = n_params * 2
    cache_bytes = cache_bytes_per_token * T * batch
    reading = (weights_bytes + cache_bytes) / bandwidth
    computing = batch * n_params * 2 / flops_per_s
    return reading if reading > computing else computing


ROOFLINE_WRONG = {
    "per_seq": lambda n, c, T, b, bw, f: max((2 * n * b + b * T * c) / bw, 2 * n * b / f),
    "cache_once": lambda n, c, T, b, bw, f: max((2 * n + T * c) / bw, 2 * n * b / f),
    "add": lambda n, c, T, b, bw, f: (2 * n + b * T * c) / bw + 2 * n * b / f,
    "flops1": lambda n, c, T, b, bw, f: max((2 * n + b * T * c) / bw, n * b / f),
    "no_cache": lambda n, c, T, b, bw, f: max(2 * n / bw, 2 * n * b / f),
    "bytes1": lambda n, c, T, b, bw, f: max((n + b * T * c) / bw, 2 * n * b / f),
    "ms": lambda n, c, T, b, bw, f: 1e3 * max((2 * n + b * T * c) / bw, 2 * n * b / f),
}


@pytest.mark.parametrize("answer", [roofline_right, roofline_right_steps])
def test_roofline_right_answers_pass(answer, capsys):
    right_answer_passes(checks.check_decode_step_seconds, answer, capsys)


@pytest.mark.parametrize("key", list(ROOFLINE_WRONG))
def test_roofline_mistake_is_named(key):
    names_only(message(checks.check_decode_step_seconds, ROOFLINE_WRONG[key]), key, ROOFLINE_PHRASES)


def test_roofline_shortcut_memory_only_fails():
    """Only the memory time (the batch-1 intuition, no FLOPs at all) fails on the compute-bound case."""
    text = message(checks.check_decode_step_seconds, lambda n, c, T, b, bw, f: (2 * n + b * T * c) / bw)
    assert "batch=4096" in text


# ------------------------------------------------------------------------------- exercise 3
BLOCKS_PHRASES = {
    "pool_order": "in the pool's order", "sorted": "in sorted order", "slots": "read across blocks",
    "untrimmed": "every slot of the last block",
}


def blocks_right(pool, block_table, length):
    return pool[block_table].reshape(-1, pool.shape[-1])[:length]


def blocks_right_loop(pool, block_table, length):
    B = pool.shape[1]
    return np.array([pool[block_table[p // B], p % B] for p in range(length)])


BLOCKS_WRONG = {
    "pool_order": lambda pool, table, n: pool.reshape(-1, pool.shape[-1])[:n],
    "sorted": lambda pool, table, n: np.concatenate([pool[b] for b in sorted(table)])[:n],
    "slots": lambda pool, table, n: np.concatenate(list(pool[table].transpose(1, 0, 2)))[:n],
    "untrimmed": lambda pool, table, n: np.concatenate([pool[b] for b in table]),
}


@pytest.mark.parametrize("answer", [blocks_right, blocks_right_loop])
def test_blocks_right_answers_pass(answer, capsys):
    right_answer_passes(checks.check_read_blocks, answer, capsys)


@pytest.mark.parametrize("key", list(BLOCKS_WRONG))
def test_blocks_mistake_is_named(key):
    names_only(message(checks.check_read_blocks, BLOCKS_WRONG[key]), key, BLOCKS_PHRASES)


def test_blocks_shortcut_first_blocks_fails():
    """Reading the first blocks of the pool as if the table were 0, 1, 2 is the pool-order mistake."""
    shortcut = lambda pool, table, n: pool[: len(table)].reshape(-1, pool.shape[-1])[:n]  # noqa: E731
    names_only(message(checks.check_read_blocks, shortcut), "pool_order", BLOCKS_PHRASES)
