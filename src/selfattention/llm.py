"""Attention as today's language models use it (lesson 13).

* :class:`KVCache` keeps every layer's keys and values during generation, so each new token only
  computes its own query, key and value.
* :func:`grouped_query_attention` lets groups of query heads share one key/value head
  (multi-query attention is one group, ordinary multi-head attention one group per head).
* :func:`rotary` rotates queries and keys by their position (RoPE), in the half-split layout of
  the Llama family (``transformers``' ``apply_rotary_pos_emb``).
* :func:`sliding_window_mask` lets each token see only the last ``window`` tokens.
* :func:`tiled_attention` computes exact attention tile by tile with an online softmax and skips
  the tiles a causal mask empties.
* :class:`TinyDecoder` is a small character-level decoder (trained by ``tools/train_decoder.py``,
  weights shipped with the package) that generates text with or without a cache.

Shapes use the lessons' names: ``batch``, ``num_heads`` (h), ``num_kv_heads`` (g), ``T`` tokens,
``d_k`` features per head.
"""

from __future__ import annotations

import math
import os
import timeit
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from numpy.typing import ArrayLike, NDArray
from torch import Tensor, nn

from .validation import check_qkv, float_array
from .validation import positive_int as _positive_int

__all__ = [
    "zen_of_python",
    "KVCache",
    "BlockPool",
    "PagedKVCache",
    "grouped_query_attention",
    "rotary",
    "rope_frequencies",
    "stepwise_losses",
    "next_token_losses",
    "clue_beyond",
    "train_llama",
    "window_clue_table",
    "stretch_means",
    "stretch_table",
    "zen_inputs",
    "loss_runs",
    "stretching_report",
    "sink_report",
    "fine_tune",
    "fine_tune_report",
    "first_token_ratio",
    "weight_on_first",
    "llama_weights",
    "character_match",
    "scores_per_head",
    "sliding_window_mask",
    "tiled_attention",
    "TileCounts",
    "TinyDecoder",
    "load_decoder",
    "DECODER_WEIGHTS",
    "attention_mask",
    "RMSNorm",
    "LlamaDecoder",
    "load_llama",
    "LLAMA_WEIGHTS",
    "median_seconds",
    "time_batches",
]

#: The decoder's weights, written by ``tools/train_decoder.py``.
DECODER_WEIGHTS = Path(__file__).with_name("decoder.safetensors")


def zen_of_python() -> str:
    """The text both decoders are trained on: "The Zen of Python" (PEP 20, by Tim Peters), 856 characters,
    from the standard library's ``this`` module (``import this`` prints it; here it stays quiet)."""
    import codecs
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        import this
    return codecs.decode(this.s, "rot13")


# ------------------------------------------------------------------------------------------- KV cache
class KVCache:
    """The keys and values of every layer seen so far, grown by one step at a time.

    ``keys[layer]`` and ``values[layer]`` have shape (batch, num_kv_heads, T_cached, d_k);
    ``positions`` (T_cached,) holds the position in the text of each cached token (the same for every
    layer) and ``seen`` the number of tokens fed so far (the position of the next one). A rolling window
    (:meth:`keep`) drops tokens, so ``len(cache)`` (tokens held) can be less than ``seen``.
    """

    def __init__(self, num_layers: int) -> None:
        self.num_layers = _positive_int("num_layers", num_layers)
        self.keys: list[Tensor | None] = [None] * self.num_layers
        self.values: list[Tensor | None] = [None] * self.num_layers
        self.positions = torch.zeros(0, dtype=torch.long)
        self.seen = 0

    def __len__(self) -> int:
        """Number of cached tokens."""
        return int(self.positions.numel())

    def append(self, layer: int, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Add this step's keys and values, (batch, g, T_new, d_k), to ``layer``; return all of them.

        The new tokens take the positions ``seen, seen + 1, ...``; ``seen`` and ``positions`` move on when
        layer 0 appends (so append to layer 0 first at each step). Returns: keys and values of every
        cached token, (batch, g, T_cached + T_new, d_k).
        """
        if not 0 <= layer < self.num_layers:
            raise ValueError(f"layer must be in [0, {self.num_layers}), got {layer}")
        if k.dim() != 4 or v.dim() != 4 or k.shape[:3] != v.shape[:3]:
            raise ValueError(
                f"k and v must have shapes (batch, num_kv_heads, T_new, d) with the same first three axes, "
                f"got k {tuple(k.shape)} and v {tuple(v.shape)}"
            )
        old_k, old_v = self.keys[layer], self.values[layer]
        if old_k is not None and old_v is not None:
            if old_k.shape[:2] + old_k.shape[3:] != k.shape[:2] + k.shape[3:]:
                raise ValueError(
                    f"k has shape {tuple(k.shape)} but the cache of layer {layer} holds "
                    f"{tuple(old_k.shape)}; only the token axis (-2) may differ"
                )
            k, v = torch.cat([old_k, k], dim=-2), torch.cat([old_v, v], dim=-2)
        T_new = k.shape[-2] - (0 if old_k is None else old_k.shape[-2])
        self.keys[layer], self.values[layer] = k, v
        if layer == 0:
            self.positions = torch.cat([self.positions, torch.arange(self.seen, self.seen + T_new)])
            self.seen += T_new
        return k, v

    def key_positions(self, T_new: int) -> Tensor:
        """(T_cached + T_new,) positions of the keys a layer attends to while ``T_new`` tokens are fed."""
        return torch.cat([self.positions, torch.arange(self.seen, self.seen + T_new)])

    def keep(self, which: Tensor) -> None:
        """Drop every cached token where ``which`` (bool, (T_cached,)) is False, in every layer."""
        if which.shape != self.positions.shape or which.dtype != torch.bool:
            raise ValueError(f"which must be a bool tensor of shape {tuple(self.positions.shape)}, "
                             f"got {which.dtype} {tuple(which.shape)}")
        self.positions = self.positions[which]
        for layer in range(self.num_layers):
            if self.keys[layer] is not None:
                self.keys[layer] = self.keys[layer][..., which, :]
                self.values[layer] = self.values[layer][..., which, :]

    @property
    def nbytes(self) -> int:
        """Bytes held by all cached keys and values."""
        return sum(t.numel() * t.element_size() for t in self.keys + self.values if t is not None)


# ------------------------------------------------------------------------------------ paged cache
class BlockPool:
    """The memory of a paged KV cache (vLLM's PagedAttention): ``num_blocks`` blocks of ``block_size``
    tokens each, shared by every sequence, handed out one block at a time.

    ``keys`` and ``values`` have shape (num_layers, num_blocks, num_kv_heads, block_size, d_k).
    """

    def __init__(self, num_blocks: int, block_size: int, num_layers: int, num_kv_heads: int, d_k: int,
                 dtype: torch.dtype = torch.float32) -> None:
        self.num_blocks, self.block_size = _positive_int("num_blocks", num_blocks), _positive_int(
            "block_size", block_size)
        shape = (_positive_int("num_layers", num_layers), self.num_blocks,
                 _positive_int("num_kv_heads", num_kv_heads), self.block_size, _positive_int("d_k", d_k))
        self.keys, self.values = torch.zeros(shape, dtype=dtype), torch.zeros(shape, dtype=dtype)
        self.free = list(range(self.num_blocks))

    def allocate(self) -> int:
        """A free block's number (the lowest); raises MemoryError when none is left."""
        if not self.free:
            raise MemoryError(f"all {self.num_blocks} blocks of the pool are in use")
        return self.free.pop(0)

    def release(self, blocks: list[int]) -> None:
        """Give ``blocks`` back to the pool."""
        self.free = sorted(self.free + list(blocks))

    @property
    def blocks_in_use(self) -> int:
        return self.num_blocks - len(self.free)


class PagedKVCache(KVCache):
    """One sequence's KV cache kept in blocks of a shared :class:`BlockPool`, found through its block table.

    Token ``p`` of the sequence lives in block ``block_table[p // block_size]`` at offset
    ``p % block_size``; a new block is taken from the pool only when the last one is full. Used like
    :class:`KVCache` (batch 1), e.g. ``model(ids, PagedKVCache(pool))``.
    """

    def __init__(self, pool: BlockPool) -> None:
        super().__init__(pool.keys.shape[0])
        self.pool = pool
        self._start = 0
        self.block_table: list[int] = []

    def append(self, layer: int, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Write this step's keys and values, (1, g, T_new, d_k), into the pool; return the sequence's
        keys and values read back through the block table, (1, g, T_cached + T_new, d_k)."""
        if not 0 <= layer < self.num_layers:
            raise ValueError(f"layer must be in [0, {self.num_layers}), got {layer}")
        if k.shape != v.shape or k.dim() != 4 or k.shape[0] != 1:
            raise ValueError(f"k and v must have the same shape (1, num_kv_heads, T_new, d_k), got "
                             f"k {tuple(k.shape)} and v {tuple(v.shape)}")
        size, T_new = self.pool.block_size, k.shape[-2]
        if layer == 0:
            self._start = self.seen
        start = self._start
        end = start + T_new
        while len(self.block_table) * size < end:  # a new block only when the last one is full
            self.block_table.append(self.pool.allocate())
        for t in range(T_new):
            block, offset = self.block_table[(start + t) // size], (start + t) % size
            self.pool.keys[layer, block, :, offset] = k[0, :, t]
            self.pool.values[layer, block, :, offset] = v[0, :, t]
        table = torch.tensor(self.block_table)
        g, d_k = k.shape[1], k.shape[-1]
        keys = self.pool.keys[layer, table].transpose(0, 1).reshape(g, -1, d_k)[None, :, :end]
        values = self.pool.values[layer, table].transpose(0, 1).reshape(g, -1, d_k)[None, :, :end]
        if layer == 0:
            self.positions = torch.arange(end)
            self.seen = end
        return keys, values

    def keep(self, which: Tensor) -> None:
        raise NotImplementedError("a PagedKVCache keeps every token (no rolling window)")

    def release(self) -> None:
        """Give this sequence's blocks back to the pool (the sequence is finished)."""
        self.pool.release(self.block_table)
        self.block_table = []

    @property
    def nbytes(self) -> int:
        """Bytes of the blocks this sequence holds (full or not)."""
        per_block = self.pool.keys[:, 0].numel() * self.pool.keys.element_size() * 2
        return len(self.block_table) * per_block


# ------------------------------------------------------------------------- grouped-query attention
def grouped_query_attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> Tensor:
    """Attention where ``h`` query heads share ``g`` key/value heads (h / g query heads per group).

    Query head ``i`` uses key/value head ``i // (h // g)``: heads 0..h/g-1 share group 0, and so on
    (the layout of ``torch.nn.functional.scaled_dot_product_attention(..., enable_gqa=True)``).
    ``g == h`` is ordinary multi-head attention, ``g == 1`` multi-query attention.

    Inputs:
        q: (..., h, T_q, d_k); k: (..., g, T_k, d_k); v: (..., g, T_k, d_v), with g dividing h.
        mask: optional bool, True = may attend, broadcastable to (..., h, T_q, T_k).
    Returns:
        (..., h, T_q, d_v).
    """
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, Tensor) or t.dim() < 3:
            raise ValueError(f"{name} must be a torch.Tensor of shape (..., heads, T, d), got "
                             f"{tuple(t.shape) if isinstance(t, Tensor) else type(t).__name__}")
    h, g = q.shape[-3], k.shape[-3]
    if v.shape[-3] != g:
        raise ValueError(f"k has {g} key/value heads but v has {v.shape[-3]}")
    if h % g != 0:
        raise ValueError(f"q has {h} heads, which is not a multiple of the {g} key/value heads of k")
    if k.shape[-1] != q.shape[-1]:
        raise ValueError(f"q has d_k={q.shape[-1]} but k has d_k={k.shape[-1]}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k has T_k={k.shape[-2]} tokens but v has {v.shape[-2]}")
    k = k.repeat_interleave(h // g, dim=-3)  # (..., h, T_k, d_k): each group copied to its heads
    v = v.repeat_interleave(h // g, dim=-3)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., h, T_q, T_k)
    if mask is not None:
        if mask.dtype != torch.bool:
            raise TypeError(f"mask must be boolean (True = may attend), got {mask.dtype}")
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


# --------------------------------------------------------------------------------------- rotary
def rotary(x: Tensor, positions: Tensor | None = None, base: float = 10000.0, *,
           inv_freq: Tensor | None = None, scale: float = 1.0) -> Tensor:
    """Rotary position embedding (RoPE) of queries or keys, in the half-split (Llama) layout.

    Feature ``i`` and feature ``i + d/2`` form a pair, rotated by the angle
    ``position * base^(-2i/d)``. (The RoFormer paper, and Meta's reference Llama code, pair neighbours
    ``2i, 2i+1`` instead: the same rotations with the features listed in another order.)

    Inputs:
        x: (..., T, d) with d even; positions: (T,) positions (default 0..T-1; may be fractional).
        inv_freq: (d/2,) the angle per position of each pair, instead of ``base^(-2i/d)``
            (see :func:`rope_frequencies` for the scaled variants).
        scale: multiplies the rotated vectors (YaRN's attention factor; 1 leaves lengths unchanged).
    Returns:
        (..., T, d), the rotated vectors.
    """
    if not isinstance(x, Tensor) or x.dim() < 2:
        raise ValueError(f"x must be a torch.Tensor of shape (..., T, d), got "
                         f"{tuple(x.shape) if isinstance(x, Tensor) else type(x).__name__}")
    T, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError(f"x must have an even number of features d (pairs are rotated), got d={d}")
    if positions is None:
        positions = torch.arange(T)
    if not isinstance(positions, Tensor):
        raise TypeError(f"positions must be a torch.Tensor of shape (T,) = ({T},), one position per row of "
                        f"x, got {type(positions).__name__} {positions!r:.40}: for one vector at position p, "
                        f"write rotary(x[None], torch.tensor([p]))")
    if positions.shape != (T,):
        raise ValueError(f"positions must have shape (T,) = ({T},), got {tuple(positions.shape)}")
    if inv_freq is None:
        inv_freq = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # (d/2,)
    elif inv_freq.shape != (d // 2,):
        raise ValueError(f"inv_freq must have shape (d/2,) = ({d // 2},), got {tuple(inv_freq.shape)}")
    angles = positions.to(torch.float64)[:, None] * inv_freq.to(torch.float64)  # (T, d/2)
    cos, sin = (scale * angles.cos()).to(x.dtype), (scale * angles.sin()).to(x.dtype)
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def rope_frequencies(d: int, base: float = 10000.0, scaling: str | None = None, factor: float = 1.0,
                     trained_length: int | None = None, beta_fast: float = 32.0,
                     beta_slow: float = 1.0) -> tuple[Tensor, float]:
    """RoPE's angle per position for each of the d/2 pairs, plain or stretched to a longer context.

    ``scaling``:
        None: ``base^(-2i/d)``.
        "linear": position interpolation (Chen et al., 2023): every frequency divided by ``factor``.
        "ntk": "NTK-aware" scaling: the base becomes ``base * factor^(d/(d-2))``, so the slowest pair
            turns ``factor`` times slower and the fastest pair not at all.
        "yarn": YaRN (Peng et al., 2023): pairs that turn more than ``beta_fast`` times within
            ``trained_length`` keep their frequency, pairs that turn less than ``beta_slow`` times are
            interpolated like "linear", a linear ramp in between; attention factor ``0.1 ln(factor) + 1``.
    Returns:
        inv_freq (d/2,) float64, and the factor the rotated vectors are multiplied by (1.0 except YaRN).
    """
    d = _positive_int("d", d)
    if d % 2:
        raise ValueError(f"d must be even, got {d}")
    if scaling not in (None, "linear", "ntk", "yarn"):
        raise ValueError(f"scaling must be None, 'linear', 'ntk' or 'yarn', got {scaling!r}")
    if scaling is not None and not factor >= 1:
        raise ValueError(f"factor must be at least 1, got {factor!r}")
    exponents = torch.arange(0, d, 2, dtype=torch.float64) / d  # 2i/d
    if scaling == "ntk":
        base = base * factor ** (d / (d - 2))
    inv_freq = base ** (-exponents)
    if scaling == "linear":
        return inv_freq / factor, 1.0
    if scaling != "yarn":
        return inv_freq, 1.0
    if trained_length is None:
        raise ValueError("scaling='yarn' needs trained_length, the context length the model was trained on")

    def pair_turning(turns: float) -> float:  # the (fractional) pair index that turns `turns` times
        return d * math.log(trained_length / (turns * 2 * math.pi)) / (2 * math.log(base))

    low, high = max(math.floor(pair_turning(beta_fast)), 0), min(math.ceil(pair_turning(beta_slow)), d - 1)
    if low == high:
        high += 0.001
    ramp = ((torch.arange(d // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)  # 0 fast, 1 slow
    inv_freq = inv_freq * (1 - ramp) + inv_freq / factor * ramp
    return inv_freq, (0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0)


# ------------------------------------------------------------------------------- sliding window
def sliding_window_mask(T: int, window: int) -> NDArray[np.bool_]:
    """(T, T) boolean causal mask in which token i sees only tokens i-window+1 .. i."""
    T, window = _positive_int("T", T), _positive_int("window", window)
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    return (j <= i) & (j > i - window)


# ------------------------------------------------------------------------------ tiled attention
@dataclass(frozen=True)
class TileCounts:
    """What :func:`tiled_attention` did: tiles of scores computed, tiles skipped, largest tile (numbers)."""

    computed: int
    skipped: int
    largest_tile: int


def tiled_attention(
    Q: ArrayLike, K: ArrayLike, V: ArrayLike, block_q: int = 64, block_k: int = 64,
    causal: bool = False, skip_masked_tiles: bool = True,
) -> tuple[NDArray[np.floating], TileCounts]:
    """Exact attention over tiles of queries and keys with an online softmax (lesson 09, in 2-D).

    For each tile of ``block_q`` queries, the keys are visited ``block_k`` at a time; a running
    maximum, sum and output are rescaled as the maximum grows. With ``causal=True`` a tile whose
    keys all come after its queries is empty, and is skipped unless ``skip_masked_tiles=False``.

    Inputs:
        Q: (..., T_q, d_k); K: (..., T_k, d_k); V: (..., T_k, d_v). Causal needs T_q == T_k.
    Returns:
        out (..., T_q, d_v), equal to ``softmax(QK^T/sqrt(d_k)) V``; and the :class:`TileCounts`.
    """
    Q = float_array("Q", Q, min_ndim=2)
    K = float_array("K", K, min_ndim=2)
    V = float_array("V", V, min_ndim=2)
    lead = check_qkv(Q, K, V)
    block_q, block_k = _positive_int("block_q", block_q), _positive_int("block_k", block_k)
    T_q, T_k = Q.shape[-2], K.shape[-2]
    if causal and T_q != T_k:
        raise ValueError(f"causal attention needs as many queries as keys, got T_q={T_q}, T_k={T_k}")
    scale = 1.0 / math.sqrt(Q.shape[-1])
    dtype = np.result_type(Q, K, V)
    out = np.empty((*lead, T_q, V.shape[-1]), dtype=dtype)
    computed = skipped = 0
    for q0 in range(0, T_q, block_q):
        q = Q[..., q0 : q0 + block_q, :]
        rows = np.arange(q0, q0 + q.shape[-2])[:, None]
        m = np.full((*lead, q.shape[-2], 1), -np.inf, dtype=dtype)  # running maximum
        s_sum = np.zeros_like(m)  # running sum of exp(score - m)
        acc = np.zeros((*lead, q.shape[-2], V.shape[-1]), dtype=dtype)  # running weighted sum
        for k0 in range(0, T_k, block_k):
            if causal and skip_masked_tiles and k0 > rows[-1, 0]:  # every key after every query
                skipped += 1
                continue
            computed += 1
            s = q @ np.swapaxes(K[..., k0 : k0 + block_k, :], -1, -2) * scale  # (..., bq, bk)
            if causal:
                cols = np.arange(k0, k0 + s.shape[-1])[None, :]
                s = np.where(cols <= rows, s, -np.inf)
            new_m = np.maximum(m, s.max(axis=-1, keepdims=True))
            safe = np.where(np.isfinite(new_m), new_m, 0.0)  # a row with no key yet stays at zero
            correction = np.exp(m - safe)
            p = np.exp(s - safe)
            s_sum = s_sum * correction + p.sum(axis=-1, keepdims=True)
            acc = acc * correction + p @ V[..., k0 : k0 + block_k, :]
            m = new_m
        out[..., q0 : q0 + q.shape[-2], :] = acc / s_sum
    return out, TileCounts(computed, skipped, min(block_q, T_q) * min(block_k, T_k))


# ------------------------------------------------------------------------------- tiny decoder
class _Block(nn.Module):
    """Pre-norm decoder block: causal multi-head self-attention, then an MLP, each with a residual."""

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.W_qkv = nn.Linear(d_model, 3 * d_model)
        self.W_out = nn.Linear(d_model, d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x: Tensor, cache: KVCache | None, layer: int, start: int) -> Tensor:
        """x: (batch, T_new, d_model), the tokens at positions start.. -> (batch, T_new, d_model)."""
        batch, T_new, d_model = x.shape
        q, k, v = self.W_qkv(self.norm1(x)).split(d_model, dim=-1)
        q, k, v = (t.view(batch, T_new, self.num_heads, self.d_k).transpose(1, 2) for t in (q, k, v))
        if cache is not None:
            k, v = cache.append(layer, k, v)  # (batch, heads, start + T_new, d_k)
        T_all = k.shape[-2]
        # query t (at position start + t) may see keys 0 .. start + t
        mask = torch.arange(T_all)[None, :] <= torch.arange(start, start + T_new)[:, None]
        z = grouped_query_attention(q, k, v, mask)  # (batch, heads, T_new, d_k)
        x = x + self.W_out(z.transpose(1, 2).reshape(batch, T_new, d_model))
        return x + self.mlp(self.norm2(x))


class TinyDecoder(nn.Module):
    """A small character-level decoder: embeddings + sinusoidal positions, ``num_layers`` blocks, a head.

    Args:
        vocab: the characters it reads and writes, in token-id order.
        d_model, num_heads, num_layers: sizes.
    """

    def __init__(self, vocab: str, d_model: int = 64, num_heads: int = 4, num_layers: int = 2) -> None:
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
        self.vocab = vocab
        self.d_model, self.num_heads, self.num_layers = d_model, num_heads, num_layers
        self.embed = nn.Embedding(len(vocab), d_model)
        self.blocks = nn.ModuleList(_Block(d_model, num_heads) for _ in range(num_layers))
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, len(vocab))

    def encode(self, text: str) -> Tensor:
        """text -> (1, T) token ids; every character must be in the vocabulary."""
        unknown = sorted(set(text) - set(self.vocab))
        if unknown:
            raise ValueError(f"text has characters the decoder does not know: {unknown}")
        return torch.tensor([[self.vocab.index(c) for c in text]])

    def decode(self, ids: Tensor) -> str:
        """(T,) or (1, T) token ids -> text."""
        return "".join(self.vocab[i] for i in ids.flatten().tolist())

    def _positions(self, start: int, T: int) -> Tensor:
        """(T, d_model) sinusoidal encodings of positions start .. start+T-1 (lesson 09)."""
        pos = torch.arange(start, start + T, dtype=torch.float64)[:, None]
        freq = 10000.0 ** (-torch.arange(0, self.d_model, 2, dtype=torch.float64) / self.d_model)
        pe = torch.zeros(T, self.d_model, dtype=torch.float64)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * freq), torch.cos(pos * freq)
        return pe.to(self.embed.weight.dtype)

    def forward(self, ids: Tensor, cache: KVCache | None = None) -> Tensor:
        """ids: (batch, T_new) token ids -> (batch, T_new, vocab) next-token logits.

        With a cache, ``ids`` are the tokens after the ``cache.seen`` cached ones, and their keys
        and values are appended to it.
        """
        start = cache.seen if cache is not None else 0
        x = self.embed(ids) + self._positions(start, ids.shape[-1])
        for layer, block in enumerate(self.blocks):
            x = block(x, cache, layer, start)
        return self.head(self.norm(x))

    @torch.no_grad()
    def generate(self, prompt: str, num_tokens: int, use_cache: bool = True) -> tuple[str, KVCache | None]:
        """Greedy generation of ``num_tokens`` characters after ``prompt``.

        Without a cache every step runs the whole text again; with one, every step after the first
        runs only the newest token. Returns the generated text and the cache (None without one).
        """
        num_tokens = _positive_int("num_tokens", num_tokens)
        ids = self.encode(prompt)
        cache = KVCache(self.num_layers) if use_cache else None
        new_ids = ids  # what this step feeds in
        for _ in range(num_tokens):
            logits = self(new_ids, cache) if use_cache else self(ids)
            next_id = logits[:, -1].argmax(dim=-1, keepdim=True)  # (1, 1)
            ids = torch.cat([ids, next_id], dim=1)
            new_ids = next_id
        return self.decode(ids[0, -num_tokens:]), cache


def load_decoder(path: str | Path = DECODER_WEIGHTS) -> TinyDecoder:
    """The trained :class:`TinyDecoder` (weights from ``tools/train_decoder.py``), in eval mode."""
    from safetensors import safe_open
    from safetensors.torch import load_file

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no decoder weights at {path}; run tools/train_decoder.py to write them")
    if not os.access(path, os.R_OK):
        raise PermissionError(f"the decoder weights at {path} are not readable by this user; "
                              f"make them readable, e.g. chmod 644 {path}")
    with safe_open(str(path), framework="pt") as f:
        meta = f.metadata()
    model = TinyDecoder(meta["vocab"], int(meta["d_model"]), int(meta["num_heads"]), int(meta["num_layers"]))
    model.load_state_dict(load_file(str(path)))
    return model.eval()


# ------------------------------------------------------------------------- a Llama-style decoder
def attention_mask(query_positions: Tensor, key_positions: Tensor, window: int | None = None,
                   sinks: int = 0) -> Tensor:
    """(T_q, T_k) bool mask, True where a query may read a key: causal, optionally a sliding window.

    A query at position p reads the keys at positions p - window + 1 .. p (all of 0 .. p without a
    window) and, with ``sinks`` > 0, also the keys at positions 0 .. sinks - 1 (attention sinks).
    """
    if window is not None:
        window = _positive_int("window", window)
    if isinstance(sinks, bool) or not isinstance(sinks, int) or sinks < 0:
        raise ValueError(f"sinks must be a non-negative integer, got {sinks!r}")
    q, k = query_positions[:, None], key_positions[None, :]
    mask = k <= q
    if window is not None:
        mask = mask & ((k > q - window) | (k < sinks))
    return mask


class RMSNorm(nn.Module):
    """Llama's normalisation: ``x / sqrt(mean(x**2) + eps) * weight`` over the last axis (no mean
    subtracted, no bias; ``torch.nn.RMSNorm`` computes the same)."""

    def __init__(self, d_model: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))

    def forward(self, x: Tensor) -> Tensor:
        """x: (..., d_model) -> (..., d_model)."""
        return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight


class _LlamaBlock(nn.Module):
    """Pre-norm block: RMSNorm, grouped-query attention with RoPE, residual; RMSNorm, SwiGLU MLP, residual."""

    def __init__(self, d_model: int, num_heads: int, num_kv_heads: int, d_ff: int, rope_base: float) -> None:
        super().__init__()
        self.num_heads, self.num_kv_heads, self.d_k = num_heads, num_kv_heads, d_model // num_heads
        self.rope_base = rope_base
        self.norm1, self.norm2 = RMSNorm(d_model), RMSNorm(d_model)
        self.W_query = nn.Linear(d_model, num_heads * self.d_k, bias=False)
        self.W_key = nn.Linear(d_model, num_kv_heads * self.d_k, bias=False)
        self.W_value = nn.Linear(d_model, num_kv_heads * self.d_k, bias=False)
        self.W_out = nn.Linear(num_heads * self.d_k, d_model, bias=False)
        self.W_gate = nn.Linear(d_model, d_ff, bias=False)
        self.W_up = nn.Linear(d_model, d_ff, bias=False)
        self.W_down = nn.Linear(d_ff, d_model, bias=False)

    def qkv(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """x: (batch, T, d_model) -> q (batch, h, T, d_k), k and v (batch, g, T, d_k), before RoPE."""
        batch, T, _ = x.shape
        h = self.norm1(x)
        q = self.W_query(h).view(batch, T, self.num_heads, self.d_k).transpose(1, 2)
        k = self.W_key(h).view(batch, T, self.num_kv_heads, self.d_k).transpose(1, 2)
        v = self.W_value(h).view(batch, T, self.num_kv_heads, self.d_k).transpose(1, 2)
        return q, k, v

    def forward(self, x: Tensor, positions: Tensor, key_positions: Tensor, cache: KVCache | None, layer: int,
                window: int | None, sinks: int, rope_positions: str, rope: tuple[Tensor, float],
                clip: int | None = None) -> tuple[Tensor, Tensor]:
        """x: (batch, T_new, d_model) at ``positions`` (T_new,) -> (batch, T_new, d_model) and the
        attention weights (batch, h, T_new, T_keys); ``key_positions`` (T_keys,) are the positions of the
        keys read (cached ones first). ``rope``: (inv_freq, scale) for :func:`rotary`. ``clip``: a query
        and key more than ``clip`` apart score as if ``clip`` apart (no cache)."""
        batch, T_new, _ = x.shape
        q, k, v = self.qkv(x)
        inv_freq, scale = rope
        if clip is not None:  # the score at offset `clip`: the query turned by clip, the key not at all
            far = (rotary(q, torch.full((T_new,), float(clip)), inv_freq=inv_freq, scale=scale)
                   @ k.repeat_interleave(self.num_heads // self.num_kv_heads, dim=-3).transpose(-2, -1)
                   * scale)                                                       # (batch, h, T_new, T_new)
        if rope_positions == "text":  # rotate by the position in the text; keys are cached rotated
            q = rotary(q, positions, inv_freq=inv_freq, scale=scale)
            k = rotary(k, positions, inv_freq=inv_freq, scale=scale)
        if cache is not None:
            k, v = cache.append(layer, k, v)
        if rope_positions == "cache":  # rotate by the position in the cache (keys cached unrotated)
            index = torch.arange(k.shape[-2])
            q = rotary(q, index[-T_new:], inv_freq=inv_freq, scale=scale)
            k = rotary(k, index, inv_freq=inv_freq, scale=scale)
        mask = attention_mask(positions, key_positions, window, sinks)
        k = k.repeat_interleave(self.num_heads // self.num_kv_heads, dim=-3)  # (batch, h, T_keys, d_k)
        v = v.repeat_interleave(self.num_heads // self.num_kv_heads, dim=-3)
        scores = q @ k.transpose(-2, -1)
        if clip is not None:
            scores = torch.where(positions[:, None] - key_positions[None, :] > clip, far, scores)
        scores = (scores / math.sqrt(self.d_k)).masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)  # (batch, h, T_new, T_keys)
        z = (weights @ v).transpose(1, 2).reshape(batch, T_new, -1)
        x = x + self.W_out(z)
        h = self.norm2(x)
        return x + self.W_down(nn.functional.silu(self.W_gate(h)) * self.W_up(h)), weights


class LlamaDecoder(nn.Module):
    """A small character-level decoder in the Llama style: RMSNorm, rotary positions (RoPE, half-split),
    grouped-query attention (``num_kv_heads`` key/value heads shared by ``num_heads`` query heads), a
    SwiGLU MLP, no biases; optionally a sliding window with attention sinks at run time.

    Args:
        vocab: the characters it reads and writes, in token-id order.
        d_model, num_heads, num_kv_heads, num_layers, d_ff: sizes (d_k = d_model / num_heads).
        rope_base: RoPE's base (10,000 as in Llama 2).
    """

    def __init__(self, vocab: str, d_model: int = 64, num_heads: int = 4, num_kv_heads: int = 2,
                 num_layers: int = 2, d_ff: int = 176, rope_base: float = 10000.0) -> None:
        super().__init__()
        if d_model % num_heads or num_heads % num_kv_heads:
            raise ValueError(f"d_model={d_model} must be divisible by num_heads={num_heads}, and num_heads "
                             f"by num_kv_heads={num_kv_heads}")
        self.vocab = vocab
        self.d_model, self.num_heads, self.num_kv_heads = d_model, num_heads, num_kv_heads
        self.num_layers, self.d_ff, self.rope_base = num_layers, d_ff, rope_base
        self.d_k = d_model // num_heads
        self.embed = nn.Embedding(len(vocab), d_model)
        self.blocks = nn.ModuleList(_LlamaBlock(d_model, num_heads, num_kv_heads, d_ff, rope_base)
                                    for _ in range(num_layers))
        self.norm = RMSNorm(d_model)
        self.head = nn.Linear(d_model, len(vocab), bias=False)
        self.last_weights: list[Tensor] = []  # each layer's attention weights of the last call
        #: None, or keyword arguments of :func:`rope_frequencies` (scaling, factor, trained_length)
        self.rope_scaling: dict[str, object] | None = None
        #: None, or a distance D: a query and key further apart than D score as if D apart (ReRoPE; one pass
        #: without a cache only), so no distance is longer than D while every key is still read
        self.rope_clip: int | None = None

    encode = TinyDecoder.encode
    decode = TinyDecoder.decode

    def forward(self, ids: Tensor, cache: KVCache | None = None, *, window: int | None = None,
                sinks: int = 0, rope_positions: str = "text") -> Tensor:
        """ids: (batch, T_new) token ids -> (batch, T_new, vocab) next-token logits.

        With a cache, ``ids`` are the tokens at positions ``cache.seen`` ..., their keys and values are
        appended to it, and with a ``window`` the cache then keeps only what the next token will read: the
        last ``window - 1`` tokens and the first ``sinks``. ``rope_positions="text"`` rotates queries and
        keys by their position in the text (keys are cached rotated); ``"cache"`` by their place in the
        cache (keys cached unrotated, rotated afresh at every step, as StreamingLLM does).
        """
        if rope_positions not in ("text", "cache"):
            raise ValueError(f"rope_positions must be 'text' or 'cache', got {rope_positions!r}")
        T_new = ids.shape[-1]
        start = cache.seen if cache is not None else 0
        positions = torch.arange(start, start + T_new)
        key_positions = positions if cache is None else cache.key_positions(T_new)
        rope = rope_frequencies(self.d_k, self.rope_base, **(self.rope_scaling or {}))
        if self.rope_clip is not None and (cache is not None or rope_positions != "text"):
            raise ValueError("rope_clip works in one pass over the text: no cache, rope_positions='text'")
        x = self.embed(ids)
        self.last_weights = []
        for layer, block in enumerate(self.blocks):
            x, weights = block(x, positions, key_positions, cache, layer, window, sinks, rope_positions, rope,
                               clip=self.rope_clip)
            self.last_weights.append(weights)
        if cache is not None and window is not None:
            newest = cache.seen - 1
            cache.keep((cache.positions > newest - (window - 1)) | (cache.positions < sinks))
        return self.head(self.norm(x))

    @torch.no_grad()
    def generate(self, prompt: str, num_tokens: int, use_cache: bool = True, **attention: object
                 ) -> tuple[str, KVCache | None]:
        """Greedy generation of ``num_tokens`` characters after ``prompt`` (``attention``: window, sinks,
        rope_positions, as in :meth:`forward`). Returns the text and the cache (None without one)."""
        num_tokens = _positive_int("num_tokens", num_tokens)
        ids = self.encode(prompt)
        cache = KVCache(self.num_layers) if use_cache else None
        new_ids = ids
        for _ in range(num_tokens):
            logits = self(new_ids, cache, **attention) if use_cache else self(ids, **attention)
            next_id = logits[:, -1].argmax(dim=-1, keepdim=True)  # (1, 1)
            ids = torch.cat([ids, next_id], dim=1)
            new_ids = next_id
        return self.decode(ids[0, -num_tokens:]), cache


#: The Llama-style decoder's weights, written by ``tools/train_decoder.py``.
LLAMA_WEIGHTS = Path(__file__).with_name("llama_decoder.safetensors")


def _readable(path: Path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no decoder weights at {path}; run tools/train_decoder.py to write them")
    if not os.access(path, os.R_OK):
        raise PermissionError(f"the decoder weights at {path} are not readable by this user; "
                              f"make them readable, e.g. chmod 644 {path}")
    return path


def load_llama(seed: int = 0, path: str | Path = LLAMA_WEIGHTS) -> LlamaDecoder:
    """The trained :class:`LlamaDecoder` of training seed ``seed`` (0, 1 or 2; weights from
    ``tools/train_decoder.py``, shipped in float16), in eval mode, as float32.

    ``model.training_record`` holds how it was trained: ``context`` (characters per training window),
    ``batch``, ``steps``, ``lr``, ``seeds`` and ``losses`` (the loss of every step, per seed).
    """
    import json

    from safetensors import safe_open
    from safetensors.torch import load_file

    path = _readable(Path(path))
    with safe_open(str(path), framework="pt") as f:
        meta = f.metadata()
    record = json.loads(meta["record"])
    if seed not in record["seeds"]:
        raise ValueError(f"seed must be one of the trained seeds {record['seeds']}, got {seed!r}")
    model = LlamaDecoder(meta["vocab"], **json.loads(meta["sizes"]))
    prefix = f"seed{seed}."
    state = {k[len(prefix):]: v.float() for k, v in load_file(str(path)).items() if k.startswith(prefix)}
    model.load_state_dict(state)
    model.training_record = record
    return model.eval()


def stepwise_losses(model: LlamaDecoder, ids: Tensor, score_from: int, **attention: Any) -> list[float]:
    """Generation's view of a text: each row of ``ids`` (n, T + 1) fed one token at a time through a fresh
    :class:`KVCache`, with the keyword arguments of :meth:`LlamaDecoder.forward` (``window``, ``sinks``,
    ``rope_positions``). Returns, per row, the mean cross-entropy (nats) of predicting tokens
    ``score_from + 1 .. T`` from the logits at positions ``score_from .. T - 1``.
    """
    if ids.ndim != 2 or ids.shape[1] < 2:
        raise ValueError(f"ids must be (rows, T + 1) token ids with T >= 1, got shape {tuple(ids.shape)}")
    if not 0 <= score_from < ids.shape[1] - 1:
        raise ValueError(f"score_from must be in 0..{ids.shape[1] - 2}, got {score_from!r}")
    out = []
    with torch.no_grad():
        for row in ids:
            cache = KVCache(model.num_layers)
            logits = torch.cat([model(row[None, t:t + 1], cache, **attention) for t in range(len(row) - 1)],
                               dim=1)[0]  # (T, vocab)
            out.append(nn.functional.cross_entropy(logits[score_from:], row[score_from + 1:]).item())
    return out


def next_token_losses(model: LlamaDecoder, ids: Tensor, **attention: Any) -> NDArray[np.float64]:
    """The loss (nats) of each next token in one pass: ``ids`` (n, T + 1) token ids; returns (n, T), entry
    [r, t] the cross-entropy of predicting ``ids[r, t + 1]`` from ``ids[r, :t + 1]``, with the keyword
    arguments of :meth:`LlamaDecoder.forward` (``window``, ``sinks``). The model keeps its weights as
    usual."""
    with torch.no_grad():
        logits = model(ids[:, :-1], **attention)                               # (n, T, vocab)
        ce = nn.functional.cross_entropy(logits.transpose(1, 2), ids[:, 1:], reduction="none")
    return ce.numpy().astype(np.float64)


def clue_beyond(text: str, span: int = 15, before: int = 200) -> list[str]:
    """Places whose character the ``span`` characters before them do not fix: reading ``text`` as a loop (no
    edge), each place p whose ``span`` preceding characters also occur elsewhere followed by another
    character. Returns, per such place, a string of ``before + 1`` characters: the ``before`` characters up
    to p, then the character at p."""
    n = len(text)
    if not 0 < span <= before or span >= n:
        raise ValueError(f"need 0 < span <= before and span < len(text), got span={span}, before={before}")
    base = n * (before // n + 1)                       # p's place in the looped text, with `before` behind it
    loop = text * (before // n + 2)

    def clue(p: int) -> bool:
        tail = loop[base + p - span:base + p]
        return any(loop[base + q - span:base + q] == tail and loop[base + q] != loop[base + p]
                   for q in range(n))

    return [loop[base + p - before:base + p + 1] for p in range(n) if clue(p)]


def train_llama(seed: int, window: int | None = None, steps: int = 300, *, context: int = 256, batch: int = 4,
                lr: float = 3e-3) -> LlamaDecoder:
    """A fresh :class:`LlamaDecoder` of :func:`load_llama`'s sizes, trained as ``tools/train_decoder.py``
    trains the shipped ones (``steps`` batches of ``batch`` random windows of ``context + 1`` characters of
    :func:`zen_of_python` read as a loop, AdamW at ``lr``, seeded by ``seed``), but with attention limited to
    a sliding ``window`` during training (None: full causal attention). Returns it in eval mode. About 10-15 s
    on one CPU thread."""
    torch.manual_seed(seed)
    text = zen_of_python()
    vocab = "".join(sorted(set(text)))
    model = LlamaDecoder(vocab, d_model=64, num_heads=4, num_kv_heads=2, num_layers=2, d_ff=176)
    data = torch.tensor([vocab.index(c) for c in text])
    looped = torch.cat([data] * (context // len(data) + 2))
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    draws = torch.Generator().manual_seed(seed)
    model.train()
    for _ in range(steps):
        starts = torch.randint(0, len(data), (batch,), generator=draws)
        rows = looped[starts[:, None] + torch.arange(context + 1)]               # (batch, context + 1)
        logits = model(rows[:, :-1], window=window)                              # (batch, context, vocab)
        loss = nn.functional.cross_entropy(logits.reshape(-1, len(vocab)), rows[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model.eval()


def window_clue_table(windowed: Sequence[LlamaDecoder], full: Sequence[LlamaDecoder],
                      groups: dict[str, Sequence[str]], window: int) -> str:
    """Models trained with a sliding ``window`` against models trained with full attention (one of each per
    seed, in the same order), on each group of snippets (name -> strings of equal length, e.g. from
    :func:`clue_beyond`), scored on each snippet's last character: the windowed models under their window,
    the full ones without one and, as a third column, with the window imposed at run time. Per group and
    column: the mean target loss in nats over seeds x targets (range over them), and, once per group, the
    mean loss on the characters before the targets under the trained window; a last line gives the same
    for the full models with the window imposed (one value per group, in order)."""
    width = max(len(name) for name in groups) + 6
    trained = f"trained with window {window}"
    head = f"{'':{width}s} {trained:>22s} {'full attention':>20s} {'full, window imposed':>22s}"
    lines = [f"target loss, nats: mean over {len(windowed)} seeds x targets (range)", head]
    imposed_before = []
    for name, snippets in groups.items():
        rows = torch.cat([full[0].encode(s) for s in sorted(snippets)])               # (targets, length)
        cols: list[list[NDArray[np.float64]]] = [[], [], []]
        before, imposed = [], []
        for w_model, f_model in zip(windowed, full, strict=True):
            ce = next_token_losses(w_model, rows, window=window)                      # (targets, length - 1)
            cols[0].append(ce[:, -1])
            before.append(ce[:, :-1].mean())
            cols[1].append(next_token_losses(f_model, rows)[:, -1])
            ce_imposed = next_token_losses(f_model, rows, window=window)               # (targets, length - 1)
            cols[2].append(ce_imposed[:, -1])
            imposed.append(ce_imposed[:, :-1].mean())
        cells = [f"{np.concatenate(c).mean():.3f} ({_range(np.concatenate(c))})" for c in cols]
        lines.append(f"{name + f' ({len(rows)})':{width}s} {cells[0]:>22s} {cells[1]:>20s} {cells[2]:>22s}"
                     f"   characters before: {np.mean(before):.3f}")
        imposed_before.append(f"{np.mean(imposed):.3f}")
    lines.append("full, window imposed, characters before: " + ", ".join(imposed_before))
    return "\n".join(lines)


def _range(v: NDArray[np.float64]) -> str:
    return f"{v.min():.2f}-{v.max():.2f}"


def stretch_means(losses: NDArray[np.float64], stretches: Sequence[tuple[int, int]]) -> NDArray[np.float64]:
    """``losses`` (..., T) per-position losses (e.g. seeds x inputs x T); ``stretches``: (first, last)
    positions, both included. Returns (len(stretches), N), N the product of the leading sizes: each input's
    mean over each stretch."""
    flat = np.asarray(losses, dtype=float).reshape(-1, np.shape(losses)[-1])
    return np.stack([flat[:, first:last + 1].mean(axis=1) for first, last in stretches])


def stretch_table(runs: dict[str, NDArray[np.float64]], stretches: Sequence[tuple[int, int]]) -> str:
    """A table with one line per run (name -> (..., T) losses): per stretch, the mean over all inputs and, in
    brackets, the lowest and highest input's mean; last, at how many inputs the last stretch's mean is above
    the first's."""
    width = max(len(name) for name in runs)
    lines = []
    for name, losses in runs.items():
        means = stretch_means(losses, stretches)                        # (stretches, inputs)
        cells = [f"{a}-{b}: {m.mean():.3f} ({m.min():.3f}-{m.max():.3f})"
                 for (a, b), m in zip(stretches, means, strict=True)]
        first = f"{stretches[0][0]}-{stretches[0][1]}"
        rises = f"above {first} at {(means[-1] > means[0]).sum()}/{means.shape[1]}"
        lines.append(f"{name:{width}s}  " + "  ".join(cells) + "  " + rises)
    return "\n".join(lines)


def first_token_ratio(weights: Tensor, distances: Tensor, keys: int = 64) -> Tensor:
    """Whether heads park on token 0: ``weights`` (n, heads, T, T) attention weights (query, key);
    ``distances`` (D,) query-to-key distances. Returns (heads,): the mean weight token 0 gets from the queries
    at those distances from it, divided by the mean weight keys 1..``keys`` get from the same distances (a
    sink stands far above 1; distance alone gives about 1)."""
    first = weights[..., distances, 0].mean(dim=(0, 2))                                     # (heads,)
    same = torch.stack([weights[..., distances + j, j] for j in range(1, keys + 1)]).mean(dim=(0, 1, 3))
    return first / same


def weight_on_first(weights: Tensor, queries: slice, first: int = 4) -> float:
    """The mean share of attention that the ``queries`` (a slice of positions) give to the ``first`` tokens:
    ``weights`` (n, heads, T, T), each query's weights on keys 0..first-1 summed, then averaged."""
    return weights[..., queries, :first].sum(dim=-1).mean().item()


def zen_inputs(model: LlamaDecoder, text: str, length: int = 769, n: int = 8) -> tuple[Tensor, Tensor]:
    """Two sets of ``n`` inputs of ``length`` tokens each, (n, length) token ids: the text (read as a loop)
    from ``n`` evenly spaced starts, and the text's lines in ``n`` random orders (rng seeds 0..n-1), each
    order repeated until ``length`` is reached."""
    starts = range(0, len(text), -(-len(text) // n))
    loop = text * (length // len(text) + 2)
    ids = torch.cat([model.encode(loop[s:s + length]) for s in starts])
    lines = text.splitlines()
    orders = [np.random.default_rng(s).permutation(len(lines)) for s in range(n)]
    shuffled = torch.cat([model.encode((("\n".join(lines[i] for i in o) + "\n") * (length // len(text) + 2))
                                       [:length]) for o in orders])
    return ids, shuffled


def _losses_with(model: LlamaDecoder, ids: Tensor, attention: dict[str, Any]) -> NDArray[np.float64]:
    """:func:`next_token_losses` with ``attention``'s keywords; ``rope_scaling`` and ``rope_clip`` among them
    are set on the model for this call only."""
    attention = dict(attention)
    saved = model.rope_scaling, model.rope_clip
    model.rope_scaling = attention.pop("rope_scaling", model.rope_scaling)
    model.rope_clip = attention.pop("rope_clip", model.rope_clip)
    try:
        return next_token_losses(model, ids, **attention)
    finally:
        model.rope_scaling, model.rope_clip = saved


def loss_runs(models: Sequence[LlamaDecoder], inputs: dict[str, Tensor],
              attention: dict[str, dict[str, Any]]) -> dict[str, NDArray[np.float64]]:
    """Every model on every set of inputs under every attention setting. ``inputs``: name -> (n, T + 1) ids;
    ``attention``: name -> keywords of :meth:`LlamaDecoder.forward` (``window``, ``sinks``) or the model's
    ``rope_scaling`` / ``rope_clip``. Returns "inputs, attention" -> (len(models), n, T) losses."""
    return {f"{inputs_name}, {name}": np.stack([_losses_with(m, rows, kw) for m in models])
            for inputs_name, rows in inputs.items() for name, kw in attention.items()}


def stretching_report(models: Sequence[LlamaDecoder], ids: Tensor, factor: float, trained_length: int) -> str:
    """Per model (seed): the mean loss inside and past ``trained_length`` on ``ids`` (n, T + 1), unstretched,
    then stretched by ``factor`` with each of PI ("linear"), NTK-aware and YaRN scaling; past it, the range
    over the n inputs and at how many inputs the stretched model's mean is below the unstretched one's."""
    lines = []
    for seed, model in enumerate(models):
        none = _losses_with(model, ids, {})
        past = none[:, trained_length:].mean(axis=1)                            # (n,) one mean per input
        lines.append(f"seed {seed}, none   : 0-{trained_length - 1} {none[:, :trained_length].mean():.3f}, "
                     f"{trained_length}-{none.shape[1] - 1} {past.mean():.3f}")
        for scaling in ("linear", "ntk", "yarn"):
            rope = {"scaling": scaling, "factor": factor, "trained_length": trained_length}
            stretched = _losses_with(model, ids, {"rope_scaling": rope})
            by_text = stretched[:, trained_length:].mean(axis=1)
            lines.append(f"   {scaling:6s} x{factor:g}: 0-{trained_length - 1} "
                         f"{stretched[:, :trained_length].mean():.3f}, {trained_length}-{none.shape[1] - 1} "
                         f"{by_text.mean():.3f} ({by_text.min():.3f}-{by_text.max():.3f}), below none at "
                         f"{(by_text < past).sum()}/{len(by_text)} starts")
    return "\n".join(lines)


def _mean_range(v: NDArray[np.float64]) -> str:
    return f"{v.mean():.3f} ({v.min():.3f}-{v.max():.3f})"


def sink_report(models: Sequence[LlamaDecoder], ids: Tensor) -> str:
    """Per model (seed), on ``ids`` (n, T + 1), T >= 256: the per-head range of :func:`first_token_ratio`
    (token 0 against keys 1-64, from distances 64-191, full attention); the loss on positions 64-255 with a
    window of 8, without and with the first 4 tokens kept (mean and range over the n inputs, and at how many
    inputs keeping them is worse); the share of weight the first 4 tokens then take."""
    lines = []
    for seed, model in enumerate(models):
        next_token_losses(model, ids)                                  # full attention, keeping its weights
        ratio = first_token_ratio(torch.cat(model.last_weights, dim=1), torch.arange(64, 192))  # (heads,)
        ce = [next_token_losses(model, ids, window=8, sinks=s)[:, 64:256].mean(axis=1) for s in (0, 4)]
        kept = weight_on_first(torch.cat(model.last_weights, dim=1), slice(64, 256), first=4)
        worse = f"worse at {(ce[1] > ce[0]).sum()}/{len(ce[0])} starts; they take {kept:.0%} of the weight"
        lines.append(f"seed {seed}: token 0 / same distance, per head {ratio.min():.2f}-{ratio.max():.2f}; "
                     f"loss at window 8: {_mean_range(ce[0])} / {_mean_range(ce[1])} without / with the "
                     f"first 4 ({worse})")
    return "\n".join(lines)


def fine_tune(model: LlamaDecoder, text: str, length: int, steps: int, *, lr: float = 1e-3, batch: int = 2,
              seed: int = 0) -> LlamaDecoder:
    """Continue training ``model`` in place (with its ``rope_scaling``) on ``steps`` batches of ``batch``
    random windows of ``length + 1`` characters of ``text`` read as a loop, all positions at once under the
    causal mask (AdamW, ``lr``; draws seeded by ``seed``). Returns the model, in eval mode."""
    torch.manual_seed(seed)
    data = torch.tensor([model.vocab.index(c) for c in text])
    looped = torch.cat([data] * (length // len(data) + 2))
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    draws = torch.Generator().manual_seed(seed)
    model.train()
    for _ in range(steps):
        starts = torch.randint(0, len(data), (batch,), generator=draws)
        windows = looped[starts[:, None] + torch.arange(length + 1)]             # (batch, length + 1)
        logits = model(windows[:, :-1])                                          # (batch, length, vocab)
        loss = nn.functional.cross_entropy(logits.reshape(-1, len(model.vocab)), windows[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model.eval()


def fine_tune_report(seeds: Sequence[int], inputs: dict[str, Tensor], factor: float, trained_length: int,
                     steps: int) -> str:
    """Each seed's model fine-tuned for ``steps`` steps on the text at ``factor`` x ``trained_length``
    characters, unstretched and stretched by ``factor`` with PI ("linear") and NTK-aware scaling. ``inputs``:
    name -> (n, T + 1) ids. Per rule and inputs: the mean loss over seeds x n inputs (range) on positions
    0-(trained_length - 1) and from trained_length on, and at how many inputs the rule's loss from
    trained_length on is below the unstretched fine-tune's (same seed, same input)."""
    text, length = zen_of_python(), int(factor * trained_length)
    past: dict[str, dict[str, NDArray[np.float64]]] = {}
    lines = []
    for scaling in (None, "linear", "ntk"):
        runs: dict[str, list[NDArray[np.float64]]] = {name: [] for name in inputs}
        for seed in seeds:
            model = load_llama(seed)
            if scaling is not None:
                model.rope_scaling = {"scaling": scaling, "factor": factor, "trained_length": trained_length}
            fine_tune(model, text, length, steps, seed=seed)
            for name, ids in inputs.items():
                runs[name].append(next_token_losses(model, ids))
        label = scaling or "none"
        for name, losses in runs.items():
            both = np.concatenate(losses)                                        # (seeds x n, T)
            inside, after = both[:, :trained_length].mean(axis=1), both[:, trained_length:].mean(axis=1)
            past.setdefault(name, {})[label] = after
            below = "" if scaling is None else (f", below none at {(after < past[name]['none']).sum()}/"
                                                f"{len(after)}")
            lines.append(f"{label:6s} {name:13s} 0-{trained_length - 1} {_mean_range(inside)}, "
                         f"{trained_length}-{both.shape[1] - 1} {_mean_range(after)}{below}")
    return "\n".join(lines)


def llama_weights(hidden: int, intermediate: int, layers: int, heads: int, kv_heads: int, vocab: int) -> int:
    """The number of weights of ``transformers``' ``LlamaForCausalLM`` of this shape (untied embeddings),
    counted on PyTorch's ``meta`` device (shapes, no memory): models of one and two layers are built and the
    difference, one layer's weights, is added for each further layer."""
    for name, value in (("hidden", hidden), ("intermediate", intermediate), ("layers", layers),
                        ("heads", heads), ("kv_heads", kv_heads), ("vocab", vocab)):
        _positive_int(name, value)
    from transformers import LlamaConfig, LlamaForCausalLM

    def count(n: int) -> int:
        config = LlamaConfig(hidden_size=hidden, intermediate_size=intermediate, num_hidden_layers=n,
                             num_attention_heads=heads, num_key_value_heads=kv_heads, vocab_size=vocab)
        with torch.device("meta"):
            return sum(p.numel() for p in LlamaForCausalLM(config).parameters())

    one, two = count(1), count(2)
    return one + (layers - 1) * (two - one)


def character_match(texts: Sequence[str], references: Sequence[str]) -> NDArray[np.float64]:
    """The share of characters of each text that equal the reference's character at the same place (a text
    longer or shorter than its reference is scored over the reference's length)."""
    if len(texts) != len(references):
        raise ValueError(f"{len(texts)} texts but {len(references)} references")
    return np.array([sum(a == b for a, b in zip(t[:len(r)], r, strict=False)) / len(r)
                     for t, r in zip(texts, references, strict=True)])


def scores_per_head(prompt: int, new: int, cache: bool) -> int:
    """Attention scores one layer and head computes to generate ``new`` tokens after a ``prompt``-token
    prompt: with a cache, the prompt x prompt prefill, then 1 x T for T = prompt + 1 ... prompt + new - 1 keys
    (the last new token is never fed back); without, T x T for T = prompt ... prompt + new - 1."""
    if cache:
        return prompt * prompt + sum(range(prompt + 1, prompt + new))
    return sum(T * T for T in range(prompt, prompt + new))


# ------------------------------------------------------------------- memory traffic, counted
class SlowMemory:
    """A simulated slow memory (a GPU's HBM; a CPU's RAM) holding named (rows, columns) arrays.

    An algorithm computes only on what it has :meth:`read` into its fast memory (a GPU's on-chip SRAM;
    a CPU's caches) and puts results back with :meth:`write`; every element moved either way is counted
    in ``moved`` and every move logged in ``log`` as ``(op, name, first_row, stop_row)``.
    """

    def __init__(self, **arrays: ArrayLike) -> None:
        self.arrays = {name: np.array(a, dtype=float) for name, a in arrays.items()}
        self.moved = 0
        self.log: list[tuple[str, str, int, int]] = []

    def read(self, name: str, start: int = 0, stop: int | None = None) -> NDArray[np.floating]:
        """Rows ``start:stop`` of array ``name`` (a copy), counted."""
        if name not in self.arrays:
            raise KeyError(f"slow memory holds {sorted(self.arrays)}, not {name!r}")
        rows = self.arrays[name][start:stop].copy()
        stop = start + rows.shape[0]
        self.moved += rows.size
        self.log.append(("read", name, start, stop))
        return rows

    def write(self, name: str, rows: ArrayLike, start: int = 0) -> None:
        """Put ``rows`` into array ``name`` from row ``start`` on (a new array when ``name`` is new);
        counted."""
        rows = np.array(rows, dtype=float)
        if rows.ndim != 2:
            raise ValueError(f"rows must be a 2-D (rows, columns) array, got shape {rows.shape}")
        if name not in self.arrays:
            if start:
                raise ValueError(f"{name!r} is new: write it from row 0 or create it first")
            self.arrays[name] = np.zeros_like(rows)
        target = self.arrays[name]
        if start + rows.shape[0] > target.shape[0]:
            grown = np.zeros((start + rows.shape[0], target.shape[1]))
            grown[: target.shape[0]] = target
            self.arrays[name] = target = grown
        target[start : start + rows.shape[0]] = rows
        self.moved += rows.size
        self.log.append(("write", name, start, start + rows.shape[0]))


def standard_attention_io(memory: SlowMemory, causal: bool = False) -> None:
    """Attention as three separate steps, each reading its inputs from slow memory and writing its result:
    S = Q K^T / sqrt(d_k); P = softmax(S) row by row; O = P V. ``memory`` holds Q, K, V (T, d); O is
    written to it. Moves 4 T d + 4 T^2 elements: S and P are T x T and each is written once and read once.
    """
    Q, K = memory.read("Q"), memory.read("K")
    S = Q @ K.T / math.sqrt(Q.shape[1])
    if causal:
        S = np.where(np.tri(*S.shape, dtype=bool), S, -np.inf)
    memory.write("S", S)
    S = memory.read("S")
    P = np.exp(S - S.max(axis=1, keepdims=True))
    memory.write("P", P / P.sum(axis=1, keepdims=True))
    P, V = memory.read("P"), memory.read("V")
    memory.write("O", P @ V)


def flash_attention_io(memory: SlowMemory, block: int) -> None:
    """Exact attention tile by tile (queries outside, no mask): for each tile of ``block`` queries, read it
    once, stream every key/value tile through fast memory, write its output once. Each row keeps its output
    normalised and the log-sum-exp of its scores so far; a key tile's scores raise the log-sum-exp, and the
    old output shrinks by e^(old - new) before the tile's weighted values join it (lesson 10's merge of
    blocks, one tile at a time). ``memory`` holds Q, K, V (T, d); O is written to it. Fast memory used: about
    4 b d + b^2 numbers. Moves 2 T d + 2 T^2 d / b elements, for T a multiple of b.
    """
    block = _positive_int("block", block)
    T, d = memory.arrays["Q"].shape
    for i in range(0, T, block):
        q = memory.read("Q", i, i + block)  # (b, d)
        lse = np.full(q.shape[0], -np.inf)  # each row's log-sum-exp of the scores seen so far
        out = np.zeros((q.shape[0], memory.arrays["V"].shape[1]))  # each row's output so far, normalised
        for j in range(0, T, block):
            k, v = memory.read("K", j, j + block), memory.read("V", j, j + block)
            s = q @ k.T / math.sqrt(d)
            grown = np.logaddexp(lse, np.logaddexp.reduce(s, axis=1))
            out = out * np.exp(lse - grown)[:, None] + np.exp(s - grown[:, None]) @ v
            lse = grown
        memory.write("O", out, i)


# --------------------------------------------------------------------------------------------- timing
def median_seconds(fn: Callable[[], Any], repeat: int = 5, number: int = 1) -> float:
    """The median over ``repeat`` runs of the seconds one call of ``fn`` takes (a run: ``number`` calls)."""
    return float(np.median(timeit.repeat(fn, number=number, repeat=repeat))) / number


def time_batches(W: Tensor, batches: Sequence[int], control: int = 32, repeat: int = 7) -> dict[int, float]:
    """Time ``X @ W.T`` for a batch X of each size in ``batches`` (one row per sequence: a decode step's
    matrix product) and, as a control, ``control`` sequences one at a time; print per batch the median of
    ``repeat`` runs with their range, and the time per sequence. Returns {batch: median ms per sequence},
    the control under key 1."""
    per_sequence: dict[int, float] = {}
    for b in batches:
        X = torch.randn(b, W.shape[1])
        ms = 1e3 * np.array(timeit.repeat(lambda X=X: X @ W.T, number=1, repeat=repeat))
        per_sequence[b] = float(np.median(ms)) / b
        print(f"batch {b:3}: {np.median(ms):6.1f} ms per step (runs {ms.min():.1f} to {ms.max():.1f}), "
              f"{per_sequence[b]:5.2f} ms per sequence")
    X = torch.randn(control, W.shape[1])
    ms = 1e3 * np.array(timeit.repeat(lambda: [x @ W.T for x in X], number=1, repeat=repeat)) / control
    per_sequence[1] = float(np.median(ms))
    print(f"control, {control} sequences one at a time: {per_sequence[1]:.2f} ms per sequence "
          f"(runs {ms.min():.2f} to {ms.max():.2f})")
    return per_sequence
