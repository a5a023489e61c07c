# ruff: noqa: E501  (the case tables below keep one case per line, so each reads as a row)
"""Every validation error: its type, and a message that names the argument and what it got.

Each case calls the public API with one bad argument and checks the message with a regular
expression, so a message that stops naming the argument or the shapes fails the test.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest
import torch
from torch import nn

import selfattention as sa

ones = np.ones


def _tensor(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.ones(*shape, dtype=dtype)


def _bool(*shape: int) -> torch.Tensor:
    return torch.ones(*shape, dtype=torch.bool)


def esc(text: str) -> str:
    """A literal piece of a message, for use inside ``match=``."""
    return re.escape(text)


CORE_CASES: list[tuple[str, Callable[[], object], type[Exception], str]] = [
    # softmax
    ("softmax text", lambda: sa.softmax("abc"), TypeError, r"x must hold numbers, got dtype <U3"),
    ("softmax bools", lambda: sa.softmax([True, False]), TypeError, r"x must hold numbers, got dtype bool"),
    ("softmax scalar", lambda: sa.softmax(3.0), ValueError, esc("x must have at least 1 dimension(s), got shape ()")),
    ("softmax axis", lambda: sa.softmax(ones((2, 3)), axis=2), ValueError, esc("axis=2 is out of range for x with shape (2, 3)")),
    # basic_self_attention
    ("basic rank 1", lambda: sa.basic_self_attention(ones(3)), ValueError, esc("X must have at least 2 dimension(s) (..., T, d), got shape (3,)")),
    ("basic text", lambda: sa.basic_self_attention([["a"]]), TypeError, r"X must hold numbers"),
    # scaled_dot_product_attention: ranks
    ("sdpa Q rank", lambda: sa.scaled_dot_product_attention(ones(3), ones((2, 3)), ones((2, 3))), ValueError, esc("Q must have at least 2 dimension(s) (..., T, d), got shape (3,)")),
    ("sdpa K rank", lambda: sa.scaled_dot_product_attention(ones((2, 3)), ones(3), ones((2, 3))), ValueError, esc("K must have at least 2 dimension(s) (..., T, d), got shape (3,)")),
    ("sdpa V rank", lambda: sa.scaled_dot_product_attention(ones((2, 3)), ones((2, 3)), 1.0), ValueError, esc("V must have at least 2 dimension(s) (..., T, d), got shape ()")),
    # d_k, T, leading dims
    ("sdpa d_k", lambda: sa.scaled_dot_product_attention(ones((2, 3)), ones((2, 4)), ones((2, 3))), ValueError, esc("Q has d_k=3 but K has d_k=4 (Q shape (2, 3), K shape (2, 4))")),
    ("sdpa d_k batched", lambda: sa.scaled_dot_product_attention(ones((5, 2, 3)), ones((5, 2, 4)), ones((5, 2, 3))), ValueError, esc("Q has d_k=3 but K has d_k=4 (Q shape (5, 2, 3), K shape (5, 2, 4))")),
    ("sdpa T_k vs V", lambda: sa.scaled_dot_product_attention(ones((2, 3)), ones((2, 3)), ones((5, 3))), ValueError, esc("K has T_k=2 tokens but V has 5 (K shape (2, 3), V shape (5, 3))")),
    ("sdpa no keys", lambda: sa.scaled_dot_product_attention(ones((2, 3)), ones((0, 3)), ones((0, 3))), ValueError, esc("K has no tokens (shape (0, 3))")),
    ("sdpa leading dims", lambda: sa.scaled_dot_product_attention(ones((2, 2, 3)), ones((3, 2, 3)), ones((3, 2, 3))), ValueError, esc("leading (batch/head) dimensions of Q (2,), K (3,) and V (3,) do not broadcast")),
    ("sdpa V text", lambda: sa.scaled_dot_product_attention(ones((2, 3)), ones((2, 3)), [["a"] * 3] * 2), TypeError, r"V must hold numbers"),
    # masks
    ("mask int dtype", lambda: sa.scaled_dot_product_attention(ones((2, 3)), ones((2, 3)), ones((2, 3)), mask=ones((2, 2), dtype=int)), TypeError, r"mask must be boolean \(True = may attend\), got dtype int64"),
    ("mask float dtype", lambda: sa.scaled_dot_product_attention(ones((2, 3)), ones((2, 3)), ones((2, 3)), mask=ones((2, 2))), TypeError, r"mask must be boolean .*got dtype float64"),
    ("mask shape", lambda: sa.scaled_dot_product_attention(ones((2, 3)), ones((2, 3)), ones((2, 3)), mask=ones((3, 3), dtype=bool)), ValueError, esc("mask has shape (3, 3), which does not broadcast to the attention scores' shape (2, 2)")),
    ("mask shape batched", lambda: sa.scaled_dot_product_attention(ones((4, 2, 3)), ones((4, 5, 3)), ones((4, 5, 1)), mask=ones((3, 2, 5), dtype=bool)), ValueError, esc("mask has shape (3, 2, 5), which does not broadcast to the attention scores' shape (4, 2, 5)")),
    ("mask wider than T_k=1", lambda: sa.scaled_dot_product_attention(ones((2, 3)), ones((1, 3)), ones((1, 3)), mask=ones((2, 5), dtype=bool)), ValueError, esc("mask has shape (2, 5), which does not broadcast to the attention scores' shape (2, 1)")),
    # causal_mask and padding_mask
    ("causal 0", lambda: sa.causal_mask(0), ValueError, r"T must be a positive integer, got 0"),
    ("causal negative", lambda: sa.causal_mask(-3), ValueError, r"T must be a positive integer, got -3"),
    ("causal float", lambda: sa.causal_mask(2.5), ValueError, r"T must be a positive integer, got 2\.5"),
    ("causal bool", lambda: sa.causal_mask(True), ValueError, r"T must be a positive integer, got True"),
    ("causal text", lambda: sa.causal_mask("3"), ValueError, r"T must be a positive integer, got '3'"),
    ("padding too long", lambda: sa.padding_mask([1, 4], 3), ValueError, esc("lengths must be a 1-D array of values in [0, T=3], got shape (2,) and values [1, 4]")),
    ("padding 2-D", lambda: sa.padding_mask([[1]], 3), ValueError, esc("lengths must be a 1-D array of values in [0, T=3], got shape (1, 1)")),
    ("padding floats", lambda: sa.padding_mask([1.5], 3), TypeError, r"lengths must hold integers, got dtype float64"),
    ("padding T", lambda: sa.padding_mask([1], 0), ValueError, r"T must be a positive integer, got 0"),
    # blockwise_attention
    ("blockwise d_k", lambda: sa.blockwise_attention(ones((2, 3)), ones((2, 4)), ones((2, 4))), ValueError, esc("Q has d_k=3 but K has d_k=4 (Q shape (2, 3), K shape (2, 4))")),
    ("blockwise T_k vs V", lambda: sa.blockwise_attention(ones((2, 3)), ones((2, 3)), ones((4, 3))), ValueError, esc("K has T_k=2 tokens but V has 4 (K shape (2, 3), V shape (4, 3))")),
    ("blockwise rank", lambda: sa.blockwise_attention(ones(3), ones((2, 3)), ones((2, 3))), ValueError, esc("Q must have at least 2 dimension(s) (..., T, d), got shape (3,)")),
    ("blockwise leading", lambda: sa.blockwise_attention(ones((2, 2, 3)), ones((3, 2, 3)), ones((3, 2, 3))), ValueError, esc("leading (batch/head) dimensions of Q (2,), K (3,) and V (3,)")),
    ("blockwise block 0", lambda: sa.blockwise_attention(ones((2, 3)), ones((2, 3)), ones((2, 3)), block_size=0), ValueError, r"block_size must be a positive integer, got 0"),
    ("blockwise block float", lambda: sa.blockwise_attention(ones((2, 3)), ones((2, 3)), ones((2, 3)), block_size=2.5), ValueError, r"block_size must be a positive integer, got 2\.5"),
    # positional encoding
    ("pe T 0", lambda: sa.sinusoidal_positional_encoding(0, 4), ValueError, r"T must be a positive integer, got 0"),
    ("pe T float", lambda: sa.sinusoidal_positional_encoding(3.0, 4), ValueError, r"T must be a positive integer, got 3\.0"),
    ("pe d 0", lambda: sa.sinusoidal_positional_encoding(4, 0), ValueError, r"d must be a positive integer, got 0"),
    ("pe d negative", lambda: sa.sinusoidal_positional_encoding(4, -2), ValueError, r"d must be a positive integer, got -2"),
    ("pe base", lambda: sa.sinusoidal_positional_encoding(4, 4, base=-1.0), ValueError, r"base must be a positive finite number, got -1\.0"),
]  # fmt: skip


@pytest.mark.parametrize(("call", "error", "pattern"), [c[1:] for c in CORE_CASES], ids=[c[0] for c in CORE_CASES])
def test_numpy_functions_raise_clear_errors(call, error, pattern) -> None:
    with pytest.raises(error, match=pattern):
        call()


def _sa() -> sa.SelfAttention:
    return sa.SelfAttention(4, 2)


def _mha() -> sa.MultiHeadAttention:
    return sa.MultiHeadAttention(8, 2)


LAYER_CASES: list[tuple[str, Callable[[], object], type[Exception], str]] = [
    # constructors
    ("SA d_in 0", lambda: sa.SelfAttention(0, 2), ValueError, r"d_in must be a positive integer, got 0"),
    ("SA d_out float", lambda: sa.SelfAttention(4, 2.0), ValueError, r"d_out must be a positive integer, got 2\.0"),
    ("SA d_out bool", lambda: sa.SelfAttention(4, True), ValueError, r"d_out must be a positive integer, got True"),
    ("MHA not divisible", lambda: sa.MultiHeadAttention(10, 3), ValueError, r"d_model=10 is not divisible by num_heads=3"),
    ("MHA heads 0", lambda: sa.MultiHeadAttention(8, 0), ValueError, r"num_heads must be a positive integer, got 0"),
    ("MHA d_model 0", lambda: sa.MultiHeadAttention(0, 1), ValueError, r"d_model must be a positive integer, got 0"),
    # inputs
    ("SA features", lambda: _sa()(_tensor(2, 3, 5)), ValueError, esc("x has 5 features per token but the layer expects d_in=4 (x shape (2, 3, 5))")),
    ("SA features 2-D", lambda: _sa()(_tensor(3, 2)), ValueError, esc("x has 2 features per token but the layer expects d_in=4 (x shape (3, 2))")),
    ("SA rank 1", lambda: _sa()(_tensor(4)), ValueError, esc("x must have shape (T, d) or (batch, T, d), got shape (4,)")),
    ("SA rank 4", lambda: _sa()(_tensor(1, 2, 3, 4)), ValueError, esc("x must have shape (T, d) or (batch, T, d), got shape (1, 2, 3, 4)")),
    ("SA numpy input", lambda: _sa()(np.ones((3, 4))), TypeError, r"x must be a torch\.Tensor, got ndarray"),
    ("SA dtype", lambda: _sa()(_tensor(3, 4, dtype=torch.float64)), TypeError, r"x has dtype torch\.float64 but the layer's weights are torch\.float32"),
    ("MHA features", lambda: _mha()(_tensor(2, 3, 6)), ValueError, esc("x has 6 features per token but the layer expects d_model=8 (x shape (2, 3, 6))")),
    ("MHA rank 4", lambda: _mha()(_tensor(1, 2, 3, 8)), ValueError, esc("x must have shape (T, d) or (batch, T, d), got shape (1, 2, 3, 8)")),
    ("MHA int input", lambda: _mha()(torch.ones(2, 3, 8, dtype=torch.long)), TypeError, r"x has dtype torch\.int64 but the layer's weights are torch\.float32"),
    # masks
    ("SA mask float", lambda: _sa()(_tensor(2, 3, 4), mask=_tensor(3, 3)), TypeError, r"mask must be a boolean torch\.Tensor \(True = may attend\), got torch\.float32"),
    ("SA mask numpy", lambda: _sa()(_tensor(2, 3, 4), mask=sa.causal_mask(3)), TypeError, r"mask must be a boolean torch\.Tensor .*got ndarray"),
    ("SA mask shape", lambda: _sa()(_tensor(2, 3, 4), mask=_bool(4, 4)), ValueError, esc("mask has shape (4, 4), which does not broadcast to the attention weights' shape (2, 3, 3)")),
    ("SA mask enlarges", lambda: _sa()(_tensor(2, 3, 4), mask=_bool(2, 1, 3, 3)), ValueError, esc("mask has shape (2, 1, 3, 3), which does not broadcast to the attention weights' shape (2, 3, 3)")),
    ("SA mask unbatched", lambda: _sa()(_tensor(3, 4), mask=_bool(2, 3, 3)), ValueError, esc("mask has shape (2, 3, 3), which does not broadcast to the attention weights' shape (3, 3)")),
    ("MHA mask shape", lambda: _mha()(_tensor(2, 3, 8), mask=_bool(3, 2)), ValueError, esc("mask has shape (3, 2), which does not broadcast to the attention weights' shape (2, 2, 3, 3)")),
    ("MHA mask batch", lambda: _mha()(_tensor(2, 3, 8), mask=_bool(3, 1, 1, 3)), ValueError, esc("mask has shape (3, 1, 1, 3), which does not broadcast to the attention weights' shape (2, 2, 3, 3)")),
    ("MHA mask int", lambda: _mha()(_tensor(2, 3, 8), mask=torch.ones(3, 3, dtype=torch.int64)), TypeError, r"mask must be a boolean torch\.Tensor .*got torch\.int64"),
    # from_torch
    ("from_torch type", lambda: sa.MultiHeadAttention.from_torch(nn.Linear(2, 2)), TypeError, r"reference must be a torch\.nn\.MultiheadAttention, got Linear"),
    ("from_torch kdim", lambda: sa.MultiHeadAttention.from_torch(nn.MultiheadAttention(4, 2, kdim=3)), ValueError, r"reference must use one size .*embed_dim=4, kdim=3, vdim=4"),
    ("from_torch bias_kv", lambda: sa.MultiHeadAttention.from_torch(nn.MultiheadAttention(4, 2, add_bias_kv=True)), ValueError, r"reference uses add_bias_kv or add_zero_attn"),
    ("from_torch zero_attn", lambda: sa.MultiHeadAttention.from_torch(nn.MultiheadAttention(4, 2, add_zero_attn=True)), ValueError, r"reference uses add_bias_kv or add_zero_attn"),
]  # fmt: skip


@pytest.mark.parametrize(("call", "error", "pattern"), [c[1:] for c in LAYER_CASES], ids=[c[0] for c in LAYER_CASES])
def test_torch_layers_raise_clear_errors(call, error, pattern) -> None:
    with pytest.raises(error, match=pattern):
        call()


def test_valid_masks_of_every_documented_shape_are_accepted() -> None:
    """The checks must not reject what the docstrings promise (the other side of the tests above)."""
    rng = np.random.default_rng(0)
    Q = rng.normal(size=(2, 3, 4, 5))
    for shape in [(4, 4), (1, 4), (4,), (2, 1, 4, 4), (2, 3, 4, 4), (1, 1, 1, 4)]:
        _, w = sa.scaled_dot_product_attention(Q, Q, Q, mask=np.ones(shape, dtype=bool))
        assert w.shape == (2, 3, 4, 4)
    # a padding mask broadcasts against (batch, T, T) scores
    _, w = sa.scaled_dot_product_attention(Q[0], Q[0], Q[0], mask=sa.padding_mask([4, 2, 1], 4))
    assert w.shape == (3, 4, 4) and w[2, :, 1:].sum() == 0
    x = torch.ones(2, 4, 8)
    for shape in [(4, 4), (2, 4, 4), (2, 1, 4)]:
        assert _sa()(x[..., :4], mask=_bool(*shape))[1].shape == (2, 4, 4)
    for shape in [(4, 4), (2, 1, 4, 4), (2, 1, 1, 4), (2, 2, 4, 4), (1, 4)]:
        assert _mha()(x, mask=_bool(*shape))[1].shape == (2, 2, 4, 4)
