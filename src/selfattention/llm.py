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
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from numpy.typing import ArrayLike, NDArray
from torch import Tensor, nn

from .validation import check_qkv, float_array
from .validation import positive_int as _positive_int

__all__ = [
    "KVCache",
    "grouped_query_attention",
    "rotary",
    "sliding_window_mask",
    "tiled_attention",
    "TileCounts",
    "TinyDecoder",
    "load_decoder",
    "DECODER_WEIGHTS",
]

#: The decoder's weights, written by ``tools/train_decoder.py``.
DECODER_WEIGHTS = Path(__file__).with_name("decoder.safetensors")


# ------------------------------------------------------------------------------------------- KV cache
class KVCache:
    """The keys and values of every layer seen so far, grown by one step at a time.

    ``keys[layer]`` and ``values[layer]`` have shape (batch, num_kv_heads, T_cached, d_k).
    """

    def __init__(self, num_layers: int) -> None:
        self.num_layers = _positive_int("num_layers", num_layers)
        self.keys: list[Tensor | None] = [None] * self.num_layers
        self.values: list[Tensor | None] = [None] * self.num_layers

    def __len__(self) -> int:
        """Number of cached tokens."""
        k = self.keys[0]
        return 0 if k is None else k.shape[-2]

    def append(self, layer: int, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Add this step's keys and values, (batch, g, T_new, d_k), to ``layer``; return all of them.

        Returns: keys and values of every token so far, (batch, g, T_cached + T_new, d_k).
        """
        if not 0 <= layer < self.num_layers:
            raise ValueError(f"layer must be in [0, {self.num_layers}), got {layer}")
        if k.shape != v.shape or k.dim() != 4:
            raise ValueError(
                f"k and v must have the same shape (batch, num_kv_heads, T_new, d_k), "
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
        self.keys[layer], self.values[layer] = k, v
        return k, v

    @property
    def nbytes(self) -> int:
        """Bytes held by all cached keys and values."""
        return sum(t.numel() * t.element_size() for t in self.keys + self.values if t is not None)


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
def rotary(x: Tensor, positions: Tensor | None = None, base: float = 10000.0) -> Tensor:
    """Rotary position embedding (RoPE) of queries or keys, in the half-split (Llama) layout.

    Feature ``i`` and feature ``i + d/2`` form a pair, rotated by the angle
    ``position * base^(-2i/d)``. (The RoFormer paper pairs neighbours ``2i, 2i+1`` instead: the same
    rotation with the features listed in another order.)

    Inputs:
        x: (..., T, d) with d even; positions: (T,) integer positions (default 0..T-1).
    Returns:
        (..., T, d), the rotated vectors (lengths unchanged).
    """
    if not isinstance(x, Tensor) or x.dim() < 2:
        raise ValueError(f"x must be a torch.Tensor of shape (..., T, d), got "
                         f"{tuple(x.shape) if isinstance(x, Tensor) else type(x).__name__}")
    T, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError(f"x must have an even number of features d (pairs are rotated), got d={d}")
    if positions is None:
        positions = torch.arange(T)
    if positions.shape != (T,):
        raise ValueError(f"positions must have shape (T,) = ({T},), got {tuple(positions.shape)}")
    inv_freq = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # (d/2,)
    angles = positions.to(torch.float64)[:, None] * inv_freq  # (T, d/2)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


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

        With a cache, ``ids`` are the tokens after the ``len(cache)`` cached ones, and their keys
        and values are appended to it.
        """
        start = len(cache) if cache is not None else 0
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
