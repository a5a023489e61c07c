"""selfattention.llm against independent references: PyTorch's SDPA (is_causal, enable_gqa), torch's RMSNorm,
transformers' rotary helper and RoPE-scaling functions, hand-derivable cases, the memory-traffic formulas and
hypothesis properties; the two trained decoders; and bad input."""

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
    LLAMA_WEIGHTS,
    BlockPool,
    KVCache,
    PagedKVCache,
    RMSNorm,
    SlowMemory,
    attention_mask,
    flash_attention_io,
    grouped_query_attention,
    load_decoder,
    load_llama,
    rope_frequencies,
    rotary,
    sliding_window_mask,
    standard_attention_io,
    tiled_attention,
    zen_of_python,
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
    """tools/train_decoder.py, run afresh, writes the weights the package ships (to float rounding): the first
    decoder, and seed 0 of the Llama-style one (seeds 1 and 2 run the same code with another seed)."""
    from safetensors.torch import load_file

    subprocess.run([sys.executable, str(ROOT / "tools" / "train_decoder.py"), "--out", str(tmp_path),
                    "--seeds", "0"], check=True, capture_output=True, timeout=900)
    for shipped_path in (DECODER_WEIGHTS, LLAMA_WEIGHTS):
        out = tmp_path / shipped_path.name
        for path in (out, shipped_path):  # readable by everyone: a grading kernel runs as another user
            assert path.stat().st_mode & 0o444 == 0o444, f"{path} is not readable by all users"
        fresh, shipped = load_file(str(out)), load_file(str(shipped_path))
        assert fresh.keys() <= shipped.keys()
        for name in fresh:
            half = fresh[name].dtype == torch.float16  # the Llama-style weights are shipped in float16
            tol = {"rtol": 2e-3, "atol": 1e-4} if half else {"rtol": 1e-4, "atol": 1e-5}
            torch.testing.assert_close(fresh[name], shipped[name], msg=name, **tol)
    assert {k.split(".")[0] for k in load_file(str(LLAMA_WEIGHTS))} == {"seed0", "seed1", "seed2"}
    assert LLAMA_WEIGHTS.stat().st_size < 1_000_000 and DECODER_WEIGHTS.stat().st_size < 1_000_000


# ------------------------------------------------------------------------ the Llama-style decoder
@pytest.fixture(scope="module")
def llama():
    return load_llama(0)


def test_rmsnorm_matches_torch():
    norm = RMSNorm(8)
    with torch.no_grad():
        norm.weight.copy_(torch.linspace(0.5, 2, 8))
    x = _rand(3, 5, 8, seed=30).float()
    ref = F.rms_norm(x, (8,), norm.weight, eps=1e-5)
    torch.testing.assert_close(norm(x), ref)


def test_attention_mask_by_hand():
    q, k = torch.arange(6), torch.arange(6)
    assert torch.equal(attention_mask(q, k), torch.ones(6, 6, dtype=torch.bool).tril())
    window = attention_mask(q, k, window=2, sinks=1).int()
    assert window.tolist() == [[1, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0], [1, 1, 1, 0, 0, 0],
                               [1, 0, 1, 1, 0, 0], [1, 0, 0, 1, 1, 0], [1, 0, 0, 0, 1, 1]]
    np.testing.assert_array_equal(attention_mask(q, k, window=3).numpy(), sliding_window_mask(6, 3))
    with pytest.raises(ValueError, match="sinks must be a non-negative integer"):
        attention_mask(q, k, window=2, sinks=-1)


def test_llama_has_learned_its_text_and_caches_give_the_same_tokens(llama):
    text, cache = llama.generate("The Zen of Python, by Tim Peters\n\n", 31)
    assert text == "Beautiful is better than ugly.\n"
    plain, none = llama.generate("The Zen of Python, by Tim Peters\n\n", 31, use_cache=False)
    assert plain == text and none is None
    # 2 layers x 2 key/value heads x 16 features x (keys and values) x 4 bytes, for the tokens fed
    assert cache.nbytes == 2 * 2 * 2 * 16 * 4 * (34 + 30) and len(cache) == cache.seen == 64


def test_llama_step_by_step_equals_one_pass_in_float64(llama):
    model = load_llama(1).double()
    ids = model.encode(zen_of_python()[:90])
    full = model(ids)
    cache = KVCache(model.num_layers)
    steps = [model(ids[:, :30], cache)] + [model(ids[:, t : t + 1], cache) for t in range(30, 90)]
    torch.testing.assert_close(torch.cat(steps, dim=1), full, rtol=1e-10, atol=1e-10)


def test_llama_attention_is_torch_sdpa_with_grouped_heads(llama):
    """The block's own attention (repeat_interleave, mask, softmax) against SDPA(enable_gqa=True)."""
    ids = llama.encode(zen_of_python()[:40])
    with torch.no_grad():
        llama(ids)
        block = llama.blocks[0]
        q, k, v = block.qkv(llama.embed(ids))
        q, k = rotary(q), rotary(k)
        ref = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        ours = llama.last_weights[0] @ v.repeat_interleave(2, dim=1)
    torch.testing.assert_close(ours, ref, rtol=1e-5, atol=1e-6)


def test_rolling_window_cache_equals_the_windowed_mask(llama):
    ids = llama.encode(zen_of_python()[:150])
    with torch.no_grad():
        full = llama(ids, window=16, sinks=2)
        cache = KVCache(llama.num_layers)
        steps = [llama(ids[:, :20], cache, window=16, sinks=2)]
        steps += [llama(ids[:, t : t + 1], cache, window=16, sinks=2) for t in range(20, 150)]
    torch.testing.assert_close(torch.cat(steps, dim=1), full, rtol=1e-4, atol=1e-4)
    assert cache.positions.tolist() == [0, 1, *range(150 - 15, 150)] and cache.seen == 150


def test_cache_positions_rotate_by_the_place_in_the_cache(llama):
    """rope_positions="cache" keeps unrotated keys; within the first window it equals the text positions."""
    ids = llama.encode(zen_of_python()[:40])
    with torch.no_grad():
        text = llama(ids)
        cache = KVCache(llama.num_layers)
        steps = [llama(ids[:, :10], cache, rope_positions="cache")]
        steps += [llama(ids[:, t : t + 1], cache, rope_positions="cache") for t in range(10, 40)]
    torch.testing.assert_close(torch.cat(steps, dim=1), text, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="rope_positions must be 'text' or 'cache'"):
        llama(ids, rope_positions="absolute")


def test_paged_cache_gives_the_cached_tokens_and_reuses_blocks(llama):
    pool = BlockPool(num_blocks=6, block_size=8, num_layers=2, num_kv_heads=2, d_k=16)
    expected, _ = llama.generate("Errors should", 20)
    cache, ids, out = PagedKVCache(pool), llama.encode("Errors should"), []
    with torch.no_grad():
        for _ in range(20):
            ids = llama(ids, cache)[:, -1].argmax(-1, keepdim=True)
            out.append(ids)
    assert llama.decode(torch.cat(out, dim=1)) == expected
    assert cache.block_table == [0, 1, 2, 3] and cache.seen == 32  # 13 + 19 tokens fed: 4 blocks of 8
    assert cache.nbytes == 4 * 2 * 2 * 8 * 16 * 4 * 2
    cache.release()
    assert pool.blocks_in_use == 0
    with pytest.raises(MemoryError, match="all 6 blocks"):
        PagedKVCache(pool).append(0, torch.zeros(1, 2, 49, 16), torch.zeros(1, 2, 49, 16))


def test_load_llama_bad_seed():
    with pytest.raises(ValueError, match=r"seed must be one of the trained seeds \[0, 1, 2\]"):
        load_llama(7)


# ------------------------------------------------------------------------------- RoPE scaling
def _hf_rope(kind: str, factor: float, d: int, base: float, trained: int):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    params = {"rope_type": kind, "rope_theta": base, "factor": factor,
              "original_max_position_embeddings": trained}
    config = LlamaConfig(hidden_size=d * 2, num_attention_heads=2,
                         max_position_embeddings=int(trained * factor), rope_parameters=params)
    return ROPE_INIT_FUNCTIONS[kind](config, "cpu")


@pytest.mark.parametrize("d,base,trained,factor", [(16, 10000.0, 256, 4.0), (128, 10000.0, 4096, 8.0),
                                                   (64, 500000.0, 8192, 16.0)])
def test_rope_scaling_matches_transformers(d, base, trained, factor):
    for ours_name, hf_name in (("linear", "linear"), ("yarn", "yarn")):
        inv_freq, scale = rope_frequencies(d, base, ours_name, factor, trained_length=trained)
        ref, ref_scale = _hf_rope(hf_name, factor, d, base, trained)
        torch.testing.assert_close(inv_freq.float(), ref.float(), rtol=1e-5, atol=0)
        assert np.isclose(scale, ref_scale)
    plain, _ = rope_frequencies(d, base)
    ntk, _ = rope_frequencies(d, base, "ntk", factor)
    assert np.isclose(ntk[0].item(), plain[0].item())  # the fastest pair turns as before
    assert np.isclose(ntk[-1].item(), plain[-1].item() / factor)  # the slowest, factor times slower


def test_rope_frequencies_bad_input():
    with pytest.raises(ValueError, match="scaling must be None, 'linear', 'ntk' or 'yarn'"):
        rope_frequencies(8, scaling="dynamic")
    with pytest.raises(ValueError, match="needs trained_length"):
        rope_frequencies(8, scaling="yarn", factor=2.0)
    with pytest.raises(ValueError, match="factor must be at least 1"):
        rope_frequencies(8, scaling="linear", factor=0.5)


# ------------------------------------------------------------------------ memory traffic, counted
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("T,d,b", [(32, 4, 8), (48, 8, 16), (64, 3, 64)])
def test_io_counts_follow_their_formulas_and_outputs_match_sdpa(T, d, b, causal):
    Q, K, V = (_rand(T, d, seed=s).numpy() for s in (40, 41, 42))
    ref = F.scaled_dot_product_attention(*map(torch.from_numpy, (Q, K, V)), is_causal=causal).numpy()
    standard, flash = SlowMemory(Q=Q, K=K, V=V), SlowMemory(Q=Q, K=K, V=V)
    standard_attention_io(standard, causal)
    if causal:  # the causal loop is exercise 1's answer: the check keeps it, the package does not
        from reference_lesson15 import causal_loop as _causal_loop
        _causal_loop(flash, b)
    else:
        flash_attention_io(flash, b)
    for memory in (standard, flash):
        np.testing.assert_allclose(memory.arrays["O"], ref, rtol=1e-10, atol=1e-12)
    assert standard.moved == 4 * T * d + 4 * T * T
    assert flash.moved == (3 * T * d + T * T * d // b if causal else 2 * T * d + 2 * T * T * d // b)


def test_causal_flash_loop_never_reads_a_tile_above_the_diagonal():
    T, b = 32, 8
    memory = SlowMemory(**{n: _rand(T, 4, seed=s).numpy() for n, s in (("Q", 1), ("K", 2), ("V", 3))})
    from reference_lesson15 import causal_loop as _causal_loop
    _causal_loop(memory, b)
    query_tile = None
    for op, name, start, stop in memory.log:
        if name == "Q":
            query_tile = start
        if name in ("K", "V"):
            assert op == "read" and stop - start == b and start <= query_tile
    assert sum(name == "K" for _, name, _, _ in memory.log) == 4 * 5 // 2


def test_slow_memory_bad_input():
    memory = SlowMemory(Q=np.zeros((4, 2)))
    with pytest.raises(KeyError, match="slow memory holds"):
        memory.read("K")
    with pytest.raises(ValueError, match="rows must be a 2-D"):
        memory.write("O", np.zeros(3))


def test_character_match_scores_each_text_against_its_reference():
    np.testing.assert_allclose(sa.llm.character_match(["abcd", "xbcx", "ab"], ["abcd", "abcd", "abcd"]),
                               [1.0, 0.5, 0.5])
    with pytest.raises(ValueError, match="2 texts but 1 references"):
        sa.llm.character_match(["a", "b"], ["a"])


def test_scores_per_head_counts_prefill_then_one_row_per_step():
    # prompt 3, 3 new tokens: with a cache 3 x 3, then 1 x 4 and 1 x 5; without, 3 x 3 + 4 x 4 + 5 x 5
    assert sa.llm.scores_per_head(3, 3, cache=True) == 9 + 4 + 5
    assert sa.llm.scores_per_head(3, 3, cache=False) == 9 + 16 + 25


def test_next_token_losses_match_one_cross_entropy_per_position():
    model = sa.llm.load_llama(seed=0)
    ids = model.encode("Beautiful is better than ugly.")                  # (1, T + 1)
    got = sa.llm.next_token_losses(model, ids)
    assert got.shape == (1, ids.shape[1] - 1)
    with torch.no_grad():
        want = torch.nn.functional.cross_entropy(model(ids[:, :-1])[0], ids[0, 1:]).item()
    assert np.isclose(got.mean(), want, atol=1e-5)


def test_clue_beyond_finds_places_the_span_before_does_not_fix():
    text = "abXcdabYcd"                        # "ab" is followed once by X, once by Y; nothing else repeats
    got = sa.llm.clue_beyond(text, span=2, before=4)
    assert sorted(s[-1] for s in got) == ["X", "Y"] and all(len(s) == 5 for s in got)
    assert "cdabX" in got                     # the loop has no edge: before place 2 come "cd", "ab"
    with pytest.raises(ValueError):
        sa.llm.clue_beyond(text, span=5, before=4)


def test_stretch_means_and_table_average_each_input_over_each_stretch():
    losses = np.zeros((2, 3, 8))
    losses[..., 4:] = np.arange(6).reshape(2, 3, 1)                       # second half: 0..5 per input
    means = sa.llm.stretch_means(losses, [(0, 3), (4, 7)])
    assert means.shape == (2, 6) and np.allclose(means[0], 0) and np.allclose(means[1], np.arange(6))
    table = sa.llm.stretch_table({"run": losses}, [(0, 3), (4, 7)])
    assert "4-7: 2.500 (0.000-5.000)" in table and "above 0-3 at 5/6" in table


def test_first_token_ratio_and_weight_on_first_read_a_planted_sink():
    T = 16
    gap = torch.arange(T)[:, None] - torch.arange(T)[None, :]                # query - key
    by_distance = torch.where(gap >= 0, torch.exp(-gap / 5.0), torch.zeros(()))   # depends on distance only
    weights = by_distance[None, None].repeat(1, 2, 1, 1)                        # (1, 2, T, T)
    weights[0, 1, :, 0] += 1.0                                                   # head 1 parks on token 0
    ratio = sa.llm.first_token_ratio(weights, torch.arange(4, 8), keys=4)
    assert ratio.shape == (2,) and np.isclose(ratio[0].item(), 1.0) and ratio[1] > 3
    share = sa.llm.weight_on_first(weights[:, :1], slice(8, 16), first=2)
    want = torch.exp(-torch.arange(8, 16) / 5.0) + torch.exp(-torch.arange(7, 15) / 5.0)   # keys 0 and 1
    assert np.isclose(share, want.mean())


def test_llama_rope_clip_scores_far_keys_at_the_clipped_distance(llama):
    """rope_clip = D: layer 0's weights are those of scores whose offset is min(i - j, D), computed by
    rotating q and k by hand; None and a clip beyond the text change nothing; a cache is refused."""
    ids = llama.encode(zen_of_python()[:40])
    clip = 7
    with torch.no_grad():
        plain = llama(ids)
        block = llama.blocks[0]
        q, k, _ = block.qkv(llama.embed(ids))                        # (1, h, T, d_k), (1, g, T, d_k)
        k = k.repeat_interleave(2, dim=1)
        T = ids.shape[1]
        want = torch.empty(1, q.shape[1], T, T)
        for i in range(T):
            for j in range(i + 1):
                offset = min(i - j, clip)
                want[..., i, j] = (rotary(q[..., i:i + 1, :], torch.tensor([float(offset)]))
                                   @ k[..., j:j + 1, :].transpose(-2, -1))[..., 0, 0]
        causal = torch.ones(T, T, dtype=torch.bool).tril()
        want = torch.softmax((want / 4.0).masked_fill(~causal, float("-inf")), dim=-1)     # d_k = 16
        try:
            llama.rope_clip = clip
            llama(ids)
            torch.testing.assert_close(llama.last_weights[0], want, rtol=1e-4, atol=1e-5)
            llama.rope_clip = T
            torch.testing.assert_close(llama(ids), plain)
            with pytest.raises(ValueError, match="rope_clip"):
                llama(ids[:, :1], KVCache(llama.num_layers))
        finally:
            llama.rope_clip = None


def test_fine_tune_is_seeded_and_changes_the_weights():
    """Two fine-tunes with one seed give the same weights, different from the loaded ones; eval mode after."""
    text = zen_of_python()
    a, b = (sa.llm.fine_tune(load_llama(0), text, length=64, steps=2, seed=5) for _ in range(2))
    fresh = load_llama(0)
    assert not a.training
    for (name, p), q in zip(a.named_parameters(), b.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=0, atol=0, msg=name)
    assert any(not torch.equal(p, r) for p, r in zip(a.parameters(), fresh.parameters(), strict=True))


def test_train_llama_with_a_window_never_reads_past_it_and_is_seeded():
    a, b = (sa.llm.train_llama(0, window=4, steps=2) for _ in range(2))
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))   # seeded
    ids = a.encode(sa.llm.zen_of_python()[:12])                                      # (1, 12)
    changed = ids.clone()
    changed[0, 0] = (changed[0, 0] + 1) % len(a.vocab)
    full = sa.llm.train_llama(0, steps=2)         # the same draws without the window train otherwise
    assert not all(torch.equal(p, q) for p, q in zip(a.parameters(), full.parameters(), strict=True))
    with torch.no_grad():                    # two layers of 4 reach 7 tokens: position 11 cannot see 0
        assert torch.allclose(a(ids, window=4)[0, -1], a(changed, window=4)[0, -1])
        assert not torch.allclose(a(ids)[0, -1], a(changed)[0, -1])


def test_window_clue_table_prints_mean_and_range_per_column(llama):
    lines = ["Beautiful is better than ugly.", "Explicit is better than implicit."]
    groups = {"near": [s[:20] for s in lines]}
    table = sa.llm.window_clue_table([llama], [llama], groups, window=4).splitlines()
    assert table[0] == "target loss, nats: mean over 1 seeds x targets (range)"
    rows = torch.cat([llama.encode(s[:20]) for s in sorted(groups["near"])])
    windowed = sa.llm.next_token_losses(llama, rows, window=4)
    full = sa.llm.next_token_losses(llama, rows)[:, -1]
    assert table[2].startswith("near (2) ")
    last = windowed[:, -1]
    assert f"{last.mean():.3f} ({last.min():.2f}-{last.max():.2f})" in table[2]
    assert f"{full.mean():.3f} ({full.min():.2f}-{full.max():.2f})" in table[2]
    assert table[2].endswith(f"characters before: {windowed[:, :-1].mean():.3f}")
    imposed = sa.llm.next_token_losses(llama, rows, window=4)[:, :-1].mean()
    assert table[-1] == f"full, window imposed, characters before: {imposed:.3f}"
