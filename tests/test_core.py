"""The NumPy reference functions against independent references and hand-worked cases.

Oracle tests compare with PyTorch (``torch.nn.functional.scaled_dot_product_attention``) or with
a formula written out again here; hand tests use inputs small enough to work out on paper.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import selfattention as sa

ATOL = 1e-10


# These tensors are tiny: one torch thread is faster than several competing for a shared CPU.
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _torch_reference(
    Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's output, and its weights read off by attending over V = identity.

    With V = I (one one-hot value per key), each output row *is* that query's weight row,
    so the weights come from PyTorch's own kernel rather than from code written here.
    """
    q, k, v = (torch.from_numpy(a) for a in (Q, K, V))
    m = None if mask is None else torch.from_numpy(mask)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=m)
    T_k = K.shape[-2]
    eye = torch.eye(T_k, dtype=torch.float64).expand(*k.shape[:-2], T_k, T_k)
    weights = F.scaled_dot_product_attention(q, k, eye, attn_mask=m)
    return out.numpy(), weights.numpy()


def _random_mask(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """A random boolean mask (True = may attend) in which every query keeps key 0."""
    mask = rng.random(shape) < 0.6
    mask[..., 0] = True
    return mask


# (leading dims, T_q, T_k, d_k, d_v): T = 1 and T = 257, d_k odd and even, batch and head dims.
SHAPES = [
    ((), 1, 1, 1, 1),
    ((), 1, 1, 4, 3),
    ((), 5, 5, 3, 2),
    ((2,), 6, 6, 8, 8),
    ((2, 3), 1, 1, 5, 4),
    ((2, 3), 7, 7, 6, 5),
    ((2, 3), 4, 9, 7, 2),  # cross-attention: T_q != T_k
    ((2,), 257, 257, 16, 4),
    ((2, 2), 257, 257, 9, 3),
]


@pytest.mark.parametrize(("lead", "T_q", "T_k", "d_k", "d_v"), SHAPES)
def test_oracle_sdpa_matches_torch_without_mask(lead, T_q, T_k, d_k, d_v) -> None:
    rng = np.random.default_rng(0)
    Q = rng.normal(size=(*lead, T_q, d_k))
    K = rng.normal(size=(*lead, T_k, d_k))
    V = rng.normal(size=(*lead, T_k, d_v))
    out, weights = sa.scaled_dot_product_attention(Q, K, V)
    ref_out, ref_weights = _torch_reference(Q, K, V, None)
    assert out.shape == (*lead, T_q, d_v) and weights.shape == (*lead, T_q, T_k)
    np.testing.assert_allclose(out, ref_out, rtol=0, atol=ATOL)
    np.testing.assert_allclose(weights, ref_weights, rtol=0, atol=ATOL)


@pytest.mark.parametrize(("lead", "T_q", "T_k", "d_k", "d_v"), SHAPES)
@pytest.mark.parametrize("mask_kind", ["full", "broadcast_tq_tk", "per_batch", "causal"])
def test_oracle_sdpa_matches_torch_with_mask(lead, T_q, T_k, d_k, d_v, mask_kind) -> None:
    rng = np.random.default_rng(1)
    Q = rng.normal(size=(*lead, T_q, d_k))
    K = rng.normal(size=(*lead, T_k, d_k))
    V = rng.normal(size=(*lead, T_k, d_v))
    if mask_kind == "full":
        mask = _random_mask(rng, (*lead, T_q, T_k))
    elif mask_kind == "broadcast_tq_tk":
        mask = _random_mask(rng, (T_q, T_k))
    elif mask_kind == "per_batch":  # one mask per leading index 0, shared by the rest
        mask = _random_mask(rng, (*lead[:1], *([1] * len(lead[1:])), T_q, T_k))
    elif T_q == T_k:
        mask = sa.causal_mask(T_q)
    else:  # the causal pattern for T_q != T_k (aligned at the top left)
        mask = np.tril(np.ones((T_q, T_k), dtype=bool))
    out, weights = sa.scaled_dot_product_attention(Q, K, V, mask=mask)
    ref_out, ref_weights = _torch_reference(Q, K, V, np.broadcast_to(mask, (*lead, T_q, T_k)).copy())
    np.testing.assert_allclose(out, ref_out, rtol=0, atol=ATOL)
    np.testing.assert_allclose(weights, ref_weights, rtol=0, atol=ATOL)
    assert np.all(weights[..., ~np.broadcast_to(mask, weights.shape)] == 0.0)


def test_oracle_sdpa_fully_masked_row_gives_zeros_like_torch() -> None:
    rng = np.random.default_rng(2)
    Q, K, V = (rng.normal(size=(3, 4, 5)) for _ in range(3))
    mask = _random_mask(rng, (3, 4, 4))
    mask[1, 2, :] = False  # query 2 of batch 1 may attend to nothing
    out, weights = sa.scaled_dot_product_attention(Q, K, V, mask=mask)
    ref_out, ref_weights = _torch_reference(Q, K, V, mask)
    np.testing.assert_allclose(out, ref_out, rtol=0, atol=ATOL)
    np.testing.assert_allclose(weights, ref_weights, rtol=0, atol=ATOL)
    assert np.all(weights[1, 2] == 0.0) and np.all(out[1, 2] == 0.0)


def test_oracle_sdpa_weights_match_softmax_written_in_torch() -> None:
    """A second, independent reference for the weights: softmax(QK^T/sqrt(d_k)) in torch."""
    rng = np.random.default_rng(3)
    Q, K = rng.normal(size=(2, 6, 5)), rng.normal(size=(2, 6, 5))
    mask = _random_mask(rng, (2, 6, 6))
    scores = torch.from_numpy(Q) @ torch.from_numpy(K).transpose(-1, -2) / math.sqrt(5)
    ref = torch.softmax(scores.masked_fill(~torch.from_numpy(mask), -math.inf), dim=-1).numpy()
    _, weights = sa.scaled_dot_product_attention(Q, K, rng.normal(size=(2, 6, 3)), mask=mask)
    np.testing.assert_allclose(weights, ref, rtol=0, atol=ATOL)


def test_oracle_softmax_matches_torch() -> None:
    rng = np.random.default_rng(4)
    x = rng.normal(scale=50.0, size=(3, 4, 7))
    for axis in (0, 1, -1):
        np.testing.assert_allclose(
            sa.softmax(x, axis=axis), torch.softmax(torch.from_numpy(x), dim=axis).numpy(), atol=1e-12
        )


def test_oracle_basic_self_attention_matches_torch() -> None:
    X = np.random.default_rng(5).normal(size=(2, 6, 4))
    Z, A = sa.basic_self_attention(X)
    x = torch.from_numpy(X)
    ref_A = torch.softmax(x @ x.transpose(-1, -2), dim=-1)
    np.testing.assert_allclose(A, ref_A.numpy(), atol=1e-12)
    np.testing.assert_allclose(Z, (ref_A @ x).numpy(), atol=1e-12)


@pytest.mark.parametrize("block_size", [1, 2, 3, 5, 7, 16, 50, 64, 256, 1000])
@pytest.mark.parametrize(("lead", "T_q", "T_k"), [((), 50, 50), ((2, 3), 13, 37), ((2,), 1, 1)])
def test_oracle_blockwise_equals_full_attention(block_size, lead, T_q, T_k) -> None:
    rng = np.random.default_rng(6)
    Q = rng.normal(scale=3.0, size=(*lead, T_q, 5))
    K = rng.normal(scale=3.0, size=(*lead, T_k, 5))
    V = rng.normal(size=(*lead, T_k, 3))
    full, _ = sa.scaled_dot_product_attention(Q, K, V)
    np.testing.assert_allclose(
        sa.blockwise_attention(Q, K, V, block_size=block_size), full, rtol=0, atol=ATOL
    )


def test_oracle_blockwise_with_large_scores_stays_exact() -> None:
    """Scores in the hundreds: the running maximum must rescale earlier blocks correctly."""
    rng = np.random.default_rng(7)
    Q, K, V = (
        rng.normal(scale=20.0, size=(10, 8)),
        rng.normal(scale=20.0, size=(33, 8)),
        rng.normal(size=(33, 2)),
    )
    full, _ = sa.scaled_dot_product_attention(Q, K, V)
    for block_size in (1, 4, 10, 32):
        np.testing.assert_allclose(sa.blockwise_attention(Q, K, V, block_size=block_size), full, atol=ATOL)


@pytest.mark.parametrize(("T", "d"), [(1, 1), (1, 2), (5, 7), (10, 8), (50, 64), (3, 513)])
def test_oracle_positional_encoding_matches_formula(T: int, d: int) -> None:
    """PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(pos / 10000^(2i/d)), one entry at a time."""
    expected = np.empty((T, d))
    for pos in range(T):
        for j in range(d):
            i = j // 2
            angle = pos / 10000 ** (2 * i / d)
            expected[pos, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    pe = sa.sinusoidal_positional_encoding(T, d)
    assert pe.shape == (T, d)
    np.testing.assert_allclose(pe, expected, rtol=0, atol=1e-12)


def test_oracle_positional_encoding_other_base() -> None:
    pe = sa.sinusoidal_positional_encoding(4, 4, base=100.0)
    assert pe[3, 2] == pytest.approx(math.sin(3 / 100 ** (2 / 4)))
    assert pe[3, 3] == pytest.approx(math.cos(3 / 100 ** (2 / 4)))


# ----------------------------------------------------------------- hand-worked cases


def test_hand_softmax_small_rows() -> None:
    np.testing.assert_allclose(sa.softmax([0.0, math.log(3.0)]), [0.25, 0.75], atol=1e-15)
    np.testing.assert_allclose(sa.softmax([2.0, 2.0, 2.0, 2.0]), [0.25] * 4, atol=1e-15)
    assert sa.softmax([1e4, -1e4]).tolist() == [1.0, 0.0]
    assert sa.softmax([0.0, -np.inf]).tolist() == [1.0, 0.0]
    # integers are accepted and treated as floats
    np.testing.assert_allclose(
        sa.softmax([[0, 0], [1, 1]], axis=0), [[1 / (1 + math.e)] * 2, [math.e / (1 + math.e)] * 2]
    )


def test_hand_softmax_all_minus_inf_row_is_zeros_without_warning() -> None:
    with np.errstate(all="raise"):
        out = sa.softmax(np.array([[-np.inf, -np.inf], [0.0, 0.0]]))
    assert out.tolist() == [[0.0, 0.0], [0.5, 0.5]]


def test_hand_two_orthogonal_unit_vectors() -> None:
    """X = I: omega = I, so each token puts e/(e+1) on itself and 1/(e+1) on the other."""
    Z, A = sa.basic_self_attention(np.eye(2))
    on, off = math.e / (math.e + 1), 1 / (math.e + 1)
    np.testing.assert_allclose(A, [[on, off], [off, on]], atol=1e-15)
    np.testing.assert_allclose(Z, [[on, off], [off, on]], atol=1e-15)  # Z = A X = A


def test_hand_identical_tokens_give_uniform_weights() -> None:
    X = np.tile([0.3, -1.2, 2.0], (5, 1))
    Z, A = sa.basic_self_attention(X)
    np.testing.assert_allclose(A, np.full((5, 5), 0.2), atol=1e-15)
    np.testing.assert_allclose(Z, X, atol=1e-15)
    out, weights = sa.scaled_dot_product_attention(X, X, X)
    np.testing.assert_allclose(weights, np.full((5, 5), 0.2), atol=1e-15)
    np.testing.assert_allclose(out, X, atol=1e-15)


def test_hand_two_by_two_scaled_attention() -> None:
    """Q = [[1, 0], [0, 2]], K = [[1, 1], [0, 1]], V = [[10, 0], [0, 10]], d_k = 2.

    Scores Q K^T / sqrt(2) = [[1, 0], [2, 2]] / sqrt(2).
    Row 0: weights (e^(1/sqrt2), 1) / (e^(1/sqrt2) + 1). Row 1: equal scores, so (1/2, 1/2).
    """
    Q = np.array([[1.0, 0.0], [0.0, 2.0]])
    K = np.array([[1.0, 1.0], [0.0, 1.0]])
    V = np.array([[10.0, 0.0], [0.0, 10.0]])
    out, weights = sa.scaled_dot_product_attention(Q, K, V)
    a = math.exp(1 / math.sqrt(2))
    expected_w = np.array([[a / (a + 1), 1 / (a + 1)], [0.5, 0.5]])
    np.testing.assert_allclose(weights, expected_w, atol=1e-15)
    np.testing.assert_allclose(out, 10 * expected_w, atol=1e-14)


def test_hand_scaling_by_sqrt_d_k() -> None:
    """All-ones q and k of size 4: q.k = 4, scaled by sqrt(4) = 2. Key 1 is zero, so its score is 0."""
    Q = np.ones((1, 4))
    K = np.array([[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0]])
    _, weights = sa.scaled_dot_product_attention(Q, K, np.eye(2))
    np.testing.assert_allclose(
        weights, [[math.exp(2) / (math.exp(2) + 1), 1 / (math.exp(2) + 1)]], atol=1e-15
    )


def test_hand_causal_mask() -> None:
    assert sa.causal_mask(1).tolist() == [[True]]
    assert sa.causal_mask(3).tolist() == [[True, False, False], [True, True, False], [True, True, True]]
    assert sa.causal_mask(np.int64(2)).dtype == bool


def test_hand_causal_attention_first_token_sees_only_itself() -> None:
    rng = np.random.default_rng(8)
    X = rng.normal(size=(4, 3))
    out, weights = sa.scaled_dot_product_attention(X, X, X, mask=sa.causal_mask(4))
    assert weights[0].tolist() == [1.0, 0.0, 0.0, 0.0]
    np.testing.assert_array_equal(out[0], X[0])
    assert np.all(np.triu(weights, k=1) == 0.0)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-15)


def test_hand_padding_mask() -> None:
    mask = sa.padding_mask([2, 3, 0], 3)
    assert mask.shape == (3, 1, 3)
    assert mask[:, 0].tolist() == [[True, True, False], [True, True, True], [False, False, False]]


def test_hand_padding_mask_ignores_padded_values() -> None:
    """With length 2 of 3, the third value must not influence anything."""
    rng = np.random.default_rng(9)
    X = rng.normal(size=(1, 3, 2))
    mask = sa.padding_mask([2], 3)
    out1, w = sa.scaled_dot_product_attention(X, X, X, mask=mask)
    V2 = X.copy()
    V2[0, 2] = 1e6
    out2, _ = sa.scaled_dot_product_attention(X, X, V2, mask=mask)
    np.testing.assert_array_equal(out1, out2)
    assert np.all(w[..., 2] == 0.0)


def test_hand_positional_encoding_first_rows() -> None:
    pe = sa.sinusoidal_positional_encoding(2, 4)
    assert pe[0].tolist() == [0.0, 1.0, 0.0, 1.0]  # sin 0 = 0, cos 0 = 1
    np.testing.assert_allclose(pe[1], [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)], atol=1e-15)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_of_the_inputs_is_kept(dtype) -> None:
    """float32 in, float32 out: no silent promotion that would double the memory of every (T, T) array."""
    rng = np.random.default_rng(5)
    Q, K, V = (rng.standard_normal((2, 6, 4)).astype(dtype) for _ in range(3))
    out, weights = sa.scaled_dot_product_attention(Q, K, V, mask=sa.causal_mask(6))
    assert out.dtype == dtype and weights.dtype == dtype
    assert sa.blockwise_attention(Q, K, V, block_size=4).dtype == dtype
    assert sa.softmax(Q).dtype == dtype
    Z, A = sa.basic_self_attention(Q)
    assert Z.dtype == dtype and A.dtype == dtype
    # The float32 result is the float64 one, rounded: nothing is lost by keeping the dtype.
    ref, _ = sa.scaled_dot_product_attention(*(a.astype(np.float64) for a in (Q, K, V)))
    tol = 1e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(sa.blockwise_attention(Q, K, V, block_size=4), ref, atol=tol)
    np.testing.assert_allclose(sa.scaled_dot_product_attention(Q, K, V)[0], ref, atol=tol)
