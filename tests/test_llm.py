"""selfattention.llm against independent references: PyTorch's SDPA (is_causal, enable_gqa),
transformers' rotary helper, hand-derivable cases and hypothesis properties; and bad input."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from conftest import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

import selfattention as sa
from selfattention.llm import (
    DECODER_WEIGHTS,
    KVCache,
    grouped_query_attention,
    load_decoder,
    rotary,
    sliding_window_mask,
    tiled_attention,
)

FAST = settings(max_examples=40, deadline=None)
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _rand(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


# ------------------------------------------------------------------ grouped-query attention
@pytest.mark.parametrize("h,g", [(8, 8), (8, 2), (8, 1), (6, 3)])
@pytest.mark.parametrize("causal", [False, True])
def test_gqa_matches_torch_sdpa_enable_gqa(h, g, causal):
    q, k, v = _rand(2, h, 5, 4, seed=1), _rand(2, g, 5, 4, seed=2), _rand(2, g, 5, 3, seed=3)
    mask = torch.ones(5, 5, dtype=torch.bool).tril() if causal else None
    ours = grouped_query_attention(q, k, v, mask)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    torch.testing.assert_close(ours, ref, rtol=1e-12, atol=1e-12)


def test_gqa_with_one_group_per_head_is_multi_head_attention():
    q, k, v = _rand(1, 4, 6, 8, seed=4), _rand(1, 4, 6, 8, seed=5), _rand(1, 4, 6, 8, seed=6)
    ours = grouped_query_attention(q, k, v)
    ref, _ = sa.scaled_dot_product_attention(q.numpy(), k.numpy(), v.numpy())
    np.testing.assert_allclose(ours.numpy(), ref, rtol=1e-12)


def test_gqa_heads_of_one_group_see_the_same_keys():
    """Query heads 0 and 1 share group 0: with equal queries they give equal outputs; head 2 does not."""
    q = _rand(1, 1, 3, 4, seed=7).expand(1, 4, 3, 4)
    out = grouped_query_attention(q, _rand(1, 2, 3, 4, seed=8), _rand(1, 2, 3, 4, seed=9))
    assert torch.equal(out[0, 0], out[0, 1]) and not torch.allclose(out[0, 1], out[0, 2])


def test_gqa_bad_input():
    q = _rand(1, 6, 3, 4)
    with pytest.raises(ValueError, match="q has 6 heads, which is not a multiple of the 4"):
        grouped_query_attention(q, _rand(1, 4, 3, 4), _rand(1, 4, 3, 4))
    with pytest.raises(ValueError, match="q has d_k=4 but k has d_k=5"):
        grouped_query_attention(q, _rand(1, 2, 3, 5), _rand(1, 2, 3, 5))
    with pytest.raises(ValueError, match="k has 2 key/value heads but v has 3"):
        grouped_query_attention(q, _rand(1, 2, 3, 4), _rand(1, 3, 3, 4))
    with pytest.raises(ValueError, match="q must be a torch.Tensor"):
        grouped_query_attention(np.zeros((2, 3, 4)), _rand(1, 2, 3, 4), _rand(1, 2, 3, 4))
    with pytest.raises(TypeError, match="mask must be boolean"):
        grouped_query_attention(q, _rand(1, 2, 3, 4), _rand(1, 2, 3, 4), torch.ones(3, 3))


# ------------------------------------------------------------------------------- rotary
def test_rotary_matches_transformers_llama_helper():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    config = LlamaConfig(hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=64)
    q, k = _rand(1, 4, 10, 16, seed=10).float(), _rand(1, 2, 10, 16, seed=11).float()
    positions = torch.arange(3, 13)
    cos, sin = LlamaRotaryEmbedding(config)(q, positions[None])
    q_ref, k_ref = apply_rotary_pos_emb(q, k, cos, sin)
    torch.testing.assert_close(rotary(q, positions), q_ref, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(rotary(k, positions), k_ref, rtol=1e-5, atol=1e-5)


def test_rotary_by_hand():
    """d=2: one pair rotated by the angle = position; position 0 leaves x as it is."""
    x = torch.tensor([[1.0, 0.0], [1.0, 0.0]], dtype=torch.float64)
    out = rotary(x, torch.tensor([0, 1]))
    expected = torch.tensor([[1.0, 0.0], [np.cos(1.0), np.sin(1.0)]], dtype=torch.float64)
    torch.testing.assert_close(out, expected)


@FAST
@given(st.integers(0, 50), st.integers(0, 50), st.integers(0, 30), st.integers(0, 10_000))
def test_rotary_score_depends_only_on_the_offset(m, n, shift, seed):
    q, k = _rand(1, 8, seed=seed), _rand(1, 8, seed=seed + 1)
    def score(i, j):
        return (rotary(q, torch.tensor([i])) @ rotary(k, torch.tensor([j])).T).item()
    assert np.isclose(score(m, n), score(m + shift, n + shift), rtol=1e-9, atol=1e-9)
    assert np.isclose(rotary(q, torch.tensor([m])).norm().item(), q.norm().item())


def test_rotary_bad_input():
    with pytest.raises(ValueError, match="even number of features d"):
        rotary(_rand(3, 5))
    with pytest.raises(ValueError, match=r"positions must have shape \(T,\) = \(3,\)"):
        rotary(_rand(3, 4), torch.arange(4))
    with pytest.raises(ValueError, match="x must be a torch.Tensor"):
        rotary(np.zeros((3, 4)))


# --------------------------------------------------------------------------- sliding window
def test_sliding_window_mask_by_hand():
    expected = np.array([[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]], dtype=bool)
    assert np.array_equal(sliding_window_mask(4, 2), expected)
    assert np.array_equal(sliding_window_mask(5, 5), sa.causal_mask(5))


def test_sliding_window_matches_torch_sdpa_with_the_same_mask():
    Q, K, V = (_rand(7, 4, seed=s) for s in (12, 13, 14))
    mask = sliding_window_mask(7, 3)
    ours, _ = sa.scaled_dot_product_attention(Q.numpy(), K.numpy(), V.numpy(), mask)
    ref = F.scaled_dot_product_attention(Q, K, V, attn_mask=torch.from_numpy(mask))
    np.testing.assert_allclose(ours, ref.numpy(), rtol=1e-12)


def test_sliding_window_bad_input():
    with pytest.raises(ValueError, match="window must be a positive integer, got 0"):
        sliding_window_mask(4, 0)


# ---------------------------------------------------------------------------- tiled attention
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("blocks", [(4, 4), (3, 5), (16, 16), (1, 7)])
def test_tiled_matches_torch_sdpa(causal, blocks):
    Q, K, V = _rand(2, 13, 4, seed=15), _rand(2, 13, 4, seed=16), _rand(2, 13, 3, seed=17)
    out, counts = tiled_attention(Q.numpy(), K.numpy(), V.numpy(), *blocks, causal=causal)
    ref = F.scaled_dot_product_attention(Q, K, V, is_causal=causal)
    np.testing.assert_allclose(out, ref.numpy(), rtol=1e-12, atol=1e-12)
    if not causal:
        assert counts.skipped == 0


def test_tiled_counts_by_hand():
    """T=8 in 2x2 tiles of 4: the upper-right tile is empty under a causal mask."""
    Q = _rand(8, 4, seed=18).numpy()
    _, counts = tiled_attention(Q, Q, Q, 4, 4, causal=True)
    assert (counts.computed, counts.skipped, counts.largest_tile) == (3, 1, 16)
    out_all, counts_all = tiled_attention(Q, Q, Q, 4, 4, causal=True, skip_masked_tiles=False)
    assert (counts_all.computed, counts_all.skipped) == (4, 0)
    np.testing.assert_array_equal(out_all, tiled_attention(Q, Q, Q, 4, 4, causal=True)[0])


def test_tiled_large_scores_do_not_overflow():
    Q = np.linspace(-1, 1, 24).reshape(6, 4) * 1000
    out, _ = tiled_attention(Q, Q, Q, 2, 2, causal=True)
    ref, _ = sa.scaled_dot_product_attention(Q, Q, Q, sa.causal_mask(6))
    np.testing.assert_allclose(out, ref, rtol=1e-10)


def test_tiled_bad_input():
    Q = np.zeros((4, 3))
    with pytest.raises(ValueError, match="causal attention needs as many queries as keys"):
        tiled_attention(Q, np.zeros((5, 3)), np.zeros((5, 3)), causal=True)
    with pytest.raises(ValueError, match="block_k must be a positive integer"):
        tiled_attention(Q, Q, Q, 2, 0)
    with pytest.raises(ValueError, match="Q has d_k=3 but K has d_k=2"):
        tiled_attention(Q, np.zeros((4, 2)), Q)


# ------------------------------------------------------------------------ cache and decoder
def test_cache_appends_and_counts_bytes():
    cache = KVCache(2)
    k = _rand(1, 3, 4, 5)
    cache.append(0, k, k)
    all_k, _ = cache.append(0, k[:, :, :1], k[:, :, :1])
    assert all_k.shape == (1, 3, 5, 5) and len(cache) == 5
    assert cache.nbytes == 2 * 1 * 3 * 5 * 5 * 8
    with pytest.raises(ValueError, match="only the token axis"):
        cache.append(0, _rand(1, 2, 1, 5), _rand(1, 2, 1, 5))
    with pytest.raises(ValueError, match="layer must be in"):
        cache.append(2, k, k)


def test_decoder_with_cache_gives_the_same_logits_and_tokens():
    model = load_decoder().double()
    ids = model.encode("The Zen of Python, by Tim Peters")
    full = model(ids)
    cache = KVCache(model.num_layers)
    steps = [model(ids[:, :10], cache)] + [model(ids[:, t : t + 1], cache) for t in range(10, ids.shape[1])]
    torch.testing.assert_close(torch.cat(steps, dim=1), full, rtol=1e-10, atol=1e-10)
    text_cached, cache = model.generate("The Zen of Python", 40)
    text_plain, none = model.generate("The Zen of Python", 40, use_cache=False)
    assert text_cached == text_plain and none is None
    assert cache.nbytes == 2 * model.num_layers * model.d_model * (17 + 39) * 8  # the last token is not fed


def test_decoder_has_learned_its_text():
    text, _ = load_decoder().generate("The Zen of Python, by Tim Peters\n\n", 31)
    assert text == "Beautiful is better than ugly.\n"
    with pytest.raises(ValueError, match="characters the decoder does not know"):
        load_decoder().encode("Zen ~")


def test_training_script_reproduces_the_committed_weights(tmp_path):
    """tools/train_decoder.py, run afresh, writes the weights the package ships (to float rounding)."""
    from safetensors.torch import load_file

    out = tmp_path / "decoder.safetensors"
    subprocess.run([sys.executable, str(ROOT / "tools" / "train_decoder.py"), "--out", str(out)],
                   check=True, capture_output=True, timeout=600)
    for path in (out, DECODER_WEIGHTS):  # readable by everyone: a grading kernel runs as another user
        assert path.stat().st_mode & 0o444 == 0o444, f"{path} is not readable by all users"
    fresh, shipped = load_file(str(out)), load_file(str(DECODER_WEIGHTS))
    assert fresh.keys() == shipped.keys()
    for name in shipped:
        torch.testing.assert_close(fresh[name], shipped[name], rtol=1e-4, atol=1e-5, msg=name)
