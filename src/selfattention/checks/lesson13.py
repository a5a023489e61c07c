"""Checks for lesson 13 (attention in today's language models): the memory of a KV cache with
grouped-query attention, rotary position embeddings, and grouped-query attention itself."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._engine import check_function, passed, reference_softmax

__all__ = ["check_kv_cache_gb", "check_rope", "check_grouped_query_attention"]


# ---------------------------------------------------------------- exercise 1: KV-cache memory
def _kv_reference(num_layers: int, num_kv_heads: int, d_k: int, T: int, batch: int = 1,
                  bytes_per_number: int = 2) -> float:
    return 2 * num_layers * num_kv_heads * d_k * T * batch * bytes_per_number / 1e9


def _kv_mistakes(case: tuple[int, ...]) -> dict[str, float]:
    L, g, d_k, T, b, nbytes = case
    right = _kv_reference(*case)
    return {
        "only the keys are counted: the cache holds a key AND a value for every token, head and layer "
        "(a factor 2).": right / 2,
        "it is in GiB (2**30 bytes); the exercise asks for GB (10**9 bytes).": right * 1e9 / 2**30,
        "the layers are missing: every layer keeps its own keys and values.": right / L,
        "the batch is missing: every sequence in the batch has its own cache.": right / b,
        "the bytes per number are missing: multiply the count of numbers by bytes_per_number.":
            right / nbytes,
        "it grows like T^2, as the score matrix did in lesson 09; the cache stores one key and one value "
        "per token, so it grows like T.": right * T,
    }


def _kv_cases() -> list[tuple[int, ...]]:
    # Every factor differs from the others and from 2, so each mistake gives its own number.
    return [(6, 3, 16, 100, 5, 4), (80, 8, 128, 32_768, 3, 2), (32, 32, 128, 4096, 7, 4)]


def check_kv_cache_gb(kv_cache_gb: Callable[..., Any]) -> None:
    """Exercise 1: gigabytes held by the keys and values a model caches."""
    check_function(
        kv_cache_gb, _kv_reference, _kv_cases(), "kv_cache_gb", mistakes=_kv_mistakes, rtol=1e-6,
        describe=lambda c: (f"num_layers={c[0]}, num_kv_heads={c[1]}, d_k={c[2]}, T={c[3]:,}, "
                            f"batch={c[4]}, bytes_per_number={c[5]}"),
    )
    full, grouped = _kv_reference(80, 64, 128, 32_768), _kv_reference(80, 8, 128, 32_768)
    passed(f"80 layers, d_k=128, 32,768 tokens in float16: {full:.1f} GB with 64 key/value heads, "
           f"{grouped:.1f} GB with 8.")


# ---------------------------------------------------------------- exercise 2: rotary positions
def _rope_variant(x: np.ndarray, base: float = 10000.0, *, interleaved: bool = False, sign: float = 1.0,
                  exponent: float = 2.0, first: int = 0, swap: bool = False) -> np.ndarray:
    T, d = x.shape
    inv_freq = base ** (-exponent * np.arange(d // 2) / d)
    angles = np.arange(first, first + T)[:, None] * inv_freq  # (T, d/2)
    cos, sin = np.cos(angles), sign * np.sin(angles)
    if swap:
        cos, sin = sin, cos
    if interleaved:
        x1, x2 = x[:, 0::2], x[:, 1::2]
        out = np.empty_like(x)
        out[:, 0::2], out[:, 1::2] = x1 * cos - x2 * sin, x2 * cos + x1 * sin
        return out
    x1, x2 = x[:, : d // 2], x[:, d // 2 :]
    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=1)


def _rope_reference(x: np.ndarray, base: float = 10000.0) -> np.ndarray:
    return _rope_variant(x, base)


def _rope_mistakes(case: tuple[np.ndarray, float]) -> dict[str, np.ndarray]:
    x, base = case
    return {
        "neighbouring features (2i, 2i+1) were paired, as in the RoFormer paper; this exercise uses the "
        "half-split layout of Llama: feature i pairs with feature i + d/2.": _rope_variant(x, base, interleaved=True),
        "the rotation goes the wrong way: the first half gets x1 cos - x2 sin, the second half "
        "x2 cos + x1 sin.": _rope_variant(x, base, sign=-1.0),
        "the exponent is i/d; it should be 2i/d (frequency base^(-2i/d) for pair i).": _rope_variant(
            x, base, exponent=1.0),
        "positions start at 1; the first token is at position 0 (its vector is not rotated at all).":
            _rope_variant(x, base, first=1),
        "cos and sin are swapped: pair i at position p is rotated by the angle p * base^(-2i/d), "
        "which multiplies by cos of it and adds sin of it times the partner.": _rope_variant(x, base, swap=True),
    }


def _rope_cases() -> list[tuple[np.ndarray, float]]:
    rng = np.random.default_rng(80)
    return [(rng.normal(size=(3, 4)), 10000.0), (rng.normal(size=(7, 10)), 10000.0),
            (rng.normal(size=(5, 8)) * 3, 100.0)]


def check_rope(rope: Callable[..., Any]) -> None:
    """Exercise 2: rotary position embedding of (T, d) vectors at positions 0..T-1, half-split layout."""
    check_function(rope, _rope_reference, _rope_cases(), "rope", mistakes=_rope_mistakes,
                   describe=lambda c: f"x of shape {c[0].shape}, base={c[1]:g}")
    passed("your rotation matches sa.llm.rotary (half-split layout), for d = 4, 8 and 10.")


# ---------------------------------------------------------- exercise 3: grouped-query attention
def _gqa_variant(Q: np.ndarray, K: np.ndarray, V: np.ndarray, *, tile: bool = False, scale: str = "d_k",
                 axis: int = -1, first_group: bool = False) -> np.ndarray:
    h, g = Q.shape[0], K.shape[0]
    if first_group:
        K, V = K[:1], V[:1]
        g = 1
    if tile:
        K, V = np.tile(K, (h // g, 1, 1)), np.tile(V, (h // g, 1, 1))
    else:
        K, V = np.repeat(K, h // g, axis=0), np.repeat(V, h // g, axis=0)
    divisor = {"d_k": np.sqrt(Q.shape[-1]), "none": 1.0, "d_v": np.sqrt(V.shape[-1]),
               "T": np.sqrt(K.shape[-2])}[scale]
    return reference_softmax(Q @ np.swapaxes(K, -1, -2) / divisor, axis=axis) @ V


def _gqa_reference(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> np.ndarray:
    return _gqa_variant(Q, K, V)


def _gqa_mistakes(case: tuple[np.ndarray, np.ndarray, np.ndarray]) -> dict[str, np.ndarray]:
    Q, K, V = case
    return {
        "the groups were assigned round-robin (np.tile: heads 0, 1, 2, 3 -> groups 0, 1, 0, 1). Neighbouring "
        "query heads share a group: head i uses group i // (h // g), which np.repeat(K, h // g, axis=0) "
        "gives.": _gqa_variant(Q, K, V, tile=True),
        "the scores are not scaled: divide Q K^T by sqrt(d_k).": _gqa_variant(Q, K, V, scale="none"),
        "the scores were divided by sqrt(d_v), the size of the values; the scale is sqrt(d_k), the size "
        "of queries and keys.": _gqa_variant(Q, K, V, scale="d_v"),
        "the scores were divided by sqrt(T); the scale is sqrt(d_k), the size of queries and keys.":
            _gqa_variant(Q, K, V, scale="T"),
        "the softmax was taken over the queries (axis -2); each query's weights over the keys must sum "
        "to 1 (axis -1).": _gqa_variant(Q, K, V, axis=-2),
        "every head used the first key/value group only; query head i uses group i // (h // g).":
            _gqa_variant(Q, K, V, first_group=True),
    }


def _gqa_cases() -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(81)
    # h=4 heads, g=2 groups, T=5 tokens, d_k=3, d_v=6: no two sizes coincide.
    small = (rng.normal(size=(4, 5, 3)), rng.normal(size=(2, 5, 3)), rng.normal(size=(2, 5, 6)))
    # h=6, g=3, T=7, d_k=4, d_v=2, with scores in the hundreds: exp without the maximum subtracted overflows.
    large = (rng.normal(size=(6, 7, 4)) * 30, rng.normal(size=(3, 7, 4)) * 30, rng.normal(size=(3, 7, 2)))
    return [small, large]


def check_grouped_query_attention(grouped_query_attention: Callable[..., Any]) -> None:
    """Exercise 3: h query heads sharing g key/value heads, NumPy, no mask."""
    check_function(
        grouped_query_attention, _gqa_reference, _gqa_cases(), "grouped_query_attention",
        mistakes=_gqa_mistakes,
        describe=lambda c: (f"h={c[0].shape[0]} query heads, g={c[1].shape[0]} groups, T={c[0].shape[1]}, "
                            f"d_k={c[0].shape[2]}, d_v={c[2].shape[2]}"),
    )
    passed("each group of query heads attends to its own shared keys and values, as "
           "scaled_dot_product_attention(..., enable_gqa=True) does.")
