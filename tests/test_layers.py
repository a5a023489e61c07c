"""The PyTorch modules against ``torch.nn.MultiheadAttention``, the NumPy reference and gradcheck."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch
from torch import nn
from torch.func import functional_call

import selfattention as sa
from selfattention.layers import attention_weights

# These tensors are tiny: one torch thread is faster than several competing for a shared CPU.
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _pair(d_model: int, num_heads: int, bias: bool) -> tuple[nn.MultiheadAttention, sa.MultiHeadAttention]:
    torch.manual_seed(0)
    ref = nn.MultiheadAttention(d_model, num_heads, bias=bias, batch_first=True).eval()
    if bias:  # PyTorch starts its biases at zero: make them count
        with torch.no_grad():
            ref.in_proj_bias.normal_()
            ref.out_proj.bias.normal_()
    return ref, sa.MultiHeadAttention.from_torch(ref)


CONFIGS = [(8, 2, True), (8, 2, False), (12, 3, True), (6, 1, True), (16, 16, False)]


@pytest.mark.parametrize(("d_model", "num_heads", "bias"), CONFIGS)
@pytest.mark.parametrize("T", [1, 5, 33])
def test_oracle_mha_matches_torch_without_mask(d_model, num_heads, bias, T) -> None:
    ref, mine = _pair(d_model, num_heads, bias)
    x = torch.randn(3, T, d_model)
    with torch.no_grad():
        ref_out, ref_avg = ref(x, x, x, need_weights=True, average_attn_weights=True)
        _, ref_heads = ref(x, x, x, need_weights=True, average_attn_weights=False)
        out, weights = mine(x)
    assert out.shape == (3, T, d_model) and weights.shape == (3, num_heads, T, T)
    torch.testing.assert_close(out, ref_out, atol=1e-5, rtol=0)
    torch.testing.assert_close(weights.mean(dim=1), ref_avg, atol=1e-5, rtol=0)
    torch.testing.assert_close(weights, ref_heads, atol=1e-5, rtol=0)


@pytest.mark.parametrize(("d_model", "num_heads", "bias"), CONFIGS)
@pytest.mark.parametrize("kind", ["causal", "random", "padding", "causal+padding"])
def test_oracle_mha_matches_torch_with_mask(d_model, num_heads, bias, kind) -> None:
    """Our masks say True = may attend; PyTorch's boolean masks say True = may NOT attend."""
    ref, mine = _pair(d_model, num_heads, bias)
    batch, T = 3, 6
    x = torch.randn(batch, T, d_model)
    keep = torch.ones(T, T, dtype=torch.bool)  # (T, T), True = may attend
    if "causal" in kind:
        keep = torch.from_numpy(sa.causal_mask(T))
    if kind == "random":
        keep = torch.rand(T, T) < 0.5
        keep[:, 0] = True  # every query keeps one key
    lengths = torch.tensor([T, 4, 1]) if "padding" in kind else torch.full((batch,), T)
    real = torch.arange(T)[None, :] < lengths[:, None]  # (batch, T), True = real token
    mask = keep[None, None] & real[:, None, None, :]  # (batch, 1, T, T)
    with torch.no_grad():
        ref_out, ref_avg = ref(x, x, x, attn_mask=~keep, key_padding_mask=~real, need_weights=True)
        out, weights = mine(x, mask=mask)
        out_tt, _ = mine(x, mask=keep) if "padding" not in kind else (out, None)
    torch.testing.assert_close(out, ref_out, atol=1e-5, rtol=0)
    torch.testing.assert_close(weights.mean(dim=1), ref_avg, atol=1e-5, rtol=0)
    torch.testing.assert_close(out_tt, ref_out, atol=1e-5, rtol=0)  # a (T, T) mask broadcasts
    assert torch.all(weights.masked_select(~mask.expand_as(weights)) == 0)


@pytest.mark.parametrize("masked", [False, True])
def test_softmax_without_autograd_equals_softmax_with_it(masked: bool) -> None:
    """Under torch.no_grad() the weights are computed in place: same numbers, inputs left alone."""
    torch.manual_seed(3)
    q, k = torch.randn(2, 3, 7, 4), torch.randn(2, 3, 9, 4)
    mask = None
    if masked:
        mask = torch.rand(2, 1, 7, 9) < 0.6
        mask[0, 0, 2] = False  # a query row with every key masked: all zeros either way
    q_before, k_before = q.clone(), k.clone()
    with torch.no_grad():
        fast = attention_weights(q, k, mask)
    slow = attention_weights(q.requires_grad_(), k, mask)
    assert slow.requires_grad and not fast.requires_grad
    torch.testing.assert_close(fast, slow.detach(), atol=1e-6, rtol=0)
    reference = torch.softmax(q.detach() @ k.transpose(-2, -1) / 2.0, dim=-1)
    if masked:
        reference = torch.nan_to_num(torch.softmax(
            (q.detach() @ k.transpose(-2, -1) / 2.0).masked_fill(~mask, float("-inf")), dim=-1))
        assert torch.all(fast[0, :, 2] == 0)
    torch.testing.assert_close(fast, reference, atol=1e-6, rtol=0)
    assert torch.equal(q.detach(), q_before) and torch.equal(k, k_before)


def test_oracle_mha_unbatched_input() -> None:
    ref, mine = _pair(8, 4, True)
    x = torch.randn(5, 8)
    with torch.no_grad():
        ref_out, ref_heads = ref(x, x, x, average_attn_weights=False)
        out, weights = mine(x, mask=torch.ones(5, 5, dtype=torch.bool))
    assert out.shape == (5, 8) and weights.shape == (4, 5, 5)
    torch.testing.assert_close(out, ref_out, atol=1e-5, rtol=0)
    torch.testing.assert_close(weights, ref_heads, atol=1e-5, rtol=0)


def test_oracle_from_torch_keeps_float64_digits() -> None:
    """Loading a float64 reference copies its weights exactly (no trip through float32)."""
    torch.manual_seed(1)
    ref = nn.MultiheadAttention(6, 2, batch_first=True).double().eval()
    with torch.no_grad():
        for p in ref.parameters():
            p.copy_(torch.randn_like(p) / 3)  # values float32 cannot hold
    mine = sa.MultiHeadAttention.from_torch(ref)
    assert mine.W_query.weight.dtype == torch.float64
    stacked = torch.cat([mine.W_query.weight, mine.W_key.weight, mine.W_value.weight])
    assert torch.equal(stacked, ref.in_proj_weight)
    assert torch.equal(mine.W_out.bias, ref.out_proj.bias)
    x = torch.randn(2, 4, 6, dtype=torch.float64)
    with torch.no_grad():
        torch.testing.assert_close(mine(x)[0], ref(x, x, x)[0], atol=1e-12, rtol=0)


def test_oracle_self_attention_matches_numpy_and_torch_sdpa() -> None:
    torch.manual_seed(2)
    layer = sa.SelfAttention(5, 3).double()
    x = torch.randn(2, 7, 5, dtype=torch.float64)
    mask = torch.from_numpy(sa.causal_mask(7))
    with torch.no_grad():
        out, weights = layer(x, mask=mask)
        q, k, v = layer.W_query(x), layer.W_key(x), layer.W_value(x)
        ref_torch = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    ref_out, ref_weights = sa.scaled_dot_product_attention(q.numpy(), k.numpy(), v.numpy(), mask=mask.numpy())
    np.testing.assert_allclose(out.numpy(), ref_out, atol=1e-12)
    np.testing.assert_allclose(weights.numpy(), ref_weights, atol=1e-12)
    torch.testing.assert_close(out, ref_torch, atol=1e-12, rtol=0)


def test_oracle_mha_heads_are_independent_self_attentions() -> None:
    """Head h of the layer equals scaled dot-product attention on its slice of Q, K, V."""
    torch.manual_seed(3)
    layer = sa.MultiHeadAttention(6, 3).double()
    x = torch.randn(2, 4, 6, dtype=torch.float64)
    with torch.no_grad():
        _, weights = layer(x)
        q, k, v = layer.W_query(x).numpy(), layer.W_key(x).numpy(), layer.W_value(x).numpy()
    for h in range(3):
        cols = slice(2 * h, 2 * h + 2)
        _, ref = sa.scaled_dot_product_attention(q[..., cols], k[..., cols], v[..., cols])
        np.testing.assert_allclose(weights[:, h].numpy(), ref, atol=1e-12)


# ----------------------------------------------------------------- gradcheck


def _gradcheck_module(module: nn.Module, x: torch.Tensor, mask: torch.Tensor | None) -> bool:
    """gradcheck (double precision): the full Jacobian with respect to the input, and with
    respect to the input and every parameter together in gradcheck's fast mode (random
    projections of the Jacobian), which keeps the run short."""
    names = [n for n, _ in module.named_parameters()]
    params = tuple(p.detach().clone().requires_grad_(True) for p in module.parameters())

    def f(x: torch.Tensor, *ps: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return functional_call(module, dict(zip(names, ps, strict=True)), (x,), {"mask": mask})

    x = x.detach().clone().requires_grad_(True)
    wrt_input = torch.autograd.gradcheck(lambda x: f(x, *params), (x,), eps=1e-6, atol=1e-5)
    wrt_all = torch.autograd.gradcheck(f, (x, *params), eps=1e-6, atol=1e-5, fast_mode=True)
    return wrt_input and wrt_all


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("masked", [False, True])
def test_gradcheck_self_attention(bias: bool, masked: bool) -> None:
    torch.manual_seed(4)
    layer = sa.SelfAttention(3, 2, bias=bias).double()
    x = torch.randn(2, 4, 3, dtype=torch.float64)
    mask = torch.from_numpy(sa.causal_mask(4)) if masked else None
    assert _gradcheck_module(layer, x, mask)


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("masked", [False, True])
def test_gradcheck_multi_head_attention(bias: bool, masked: bool) -> None:
    torch.manual_seed(5)
    layer = sa.MultiHeadAttention(4, 2, bias=bias).double()
    x = torch.randn(2, 3, 4, dtype=torch.float64)
    mask = torch.tensor([[[[True, True, False]]], [[[True, False, False]]]]) if masked else None
    assert _gradcheck_module(layer, x, mask)


def test_gradcheck_with_a_fully_masked_query_row() -> None:
    """A query with no allowed key gives zeros and finite gradients, never NaN."""
    torch.manual_seed(6)
    layer = sa.SelfAttention(3, 2).double()
    x = torch.randn(3, 3, dtype=torch.float64)
    mask = torch.tensor([[False, False, False], [True, True, False], [True, True, True]])
    assert _gradcheck_module(layer, x, mask)
    out, weights = layer(x, mask=mask)
    assert torch.all(out[0] == 0) and torch.all(weights[0] == 0)
    out.sum().backward()
    assert all(torch.isfinite(p.grad).all() for p in layer.parameters())


# ----------------------------------------------------------------- hand-worked cases


def test_hand_self_attention_with_identity_projections() -> None:
    """W_Q = W_K = W_V = I: the layer is softmax(X X^T / sqrt(2)) X, worked out for X = I."""
    layer = sa.SelfAttention(2, 2)
    with torch.no_grad():
        for lin in (layer.W_query, layer.W_key, layer.W_value):
            lin.weight.copy_(torch.eye(2))
    out, weights = layer(torch.eye(2))
    a = math.exp(1 / math.sqrt(2))
    expected = torch.tensor([[a / (a + 1), 1 / (a + 1)], [1 / (a + 1), a / (a + 1)]])
    torch.testing.assert_close(weights, expected, atol=1e-6, rtol=0)
    torch.testing.assert_close(out, expected, atol=1e-6, rtol=0)


def test_hand_mha_identical_tokens_give_uniform_weights() -> None:
    torch.manual_seed(7)
    layer = sa.MultiHeadAttention(8, 4)
    x = torch.randn(1, 1, 8).expand(2, 5, 8)
    with torch.no_grad():
        out, weights = layer(x)
    torch.testing.assert_close(weights, torch.full((2, 4, 5, 5), 0.2), atol=1e-6, rtol=0)
    torch.testing.assert_close(out, out[:, :1].expand_as(out), atol=1e-6, rtol=0)


def test_hand_causal_first_token_sees_only_itself_in_layers() -> None:
    torch.manual_seed(8)
    mask = torch.from_numpy(sa.causal_mask(4))
    for layer in (sa.SelfAttention(3, 3), sa.MultiHeadAttention(6, 2)):
        d = 3 if isinstance(layer, sa.SelfAttention) else 6
        with torch.no_grad():
            _, weights = layer(torch.randn(2, 4, d), mask=mask)
        first = weights[..., 0, :]
        assert torch.all(first[..., 0] == 1) and torch.all(first[..., 1:] == 0)
        assert torch.all(weights.triu(diagonal=1) == 0)


def test_hand_layer_sizes_and_parameter_names() -> None:
    layer = sa.SelfAttention(5, 3)
    assert [type(m) for m in (layer.W_query, layer.W_key, layer.W_value)] == [nn.Linear] * 3
    assert layer.W_query.weight.shape == (3, 5) and layer.W_query.bias is None
    mha = sa.MultiHeadAttention(12, 3)
    assert mha.d_k == 4 and mha.W_out.bias is not None
    assert sum(p.numel() for p in mha.parameters()) == 4 * (12 * 12 + 12)


@pytest.mark.parametrize("scale", [None, 1.0, 1 / 8])
def test_self_attention_with_its_own_d_v_and_scale_matches_torch_sdpa(scale: float | None) -> None:
    """d_v differs from d_k (values need not match queries and keys); the scale is 1/sqrt(d_k) by default,
    1 for no scaling, any other positive factor as given: the same as PyTorch's own attention."""
    torch.manual_seed(7)
    layer = sa.SelfAttention(5, 4, d_v=3, scale=scale).double()
    x = torch.randn(2, 6, 5, dtype=torch.float64)
    out, weights = layer(x)
    q, k, v = layer.W_query(x), layer.W_key(x), layer.W_value(x)
    expected = torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=scale)
    assert out.shape == (2, 6, 3) and weights.shape == (2, 6, 6)
    torch.testing.assert_close(out, expected)


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"d_v": 0}, "d_v must be a positive integer, got 0"),
    ({"scale": 0.0}, "scale must be a positive number or None"),
    ({"scale": float("nan")}, "scale must be a positive number or None"),
])
def test_self_attention_refuses_a_bad_d_v_or_scale(kwargs: dict, words: str) -> None:
    with pytest.raises(ValueError, match=re.escape(words)):
        sa.SelfAttention(5, 4, **kwargs)


def test_head_costs_match_the_formulas_of_lesson_07():
    """Parameters 4 d^2 + 4 d and multiply-adds 4 T d^2 + 2 T^2 d for every h; h T^2 weights."""
    from selfattention.layers import head_costs

    d, T = 64, 10
    for row in head_costs(d_model=d, T=T, heads=(1, 2, 4)):
        assert row["d_k"] == d // row["h"]
        assert row["parameters"] == 4 * d * d + 4 * d
        assert row["multiply_adds"] == 4 * T * d * d + 2 * T * T * d
        assert row["weights"] == row["h"] * T * T
