"""Checks for lesson 13 (generation and memory): one decode step with a KV cache, the lower bound on the
time of a decode step, and reading a sequence's keys through its block table."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ._engine import ExerciseError, _to_array, check_array, check_value, passed

__all__ = ["check_decode_step", "check_compute_bound_batch", "check_place_token"]


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
    # moderate scores, T = 6 cached tokens, d_k = 5: every wrong scale (sqrt(T), sqrt(T + 1)) shows
    moderate = (rng.normal(size=(7, 5)) * 1.5, rng.normal(size=(7, 5)) * 1.5, rng.normal(size=(7, 3)))
    return [small, (Q, K, V), moderate]


def _decode_variants(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> dict[str, np.ndarray]:
    q, d_k = Q[-1], Q.shape[1]
    return {
        "right": _softmax(K @ q / np.sqrt(d_k)) @ V,
        "old": _softmax(K[:-1] @ q / np.sqrt(d_k)) @ V[:-1],
        "unscaled": _softmax(K @ q) @ V,
        "d_v": _softmax(K @ q / np.sqrt(V.shape[1])) @ V,
        "sum": np.ones(len(K)) @ V,
        "first": _softmax(K @ Q[0] / np.sqrt(d_k)) @ V,
        "k_as_q": _softmax(K @ K[-1] / np.sqrt(d_k)) @ V,
        "sqrt_T": _softmax(K @ q / np.sqrt(len(K) - 1)) @ V,
        "sqrt_T1": _softmax(K @ q / np.sqrt(len(K))) @ V,
    }


_DECODE_WORDS = {
    "old": "the new token's key and value are missing from what the query attended to: append them to the caches "
           "first, then attend over all T + 1 tokens (a token may attend to itself under the causal mask).",
    "unscaled": "the scores are not scaled: divide them by sqrt(d_k).",
    "d_v": "the scores were divided by sqrt(d_v), the size of the values; the scale is sqrt(d_k), the size of "
           "queries and keys.",
    "k_as_q": "the new token's key k_new was used as the query: the scores compare the query q with every key "
              "(K @ q).",
    "sqrt_T": "the scores were divided by the square root of the number of cached tokens; the scale is sqrt(d_k), "
              "the size of queries and keys, whatever the length.",
    "sqrt_T1": "the scores were divided by the square root of the number of tokens (T + 1); the scale is "
               "sqrt(d_k), the size of queries and keys, whatever the length.",
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


# ------------------------------------------------- exercise 2: the batch where decoding turns compute-bound
def _bound_batch(n: float, c: float, T: int, bw: float, f: float, *, flops_per_weight: float = 2.0,
                 weight_bytes: float = 2.0, no_cache: bool = False, rounding: str = "ceil") -> float:
    """Smallest batch b with flops_per_weight n b / f >= (weight_bytes n + b T c) / bw (math.inf if none)."""
    gain = flops_per_weight * n / f - (0.0 if no_cache else T * c / bw)  # seconds gained per extra sequence
    need = weight_bytes * n / bw
    if rounding == "none_negative":  # the formula without the case where no batch gets there
        return need / gain
    if gain <= 0:
        return math.inf
    exact = need / gain
    return {"ceil": math.ceil(exact), "floor": math.floor(exact), "none": exact}[rounding]


_BOUND_WORDS = {
    "no_cache": ("the caches are missing (or counted once for the whole batch): every sequence in the batch "
                 "brings its own cache of T x cache_bytes_per_token bytes, read at every step."),
    "flops1": "each weight does a multiply and an add per sequence: 2 FLOPs, not 1.",
    "bytes1": "the weights were counted as 1 byte each; they are stored in 2 bytes (float16).",
    "none": "a batch is a whole number of sequences: round the exact solution up (math.ceil).",
    "floor": ("that was rounded down: at that batch the FLOPs still take less time than the reading. Round "
              "up (math.ceil)."),
}

# the 70B shape of section 4 (g = 8) on an H100, 512 tokens per text; a 7B model on another GPU; the 70B
# shape at 4,096 tokens, where each sequence's cache takes longer to read than its FLOPs take
_BOUND_CASES = [(68_976_648_192, 327_680, 512, 3.35e12, 989e12), (7e9, 131_072, 100, 2e12, 5e14),
                (68_976_648_192, 327_680, 4096, 3.35e12, 989e12)]


# a cache of 1 MB per token: forgetting to multiply it by T gives a batch (255) that neither the right answer
# (inf) nor leaving the cache out (250) gives, so the two slips, which agree on the cases above, can be told apart
_PROBE = (7e9, 1_000_000, 100, 2e12, 5e14)
_NO_T_WORDS = ("each sequence's cache was counted as cache_bytes_per_token bytes, the cache of one token: a "
               "sequence of T tokens brings T x cache_bytes_per_token bytes, read at every step.")


def _forgot_T(compute_bound_batch: Callable[..., Any]) -> bool:
    """Whether the answer gives, on the probe case, the batch of a cache counted for one token, not T."""
    n, c, _, bw, f = _PROBE
    try:
        got = float(np.asarray(compute_bound_batch(*_PROBE)).item())
    except Exception:
        return False
    return math.isclose(got, _bound_batch(n, c, 1, bw, f), rel_tol=1e-9)


def check_compute_bound_batch(compute_bound_batch: Callable[..., Any]) -> None:
    """Exercise 2: the smallest batch at which a decode step's FLOP time reaches its reading time."""
    if not callable(compute_bound_batch):
        raise ExerciseError("compute_bound_batch should be a function: write it in the answer cell above.")
    for case in _BOUND_CASES:
        n, c, T, bw, f = case
        call = (f"compute_bound_batch(n_params={n:,.0f}, cache_bytes_per_token={c:,}, T={T}, "
                f"bandwidth={bw:.3g}, flops_per_s={f:.3g})")
        try:
            got = compute_bound_batch(*case)
        except Exception as exc:
            raise ExerciseError(f"{call} raised {type(exc).__name__}: {exc}") from None
        right = _bound_batch(*case)
        try:
            value = float(np.asarray(got).item()) if hasattr(got, "__array__") else float(got)
        except (TypeError, ValueError):
            value = None  # check_value names it
        if value is not None and math.isinf(right) and value < 0:
            raise ExerciseError(f"{call} = {value:,.1f}, a negative batch: here each sequence's cache takes "
                                f"longer to read than its FLOPs take, so adding sequences never catches up and "
                                f"no batch is compute-bound. Return math.inf when that happens.")
        if value is not None and math.isinf(value) and not math.isinf(right):
            raise ExerciseError(f"{call} = inf, but a large enough batch gets there here: the weights are read "
                                f"once per step for the whole batch (not once per sequence), while their FLOPs "
                                f"grow with the batch.")
        if (value is not None and not math.isclose(value, right, rel_tol=1e-9)
                and math.isclose(value, _bound_batch(n, c, 1, bw, f), rel_tol=1e-9) and _forgot_T(compute_bound_batch)):
            raise ExerciseError(f"{call} = {value:,.0f} is not right yet: {_NO_T_WORDS}")
        hints: dict[str, float] = {}
        for key, words in _BOUND_WORDS.items():
            kwargs: dict[str, Any] = {"no_cache": {"no_cache": True}, "flops1": {"flops_per_weight": 1.0},
                                      "bytes1": {"weight_bytes": 1.0}, "none": {"rounding": "none"},
                                      "floor": {"rounding": "floor"}}[key]
            wrong = _bound_batch(*case, **kwargs)
            if wrong != right and not math.isinf(wrong):
                hints.setdefault(words, wrong)
        check_value(got, right, call, hints=hints, rtol=1e-9, atol=0)
    n, c, T = _BOUND_CASES[0][:3]
    room = 2 * 80 * 2**30 - 2 * n  # bytes two H100s (80 GiB each) leave after the float16 weights
    passed(f"at 512 tokens per text the 70B shape turns compute-bound at a batch of {_bound_batch(*_BOUND_CASES[0])} "
           f"(on one H100 or two: both speeds double), against {math.ceil(989e12 / 3.35e12)} with no cache at all. "
           f"But the {room / 1e9:.1f} GB two H100s leave after the weights hold only {int(room // (T * c))} caches "
           f"of 512 tokens ({room / 1e9:.1f}e9 / (512 x {c:,})): memory capacity caps the batch before the "
           f"roofline does. At 4,096 tokens never: each sequence's cache takes longer to read than its FLOPs take.")


# ---------------------------------------------------------------- exercise 3: the block allocator
# (block_table, length, free_blocks, B, tokens to append one after another)
_PLACE_CASES = [([], 0, [7, 2, 5, 9, 4, 0], 4, 11), ([3], 2, [6, 1, 8], 3, 6)]


def _place_right(table: list[int], length: int, free: list[int], B: int) -> tuple[int, int]:
    if length == len(table) * B:  # no block yet, or the last one full
        table.append(free.pop(0))
    return table[length // B], length % B


class _Table(list):  # type: ignore[type-arg]
    """A block table that answers a look-up past its end with -1 - index instead of raising, so that the
    check can tell which entry an answer looked up."""

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, (int, np.integer)) and i >= len(self):
            return -1 - int(i)
        return super().__getitem__(i)


def check_place_token(place_token: Callable[..., Any]) -> None:
    """Exercise 3: the paged cache's allocator step: take a block when the last is full, return
    (block, slot) of the new token; run on tokens appended one after another."""
    if not callable(place_token):
        raise ExerciseError("place_token should be a function: write it in the answer cell above.")
    for table0, length0, free0, B, n in _PLACE_CASES:
        table, free = _Table(table0), list(free0)
        want_table, want_free = list(table0), list(free0)
        for p in range(length0, length0 + n):  # p: the new token's position, = length
            call = f"place_token(block_table={list(table)}, length={p}, free_blocks={free}, B={B})"
            right = _place_right(want_table, p, want_free, B)
            before = len(table)
            try:
                got = place_token(table, p, free, B)
            except Exception as exc:
                raise ExerciseError(f"{call} raised {type(exc).__name__}: {exc}") from None
            if got is None or got is Ellipsis:
                raise ExerciseError(f"{call} returns nothing yet: return (block, slot).")
            new, need = len(table) - before, len(want_table) - before
            if new > need:
                raise ExerciseError(f"{call} took a block although the last one still had a free slot for token "
                                    f"{p}. Take a block only when length == len(block_table) * B (an "
                                    f"off-by-one?).")
            if new < need:
                raise ExerciseError(f"{call}: token {p} needed a new block (the {before} block(s) hold "
                                    f"{before * B} slots, all used) but none was taken. Take one when "
                                    f"length == len(block_table) * B, before looking the block up.")
            if list(table) != want_table:
                raise ExerciseError(f"{call} appended block {list.__getitem__(table, -1)} to the table; take the "
                                    f"first free block, free_blocks.pop(0), which is {want_table[-1]}.")
            try:
                block, slot = (int(x) for x in got)
            except (TypeError, ValueError):
                raise ExerciseError(f"{call} returned {got!r:.80}; return two whole numbers, (block, slot).") from None
            if (block, slot) == right:
                continue
            index = -1 - block if block < 0 else (want_table.index(block) if block in want_table else None)
            shown = f"block_table[{index}], slot {slot}" if index is not None else f"block {block}, slot {slot}"
            if (index, slot) == (p % B, p // B):
                raise ExerciseError(f"{call} gave {shown}: // and % are swapped. Token {p} lives in block "
                                    f"block_table[{p} // B] at slot {p} % B.")
            for d in (B - 1, B + 1):
                if d > 0 and (index, slot) == (p // d, p % d):
                    raise ExerciseError(f"{call} gave {shown}: divide by B = {B}, the slots per block, not by {d}.")
            if (index, slot) == ((p + 1) // B, (p + 1) % B):
                raise ExerciseError(f"{call} gave {shown}, the place of token {p + 1}: off by one. Counting "
                                    f"from 0, the new token's position is length = {p}.")
            raise ExerciseError(f"{call} gave {shown}; token {p} goes to block_table[{p // B}], slot "
                                f"{right[1]}.")
    passed("each token found its slot, and a block was taken from the free list exactly when the last was full.")
