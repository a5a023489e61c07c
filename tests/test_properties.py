"""Properties that must hold for every input, checked on many generated ones (hypothesis)."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import selfattention as sa

FAST = settings(max_examples=60, deadline=None)


# These tensors are tiny: one torch thread is faster than several competing for a shared CPU.
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def finite_arrays(max_abs: float, min_dims: int = 1, max_dims: int = 3, max_side: int = 6):
    shapes = st.lists(st.integers(1, max_side), min_size=min_dims, max_size=max_dims).map(tuple)
    return shapes.flatmap(
        lambda shape: arrays(
            np.float64, shape, elements=st.floats(-max_abs, max_abs, allow_nan=False, allow_infinity=False)
        )
    )


def qkv(max_abs: float = 5.0):
    """(T, d) self-attention input and a permutation of its T tokens."""
    return st.tuples(st.integers(1, 7), st.integers(1, 5)).flatmap(
        lambda td: st.tuples(
            arrays(np.float64, td, elements=st.floats(-max_abs, max_abs, allow_nan=False)),
            st.permutations(range(td[0])).map(np.array),
        )
    )


# ----------------------------------------------------------------- softmax


@FAST
@given(x=finite_arrays(1e4))
@example(x=np.array([1e4, -1e4]))
@example(x=np.array([[1e4, 1e4], [-1e4, -1e4]]))
@example(x=np.array([1e4, 1e4 - 1e-9, -1e4]))
def test_softmax_rows_sum_to_one_and_never_nan(x: np.ndarray) -> None:
    for axis in range(x.ndim):
        s = sa.softmax(x, axis=axis)
        assert s.shape == x.shape
        assert not np.isnan(s).any()
        assert np.all((s >= 0) & (s <= 1))
        np.testing.assert_allclose(s.sum(axis=axis), 1.0, atol=1e-12)
        # the largest entry of each row gets the largest weight
        assert np.array_equal(
            np.take_along_axis(s, np.expand_dims(np.argmax(x, axis=axis), axis), axis),
            np.max(s, axis=axis, keepdims=True),
        )


@FAST
@given(x=finite_arrays(1e4, min_dims=2, max_dims=2), shift=st.floats(-1e3, 1e3))
def test_softmax_unchanged_by_adding_a_constant_per_row(x: np.ndarray, shift: float) -> None:
    offsets = shift * np.linspace(-1.0, 1.0, x.shape[0])[:, None]  # a different constant per row
    np.testing.assert_allclose(sa.softmax(x + offsets), sa.softmax(x), rtol=0, atol=1e-9)


# ----------------------------------------------------------------- permutation equivariance


@FAST
@given(data=qkv())
def test_basic_self_attention_is_permutation_equivariant(data) -> None:
    X, perm = data
    Z, A = sa.basic_self_attention(X)
    Z_p, A_p = sa.basic_self_attention(X[perm])
    np.testing.assert_allclose(Z_p, Z[perm], rtol=0, atol=1e-9)
    np.testing.assert_allclose(A_p, A[perm][:, perm], rtol=0, atol=1e-9)


@FAST
@given(data=qkv(), seed=st.integers(0, 2**16))
def test_scaled_attention_is_permutation_equivariant(data, seed: int) -> None:
    X, perm = data
    T, d = X.shape
    rng = np.random.default_rng(seed)
    W_q, W_k, W_v = (rng.normal(size=(d, 3)) for _ in range(3))
    mask = rng.random((T, T)) < 0.7
    out, w = sa.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v, mask=mask)
    Xp = X[perm]
    out_p, w_p = sa.scaled_dot_product_attention(Xp @ W_q, Xp @ W_k, Xp @ W_v, mask=mask[perm][:, perm])
    np.testing.assert_allclose(out_p, out[perm], rtol=0, atol=1e-9)
    np.testing.assert_allclose(w_p, w[perm][:, perm], rtol=0, atol=1e-9)


@FAST
@given(data=qkv(), seed=st.integers(0, 2**16))
def test_scaled_attention_output_ignores_key_order(data, seed: int) -> None:
    """Reordering keys together with their values leaves every query's output unchanged."""
    K, perm = data
    rng = np.random.default_rng(seed)
    Q, V = rng.normal(size=(3, K.shape[1])), rng.normal(size=(K.shape[0], 2))
    out, w = sa.scaled_dot_product_attention(Q, K, V)
    out_p, w_p = sa.scaled_dot_product_attention(Q, K[perm], V[perm])
    np.testing.assert_allclose(out_p, out, rtol=0, atol=1e-9)
    np.testing.assert_allclose(w_p, w[:, perm], rtol=0, atol=1e-9)


@cache
def _layer(kind: str) -> torch.nn.Module:
    torch.manual_seed(0)
    layer = sa.SelfAttention(4, 3, bias=True) if kind == "single" else sa.MultiHeadAttention(4, 2)
    return layer.double().eval()


@FAST
@given(
    kind=st.sampled_from(["single", "multi"]),
    T=st.integers(1, 7),
    seed=st.integers(0, 2**16),
    data=st.data(),
)
def test_torch_layers_are_permutation_equivariant(kind: str, T: int, seed: int, data) -> None:
    perm = torch.tensor(data.draw(st.permutations(range(T))))
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(2, T, 4, generator=gen, dtype=torch.float64)
    mask = torch.rand(T, T, generator=gen) < 0.7
    layer = _layer(kind)
    with torch.no_grad():
        out, w = layer(x, mask=mask)
        out_p, w_p = layer(x[:, perm], mask=mask[perm][:, perm])
    torch.testing.assert_close(out_p, out[:, perm], atol=1e-9, rtol=0)
    torch.testing.assert_close(w_p, w[..., perm, :][..., perm], atol=1e-9, rtol=0)


# ----------------------------------------------------------------- masks


@FAST
@given(
    T_q=st.integers(1, 6),
    T_k=st.integers(2, 6),
    seed=st.integers(0, 2**16),
    scale=st.sampled_from([1.0, 100.0, 1e4]),
    data=st.data(),
)
def test_masked_out_key_gets_exactly_zero_weight(T_q, T_k, seed, scale, data) -> None:
    rng = np.random.default_rng(seed)
    Q, K = rng.normal(scale=scale, size=(2, T_q, 3)), rng.normal(scale=scale, size=(2, T_k, 3))
    V = rng.normal(size=(2, T_k, 2))
    j = data.draw(st.integers(0, T_k - 1), label="masked key")
    mask = rng.random((2, T_q, T_k)) < 0.5
    mask[..., (j + 1) % T_k] = True  # every query keeps some other key
    mask[..., j] = False
    out, w = sa.scaled_dot_product_attention(Q, K, V, mask=mask)
    assert np.all(w[..., j] == 0.0)
    assert np.all(w[~mask] == 0.0)
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, atol=1e-12)
    V2 = V.copy()
    V2[:, j] = 1e9  # the masked key's value cannot leak into any output
    np.testing.assert_array_equal(sa.scaled_dot_product_attention(Q, K, V2, mask=mask)[0], out)


@FAST
@given(kind=st.sampled_from(["single", "multi"]), T=st.integers(2, 6), seed=st.integers(0, 2**16))
def test_masked_out_key_gets_exactly_zero_weight_in_layers(kind: str, T: int, seed: int) -> None:
    gen = torch.Generator().manual_seed(seed)
    x = 10 * torch.randn(2, T, 4, generator=gen, dtype=torch.float64)
    j = int(torch.randint(T, (1,), generator=gen))
    mask = torch.ones(T, T, dtype=torch.bool)
    mask[:, j] = False
    with torch.no_grad():
        out, w = _layer(kind)(x, mask=mask)
        x2 = x.clone()
        x2[:, j] = 1e3  # changing the masked token changes only its own output row
        out2, _ = _layer(kind)(x2, mask=mask)
    assert torch.all(w[..., j] == 0)
    keep = [i for i in range(T) if i != j]
    torch.testing.assert_close(out2[:, keep], out[:, keep], atol=1e-12, rtol=0)


@FAST
@given(
    T_q=st.integers(1, 20),
    T_k=st.integers(1, 40),
    block_size=st.integers(1, 45),
    seed=st.integers(0, 2**16),
)
def test_blockwise_attention_equals_full_for_any_block_size(T_q, T_k, block_size, seed) -> None:
    rng = np.random.default_rng(seed)
    Q, K, V = rng.normal(size=(T_q, 4)), rng.normal(size=(T_k, 4)), rng.normal(size=(T_k, 3))
    full, _ = sa.scaled_dot_product_attention(Q, K, V)
    np.testing.assert_allclose(
        sa.blockwise_attention(Q, K, V, block_size=block_size), full, rtol=0, atol=1e-10
    )
