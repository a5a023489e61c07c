"""Checks for lesson 13 (generation and memory): one decode step with a KV cache, the lower bound on the
time of a decode step, and reading a sequence's keys through its block table."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._engine import ExerciseError, _to_array, check_array, check_value, passed

__all__ = ["check_decode_step", "check_decode_step_seconds", "check_read_blocks"]


# ---------------------------------------------------------------- exercise 1: one decode step
def _softmax(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max())
    return e / e.sum()


def _decode_cases() -> list[tuple[np.ndarray, ...]]:
    """(Q, K, V) of T+1 tokens: the step's query is Q[-1], its key and value K[-1], V[-1]."""
    rng = np.random.default_rng(1300)
    small = (rng.normal(size=(5, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 3)))
    # scores in the hundreds, and the newest key the most similar to the query: exp() overflows without
    # the maximum subtracted, and leaving the newest token out changes the answer a lot
    Q, K, V = rng.normal(size=(9, 6)) * 25, rng.normal(size=(9, 6)) * 25, rng.normal(size=(9, 2))
    K[-1] = Q[-1] * 0.8
    return [small, (Q, K, V)]


def _decode_variants(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> dict[str, np.ndarray]:
    q, d_k = Q[-1], Q.shape[1]
    return {
        "right": _softmax(K @ q / np.sqrt(d_k)) @ V,
        "old": _softmax(K[:-1] @ q / np.sqrt(d_k)) @ V[:-1],
        "unscaled": _softmax(K @ q) @ V,
        "d_v": _softmax(K @ q / np.sqrt(V.shape[1])) @ V,
        "sum": np.ones(len(K)) @ V,
        "first": _softmax(K @ Q[0] / np.sqrt(d_k)) @ V,
    }


_DECODE_WORDS = {
    "old": "the new token's key and value are missing from what the query attended to: append them to the caches "
           "first, then attend over all T + 1 tokens (a token may attend to itself under the causal mask).",
    "unscaled": "the scores are not scaled: divide them by sqrt(d_k).",
    "d_v": "the scores were divided by sqrt(d_v), the size of the values; the scale is sqrt(d_k), the size of "
           "queries and keys.",
    "sum": "every weight is 1, so the output is the sum of the values: the softmax was taken over an axis of "
           "length 1. Take it over the T + 1 scores (the keys).",
}


def check_decode_step(decode_step: Callable[..., Any]) -> None:
    """Exercise 1: one decode step (append the new key and value, attend one query) against full causal
    attention over all tokens; the caches returned must hold the old rows, then the new one."""
    if not callable(decode_step):
        raise ExerciseError("decode_step should be a function: write it in the answer cell above.")
    for Q, K, V in _decode_cases():
        what = f"T = {len(K) - 1} cached tokens, d_k = {K.shape[1]}, d_v = {V.shape[1]}"
        try:
            result = decode_step(Q[-1].copy(), K[-1].copy(), V[-1].copy(), K[:-1].copy(), V[:-1].copy())
        except Exception as exc:  # the learner's code crashed
            raise ExerciseError(f"decode_step raised {type(exc).__name__} on {what}: {exc}") from None
        if result is None or result is Ellipsis:
            raise ExerciseError("decode_step returns nothing yet: return z, the grown K cache and V cache.")
        if not isinstance(result, tuple) or len(result) != 3:
            raise ExerciseError("decode_step should return three things, z, K_cache and V_cache "
                                "(return z, K, V), not one.")
        z, K_new, V_new = (_to_array(part, name) for part, name in zip(result, ("z", "K_cache", "V_cache"), strict=True))
        for got, want, name in ((K_new, K, "the returned K_cache"), (V_new, V, "the returned V_cache")):
            if got.shape == want.shape and np.allclose(got, np.roll(want, 1, axis=0)):
                raise ExerciseError(f"{name} has the new row first: append it at the end, after the "
                                    f"{len(K) - 1} cached rows (the order of positions).")
            if got.shape == want[:-1].shape:
                raise ExerciseError(f"{name} has {got.shape[0]} rows, as many as before the step: append the new "
                                    f"row (np.concatenate or np.vstack) and return the grown cache.")
            check_array(got, want, name)
        variants = _decode_variants(Q, K, V)
        mistakes = {_DECODE_WORDS[k]: v for k, v in variants.items() if k in _DECODE_WORDS}
        check_array(z, variants["right"], f"z (on {what})", mistakes=mistakes)
    passed("z is the last row of causal attention over all T + 1 tokens, and the caches grew by one row each.")


# ---------------------------------------------------------------- exercise 2: the roofline
def _roofline(n: float, c: float, T: int, b: int, bw: float, f: float, *, weights_per_seq: bool = False,
              cache_once: bool = False, add: bool = False, flops_per_weight: float = 2.0,
              no_cache: bool = False, weight_bytes: float = 2.0) -> float:
    weights = weight_bytes * n * (b if weights_per_seq else 1)
    cache = 0.0 if no_cache else (1 if cache_once else b) * T * c
    memory, compute = (weights + cache) / bw, flops_per_weight * n * b / f
    return memory + compute if add else max(memory, compute)


_ROOFLINE_WORDS = {
    "weights_per_seq": ("the weights are read once per sequence; they are read once per step for the whole "
                        "batch (that is why batching helps)."),
    "cache_once": "each sequence has its own cache: the cache bytes are batch x T x cache_bytes_per_token.",
    "add": ("the two times were added; reading and computing overlap, so the step takes at least the larger "
            "of the two (max), not their sum."),
    "flops_per_weight": "each weight does a multiply and an add per sequence: 2 FLOPs, not 1.",
    "no_cache": "the caches are missing from the bytes read: every sequence's cache is read at every step.",
    "weight_bytes": "the weights were counted as 1 byte each; they are stored in 2 bytes (float16).",
}


def _roofline_cases() -> list[tuple[float, ...]]:
    # memory-bound (batch 3, long texts), then compute-bound (batch 4096, short texts): every mistake gives
    # another number on the first case it changes
    return [(7e9, 131072.0, 2048, 3, 2e12, 5e14), (7e9, 131072.0, 64, 4096, 2e12, 5e14)]


def check_decode_step_seconds(decode_step_seconds: Callable[..., Any]) -> None:
    """Exercise 2: the lower bound max(bytes / bandwidth, FLOPs / peak) of one decode step."""
    if not callable(decode_step_seconds):
        raise ExerciseError("decode_step_seconds should be a function: write it in the answer cell above.")
    for case in _roofline_cases():
        n, c, T, b, bw, f = case
        what = (f"n_params={n:.0e}, cache_bytes_per_token={c:,.0f}, T={T}, batch={b}, bandwidth={bw:.0e}, "
                f"flops_per_s={f:.0e}")
        try:
            got = decode_step_seconds(*case)
        except Exception as exc:
            raise ExerciseError(f"decode_step_seconds raised {type(exc).__name__} on {what}: {exc}") from None
        hints = {}
        for key, words in _ROOFLINE_WORDS.items():
            value = {"flops_per_weight": 1.0, "weight_bytes": 1.0}.get(key, True)
            wrong = _roofline(*case, **{key: value})
            if not np.isclose(wrong, _roofline(*case), rtol=1e-6):
                hints.setdefault(words, wrong)
        hints[("it is in milliseconds; the exercise asks for seconds.")] = 1e3 * _roofline(*case)
        check_value(got, _roofline(*case), f"decode_step_seconds({what})", hints=hints, rtol=1e-6, atol=0)
    memory_bound = _roofline(*_roofline_cases()[0])
    passed(f"a step of 3 long sequences of a 7B model takes at least {1e3 * memory_bound:.1f} ms, "
           f"nearly all of it reading memory.")


# ---------------------------------------------------------------- exercise 3: block table
def _blocks_cases() -> list[tuple[np.ndarray, list[int], int]]:
    rng = np.random.default_rng(1301)
    pool = rng.normal(size=(8, 4, 3))
    return [(pool, [5, 0, 3], 10), (rng.normal(size=(12, 5, 2)), [2, 9, 4, 7, 11], 21)]


def check_read_blocks(read_blocks: Callable[..., Any]) -> None:
    """Exercise 3: a sequence's (length, d) keys read from a (num_blocks, B, d) pool through its block table."""
    if not callable(read_blocks):
        raise ExerciseError("read_blocks should be a function: write it in the answer cell above.")
    for pool, table, length in _blocks_cases():
        B, d = pool.shape[1], pool.shape[2]
        what = f"a pool of {pool.shape[0]} blocks of {B}, block_table={table}, length={length}"
        try:
            got = read_blocks(pool.copy(), list(table), length)
        except Exception as exc:
            raise ExerciseError(f"read_blocks raised {type(exc).__name__} on {what}: {exc}") from None
        got = _to_array(got, "the result of read_blocks")
        right = pool[table].reshape(-1, d)[:length]
        if got.shape == (len(table) * B, d) and np.allclose(got, pool[table].reshape(-1, d)):
            raise ExerciseError(f"the result has {got.shape[0]} rows: every slot of the last block, used or not. "
                                f"Keep the first `length` rows, the sequence's tokens (on {what}).")
        mistakes = {
            "the blocks were read in the pool's order (0, 1, 2, ...), not the block table's: token p lives in "
            "block block_table[p // B].": pool.reshape(-1, d)[:length],
            "the blocks were read in sorted order; the block table's order is the sequence's order, whatever "
            "the block numbers.": pool[sorted(table)].reshape(-1, d)[:length],
            "the slots of each block are read across blocks: reshape (blocks, B, d) to (blocks * B, d), so "
            "that each block's B slots stay together.": pool[table].transpose(1, 0, 2).reshape(-1, d)[:length],
        }
        check_array(got, right, f"the result of read_blocks (on {what})", mistakes=mistakes)
    passed("you read each token from block block_table[p // B], slot p % B: the sequence in order.")
