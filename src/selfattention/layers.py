"""PyTorch modules for attention that is trained (lessons 04, 07, 09, 11).

Shapes: ``batch`` sequences of ``T`` tokens, ``d_model`` features per token,
``num_heads`` heads of ``d_k = d_model // num_heads`` features each.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .validation import positive_int, positive_number

__all__ = ["SelfAttention", "MultiHeadAttention", "attention_weights", "head_costs"]


def _check_input(x: Tensor, d_expected: int, size_name: str, name: str = "x") -> None:
    """``x`` must be a (T, d) or (batch, T, d) tensor with ``d == d_expected``."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() not in (2, 3):
        raise ValueError(
            f"{name} must have shape (T, d) or (batch, T, d), got shape {tuple(x.shape)}"
        )
    if x.shape[-1] != d_expected:
        raise ValueError(
            f"{name} has {x.shape[-1]} features per token but the layer expects "
            f"{size_name}={d_expected} ({name} shape {tuple(x.shape)})"
        )


def _check_dtype(x: Tensor, layer: nn.Module, name: str = "x") -> None:
    """The input must be a floating tensor of the same dtype as the layer's weights."""
    weight_dtype = next(layer.parameters()).dtype
    if x.dtype != weight_dtype:
        raise TypeError(
            f"{name} has dtype {x.dtype} but the layer's weights are {weight_dtype}; "
            f"convert one of them, e.g. {name}.to({weight_dtype}) or layer.to({x.dtype})"
        )


def _check_mask(mask: Tensor, weights_shape: tuple[int, ...], examples: list[tuple[int, ...]]) -> None:
    """The mask must broadcast to ``weights_shape`` without enlarging it."""
    if not isinstance(mask, Tensor) or mask.dtype != torch.bool:
        got = mask.dtype if isinstance(mask, Tensor) else type(mask).__name__
        raise TypeError(f"mask must be a boolean torch.Tensor (True = may attend), got {got}")
    try:
        fits = torch.broadcast_shapes(tuple(mask.shape), weights_shape) == torch.Size(weights_shape)
    except RuntimeError:
        fits = False
    if not fits:
        raise ValueError(
            f"mask has shape {tuple(mask.shape)}, which does not broadcast to the "
            f"attention weights' shape {weights_shape}; use e.g. one of {examples}"
        )


def attention_weights(q: Tensor, k: Tensor, mask: Tensor | None = None, scale: float | None = None) -> Tensor:
    """``softmax(scale * q k^T)`` with masked positions set to exactly 0; ``scale`` is 1/sqrt(d_k) by default.

    Inputs:
        q: (..., T_q, d_k), k: (..., T_k, d_k); mask: bool, broadcastable to (..., T_q, T_k),
        True = may attend; scale: the factor on the scores (None: 1/sqrt(d_k)).
    Returns:
        (..., T_q, T_k) weights, rows sum to 1 (rows with no allowed key are all 0).
    """
    # (scale q) k^T is scale (q k^T): scaling the (T_q, d_k) queries instead of the (T_q, T_k) scores
    # saves a whole (T_q, T_k) array. nn.MultiheadAttention scales its queries the same way.
    factor = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q * factor) @ k.transpose(-2, -1)  # (..., T_q, T_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    if scores.requires_grad:
        weights = torch.softmax(scores, dim=-1)
    else:  # nothing to differentiate (inference, torch.no_grad()): no second (T_q, T_k) array either
        weights = _softmax_in_place(scores)
    if mask is not None:
        weights = torch.nan_to_num(weights, nan=0.0)  # a row with every key masked
    return weights


def _softmax_in_place(scores: Tensor) -> Tensor:
    """``torch.softmax(scores, dim=-1)`` written over ``scores`` itself: (..., T_k) -> same tensor.

    A row that is all ``-inf`` (every key masked) comes out as NaN, as from ``torch.softmax``.
    """
    scores.sub_(scores.amax(dim=-1, keepdim=True)).exp_()  # shifted by the row maximum: exp cannot overflow
    return scores.div_(scores.sum(dim=-1, keepdim=True))


class SelfAttention(nn.Module):
    """Single-head self-attention with learnable query, key and value projections.

    ``Q = x W_Q``, ``K = x W_K``, ``V = x W_V``, out = ``softmax(scale * Q K^T) V``.

    Args:
        d_in: features per input token.
        d_out: size of each query and key vector (``d_k`` in the lessons), and of each value unless
            ``d_v`` is given.
        bias: whether the projections have a bias term.
        d_v: size of each value vector (``d_out`` when None): values need not match queries and keys.
        scale: the factor on the scores (None: ``1/sqrt(d_out)``; 1.0: no scaling).
    """

    def __init__(self, d_in: int, d_out: int, bias: bool = False, d_v: int | None = None,
                 scale: float | None = None) -> None:
        super().__init__()
        d_v = d_out if d_v is None else d_v
        for name, value in (("d_in", d_in), ("d_out", d_out), ("d_v", d_v)):
            positive_int(name, value)
        if scale is not None:
            positive_number("scale", scale, "a positive number or None (1/sqrt(d_out))")
        self.d_in, self.d_out, self.d_v, self.scale = d_in, d_out, d_v, scale
        self.W_query = nn.Linear(d_in, d_out, bias=bias)
        self.W_key = nn.Linear(d_in, d_out, bias=bias)
        self.W_value = nn.Linear(d_in, d_v, bias=bias)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """Inputs: x (T, d_in) or (batch, T, d_in); mask bool broadcastable to (T, T).

        Returns: out (..., T, d_v) and weights (..., T, T).
        """
        _check_input(x, self.d_in, "d_in")
        _check_dtype(x, self)
        if mask is not None:
            T = x.shape[-2]
            examples = [(T, T)] + ([(x.shape[0], T, T), (x.shape[0], 1, T)] if x.dim() == 3 else [])
            _check_mask(mask, (*x.shape[:-1], T), examples)
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)  # (..., T, d_out), twice; (..., T, d_v)
        weights = attention_weights(q, k, mask, self.scale)  # (..., T, T)
        return weights @ v, weights


class MultiHeadAttention(nn.Module):
    """Multi-head self-attention, the same computation as ``torch.nn.MultiheadAttention``.

    Each head h has its own slice of the projections: ``Q_h = x W_Q[:, h]`` etc., of size
    ``d_k = d_model // num_heads``. The heads run in parallel as one batched computation,
    their outputs are concatenated and mixed by the output projection ``W_O``.

    Args:
        d_model: features per token (input and output).
        num_heads: number of heads; must divide ``d_model``.
        bias: whether the four projections have bias terms.
    """

    def __init__(self, d_model: int, num_heads: int, bias: bool = True) -> None:
        super().__init__()
        for name, value in (("d_model", d_model), ("num_heads", num_heads)):
            positive_int(name, value)
        if d_model % num_heads != 0:
            raise ValueError(
                f"d_model={d_model} is not divisible by num_heads={num_heads}; "
                f"each head needs d_k = d_model / num_heads features"
            )
        self.d_model, self.num_heads = d_model, num_heads
        self.d_k = d_model // num_heads
        self.W_query = nn.Linear(d_model, d_model, bias=bias)
        self.W_key = nn.Linear(d_model, d_model, bias=bias)
        self.W_value = nn.Linear(d_model, d_model, bias=bias)
        self.W_out = nn.Linear(d_model, d_model, bias=bias)

    def split_heads(self, t: Tensor) -> Tensor:
        """(batch, T, d_model) -> (batch, num_heads, T, d_k)."""
        batch, T, _ = t.shape
        return t.view(batch, T, self.num_heads, self.d_k).transpose(1, 2)

    def merge_heads(self, t: Tensor) -> Tensor:
        """(batch, num_heads, T, d_k) -> (batch, T, d_model): the heads concatenated."""
        batch, _, T, _ = t.shape
        return t.transpose(1, 2).reshape(batch, T, self.d_model)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """Inputs:
            x: (batch, T, d_model) or (T, d_model).
            mask: optional bool, True = may attend, broadcastable to (batch, heads, T, T):
                (T, T) for a causal mask, (batch, 1, 1, T) for padding.
        Returns:
            out: same leading shape as x, (batch, T, d_model).
            weights: (batch, num_heads, T, T) (or (num_heads, T, T) for unbatched x).
        """
        _check_input(x, self.d_model, "d_model")
        _check_dtype(x, self)
        unbatched = x.dim() == 2
        if unbatched:
            x = x.unsqueeze(0)
        if mask is not None:
            batch, T = x.shape[0], x.shape[1]
            examples = [(T, T), (batch, 1, T, T), (batch, 1, 1, T)]
            _check_mask(mask, (batch, self.num_heads, T, T), examples)
        q = self.split_heads(self.W_query(x))  # (batch, heads, T, d_k)
        k = self.split_heads(self.W_key(x))
        v = self.split_heads(self.W_value(x))
        weights = attention_weights(q, k, mask)  # (batch, heads, T, T)
        out = self.W_out(self.merge_heads(weights @ v))  # (batch, T, d_model)
        if unbatched:
            return out.squeeze(0), weights.squeeze(0)
        return out, weights

    @classmethod
    def from_torch(cls, reference: nn.MultiheadAttention) -> MultiHeadAttention:
        """A copy of a ``torch.nn.MultiheadAttention``'s weights in our layout.

        PyTorch stores W_Q, W_K, W_V stacked in one ``in_proj_weight`` of shape
        (3 * d_model, d_model), in ``nn.Linear`` convention (out_features, in_features).
        """
        if not isinstance(reference, nn.MultiheadAttention):
            raise TypeError(
                f"reference must be a torch.nn.MultiheadAttention, got {type(reference).__name__}"
            )
        if not reference._qkv_same_embed_dim:
            raise ValueError(
                f"reference must use one size for queries, keys and values, got embed_dim="
                f"{reference.embed_dim}, kdim={reference.kdim}, vdim={reference.vdim}"
            )
        if reference.bias_k is not None or reference.add_zero_attn:
            raise ValueError(
                "reference uses add_bias_kv or add_zero_attn (extra key/value rows), "
                "which this layer does not have"
            )
        bias = reference.in_proj_bias is not None
        layer = cls(reference.embed_dim, reference.num_heads, bias=bias)
        # Match dtype and device before copying, so no digits are lost on the way.
        layer = layer.to(dtype=reference.in_proj_weight.dtype, device=reference.in_proj_weight.device)
        with torch.no_grad():
            w_q, w_k, w_v = reference.in_proj_weight.chunk(3, dim=0)
            for mine, w in zip((layer.W_query, layer.W_key, layer.W_value), (w_q, w_k, w_v), strict=True):
                mine.weight.copy_(w)
            layer.W_out.weight.copy_(reference.out_proj.weight)
            if bias:
                b_q, b_k, b_v = reference.in_proj_bias.chunk(3)
                for mine, b in zip((layer.W_query, layer.W_key, layer.W_value), (b_q, b_k, b_v), strict=True):
                    mine.bias.copy_(b)
                layer.W_out.bias.copy_(reference.out_proj.bias)
        return layer


def head_costs(d_model: int = 512, T: int = 100,
               heads: tuple[int, ...] = (1, 2, 4, 8, 16)) -> list[dict[str, int]]:
    """What a :class:`MultiHeadAttention` layer of width ``d_model`` costs on one sequence of ``T`` tokens,
    for each number of heads h in ``heads`` (d_k = d_model / h): one dict per h with ``h``, ``d_k``,
    ``parameters`` (weights and biases), ``multiply_adds`` (counted by PyTorch's FlopCounterMode from each
    product's shapes; it counts a multiply-add as 2 operations) and ``weights`` (the h T x T attention weights
    the layer returns)."""
    from torch.utils.flop_counter import FlopCounterMode

    x = torch.randn(1, positive_int("T", T), positive_int("d_model", d_model))
    rows = []
    for h in heads:
        layer = MultiHeadAttention(d_model, h)
        with FlopCounterMode(display=False) as counter, torch.no_grad():
            _, weights = layer(x)
        rows.append({"h": h, "d_k": d_model // h, "parameters": sum(p.numel() for p in layer.parameters()),
                     "multiply_adds": counter.get_total_flops() // 2, "weights": weights.numel()})
    return rows
