"""Lesson 13's checks name each typical mistake, written as a learner would write it, and no other; two
different right answers pass; a shortcut that skips what an exercise teaches does not."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from mistakes import hidden_test_passes, message, names_only, right_answer_passes

import selfattention as sa
from selfattention import checks

# ------------------------------------------------------------------------------- exercise 1
DECODE_PHRASES = {
    "old": "the new token is missing", "plus1": "rotated at position T + 1",
    "minus1": "q and k_new were rotated at position T - 1", "pos_dk": "rotated at position d_k = 16",
    "unrotated": "were not rotated", "q_only": "only q was rotated", "k_only": "only k_new was rotated",
    "again": "rotated a second time", "unscaled": "are not scaled", "k_as_q": "k_new was used as the query",
    "front": "has the new row first", "not_grown": "as many as before the step",
    "one": "it returned one thing", "two": "it returned 2 things",
    "again_at_T": "rotated again, by the new position", "no_sum": "the weights were exponentiated but not",
    "no_sum_raw": "the weights are exp() of the scores", "cache_unrotated": "k_new as it came, not rotated",
    "by_dk": "divided by d_k = 16, not by its square root", "by_T": "divided by sqrt(T), the square root",
    "by_T1": "divided by sqrt(T + 1)", "times": "multiplied by sqrt(d_k)",
    "drop_first": "the oldest token (position 0) is missing", "alone": "attended to the new token alone",
    "rot_v": "v_new was rotated too", "keys_as_values": "the weights were applied to the keys",
    "no_softmax": "without a softmax", "swapped_caches": "the two caches are returned swapped",
    "q_minus1": "q was rotated at position T - 1 and k_new at T", "by_dmodel": "divided by sqrt(d_model) = 8",
    "ones": "the softmax ran over an axis of length 1",
    "k_minus1": "k_new was rotated at position T - 1 and q at T",
    "q_plus1": "q was rotated one place past k_new",
    "top_left": "is lined up top-left", "uniform": "z is the plain mean of the T + 1 values",
}


def _rot(x, p):
    return sa.llm.rotary(x[None], torch.tensor([p]))[0]


def _step(q, k_new, v_new, K_cache, V_cache, q_at, k_at):
    q = q if q_at is None else _rot(q, q_at)
    k = k_new if k_at is None else _rot(k_new, k_at)
    K, V = torch.cat([K_cache, k[None]]), torch.cat([V_cache, v_new[None]])
    return torch.softmax(K @ q / math.sqrt(len(q)), dim=-1) @ V, K, V


def _weighed(q, k_new, v_new, K_cache, V_cache, weights):
    """The right rotations and caches, the scores turned into weights by ``weights``."""
    T = len(K_cache)
    qr, K, V = _rot(q, T), torch.cat([K_cache, _rot(k_new, T)[None]]), torch.cat([V_cache, v_new[None]])
    return weights(K @ qr / math.sqrt(len(q))) @ V, K, V


def decode_again_at_T(q, k_new, v_new, K_cache, V_cache):
    T = len(K_cache)
    K = torch.cat([sa.llm.rotary(K_cache, torch.full((T,), T)), _rot(k_new, T)[None]])
    V = torch.cat([V_cache, v_new[None]])
    return torch.softmax(K @ _rot(q, T) / math.sqrt(len(q)), dim=-1) @ V, K, V


def decode_right(q, k_new, v_new, K_cache, V_cache):
    T = len(K_cache)
    return _step(q, k_new, v_new, K_cache, V_cache, T, T)


def decode_right_numpy(q, k_new, v_new, K_cache, V_cache):
    """Another right answer: rotate both at once, then numpy with the maximum subtracted."""
    qk = sa.llm.rotary(torch.stack([q, k_new]), torch.tensor([K_cache.shape[0]] * 2)).numpy()
    K, V = np.vstack([K_cache.numpy(), qk[1]]), np.vstack([V_cache.numpy(), v_new.numpy()])
    s = K @ qk[0] / np.sqrt(K.shape[1])
    w = np.exp(s - s.max())
    return (w / w.sum()) @ V, K, V


def decode_old(q, k_new, v_new, K_cache, V_cache):
    T = len(K_cache)
    qr = _rot(q, T)
    z = torch.softmax(K_cache @ qr / math.sqrt(len(q)), dim=-1) @ V_cache     # attends before appending
    return z, torch.cat([K_cache, _rot(k_new, T)[None]]), torch.cat([V_cache, v_new[None]])


def decode_masked_self(q, k_new, v_new, K_cache, V_cache):
    T = len(K_cache)
    qr, K = _rot(q, T), torch.cat([K_cache, _rot(k_new, T)[None]])
    V = torch.cat([V_cache, v_new[None]])
    s = K @ qr / math.sqrt(len(q))
    s[-1] = -torch.inf                                                          # masks the new token
    return torch.softmax(s, dim=-1) @ V, K, V


def _scaled(scale, keep=slice(None), rotate_v=False, weigh=None):
    """A slip in the attention itself: the right rotations and grown caches, then scores divided by
    ``scale(d_k, T)``, only the rows ``keep`` attended to, v_new rotated, or ``weigh(scores, K, V) -> z``."""
    def answer(q, k_new, v_new, K_cache, V_cache):
        T, d_k = len(K_cache), len(q)
        qr = _rot(q, T)
        K = torch.cat([K_cache, _rot(k_new, T)[None]])
        V = torch.cat([V_cache, (_rot(v_new, T) if rotate_v else v_new)[None]])
        s = K[keep] @ qr / scale(d_k, T)
        return (torch.softmax(s, dim=-1) @ V[keep] if weigh is None else weigh(s, K, V)), K, V
    return answer


def decode_sdpa_is_causal(q, k_new, v_new, K_cache, V_cache):
    """The GQA section's call, is_causal=True, for one query over T + 1 keys: the mask lines up top-left."""
    T = len(K_cache)
    qr, K = _rot(q, T), torch.cat([K_cache, _rot(k_new, T)[None]])
    V = torch.cat([V_cache, v_new[None]])
    z = torch.nn.functional.scaled_dot_product_attention(qr[None, None], K[None, None], V[None, None],
                                                         is_causal=True)
    return z[0, 0, 0], K, V


DECODE_WRONG = {
    "by_dk": _scaled(lambda d_k, T: d_k),                                     # d_k, not its square root
    "by_T": _scaled(lambda d_k, T: math.sqrt(T)),                             # len(K_cache) for len(q)
    "by_T1": _scaled(lambda d_k, T: math.sqrt(T + 1)),                        # the grown cache's length
    "times": _scaled(lambda d_k, T: 1 / math.sqrt(d_k)),
    "drop_first": _scaled(lambda d_k, T: math.sqrt(d_k), keep=slice(1, None)),  # K[1:]: a window of T rows
    "alone": _scaled(lambda d_k, T: math.sqrt(d_k), keep=slice(-1, None)),    # K[-1:]: the new row only
    "rot_v": _scaled(lambda d_k, T: math.sqrt(d_k), rotate_v=True),
    "keys_as_values": _scaled(lambda d_k, T: math.sqrt(d_k), weigh=lambda s, K, V: torch.softmax(s, -1) @ K),
    "no_softmax": _scaled(lambda d_k, T: math.sqrt(d_k), weigh=lambda s, K, V: s @ V),
    "by_dmodel": _scaled(lambda d_k, T: math.sqrt(64)),                      # d_model = 64 for d_k = 16
    # a (1, T + 1) row of scores, softmax over dim 0: every weight 1 (squeezed to (d_k,), or left (1, d_k))
    "ones": _scaled(lambda d_k, T: math.sqrt(d_k), weigh=lambda s, K, V: (torch.softmax(s[None], 0) @ V)[0]),
    "ones_row": _scaled(lambda d_k, T: math.sqrt(d_k), weigh=lambda s, K, V: torch.softmax(s[None], 0) @ V),
    "q_minus1": lambda q, k, v, K, V: _step(q, k, v, K, V, len(K) - 1, len(K)),
    "k_minus1": lambda q, k, v, K, V: _step(q, k, v, K, V, len(K), len(K) - 1),
    "q_plus1": lambda q, k, v, K, V: _step(q, k, v, K, V, len(K) + 1, len(K)),
    # every vector turned: the cached keys again and v_new too; the cache names the first slip
    "again_all": lambda q, k, v, K, V: (lambda Kr: (
        torch.softmax(torch.cat([Kr, _rot(k, len(K))[None]]) @ _rot(q, len(K)) / 4, -1)
        @ torch.cat([V, _rot(v, len(K))[None]]),
        torch.cat([Kr, _rot(k, len(K))[None]]), torch.cat([V, _rot(v, len(K))[None]])))(sa.llm.rotary(K)),
    "old": decode_old, "old_masked": decode_masked_self,
    "plus1": lambda q, k, v, K, V: _step(q, k, v, K, V, len(K) + 1, len(K) + 1),
    "minus1": lambda q, k, v, K, V: _step(q, k, v, K, V, len(K) - 1, len(K) - 1),
    "pos_dk": lambda q, k, v, K, V: _step(q, k, v, K, V, K.shape[1], K.shape[1]),   # shape[1] for shape[0]
    "unrotated": lambda q, k, v, K, V: _step(q, k, v, K, V, None, None),
    "q_only": lambda q, k, v, K, V: _step(q, k, v, K, V, len(K), None),
    "k_only": lambda q, k, v, K, V: _step(q, k, v, K, V, None, len(K)),
    "again": lambda q, k, v, K, V: _step(q, k, v, sa.llm.rotary(K), V, len(K), len(K)),
    "unscaled": lambda q, k, v, K, V: (
        lambda z, Kg, Vg: (torch.softmax(Kg @ _rot(q, len(K)), -1) @ Vg, Kg, Vg)
    )(*decode_right(q, k, v, K, V)),
    "k_as_q": lambda q, k, v, K, V: (lambda z, Kg, Vg: (torch.softmax(Kg @ Kg[-1] / 4, -1) @ Vg, Kg, Vg))(
        *decode_right(q, k, v, K, V)),
    "front": lambda q, k, v, K, V: (
        lambda z, Kg, Vg: (z, Kg.roll(1, 0), Vg.roll(1, 0)))(*decode_right(q, k, v, K, V)),
    "not_grown": lambda q, k, v, K, V: (decode_right(q, k, v, K, V)[0], K, V),
    "one": lambda q, k, v, K, V: decode_right(q, k, v, K, V)[0],
    "two": lambda q, k, v, K, V: decode_right(q, k, v, K, V)[:2],                  # return z, K
    # the cached keys turned again, all to the new token's position; q and k_new right
    "again_at_T": lambda q, k, v, K, V: decode_again_at_T(q, k, v, K, V),
    "no_sum": lambda q, k, v, K, V: _weighed(q, k, v, K, V, lambda s: torch.exp(s - s.max())),
    "no_sum_raw": lambda q, k, v, K, V: _weighed(q, k, v, K, V, torch.exp),
    "swapped_caches": lambda q, k, v, K, V: (lambda z, Kg, Vg: (z, Vg, Kg))(*decode_right(q, k, v, K, V)),
    "top_left": decode_sdpa_is_causal,
    "uniform": _scaled(lambda d_k, T: math.sqrt(d_k), weigh=lambda s, K, V: V.mean(0)),   # the scores dropped
    "cache_unrotated": lambda q, k, v, K, V: (decode_right(q, k, v, K, V)[0], torch.cat([K, k[None]]),
                                              torch.cat([V, v[None]])),
}


@pytest.mark.parametrize("answer", [decode_right, decode_right_numpy])
def test_decode_right_answers_pass(answer, capsys):
    right_answer_passes(checks.check_decode_step, answer, capsys)


@pytest.mark.parametrize("key", list(DECODE_WRONG))
def test_decode_mistake_is_named(key):
    expected = key.replace("_masked", "").replace("_row", "").replace("_all", "")
    names_only(message(checks.check_decode_step, DECODE_WRONG[key]), expected, DECODE_PHRASES)


@pytest.fixture(scope="module")
def hidden_names():
    """What the notebook holds when exercise 1's hidden test runs: the model, the text, sa and torch."""
    return {"model": sa.llm.load_llama(seed=0), "text": sa.llm.zen_of_python(), "sa": sa, "torch": torch}


@pytest.mark.parametrize("key", list(DECODE_WRONG))
def test_decode_mistake_fails_the_hidden_test(key, hidden_names):
    """A wrong shape makes the hidden test raise before its asserts: a failed test for the grader too."""
    try:
        passes = hidden_test_passes("13_generation_and_memory", "l13-decode-test",
                                    decode_step=DECODE_WRONG[key], **hidden_names)
    except (ValueError, TypeError):
        passes = False
    assert not passes


@pytest.mark.parametrize("answer", [decode_right, decode_right_numpy])
def test_decode_right_answers_pass_the_hidden_test(answer, hidden_names):
    assert hidden_test_passes("13_generation_and_memory", "l13-decode-test", decode_step=answer,
                              **hidden_names)


def test_decode_without_max_subtraction_overflows_on_the_large_case():
    def naive(q, k_new, v_new, K_cache, V_cache):
        z, K, V = decode_right(q, k_new, v_new, K_cache, V_cache)
        e = torch.exp(K @ _rot(q, len(K_cache)) / 4)
        return e / e.sum() @ V, K, V
    text = message(checks.check_decode_step, naive)
    assert "NaN or infinite" in text and "torch.exp overflows" in text and "np.exp" not in text


def test_decode_shortcut_attending_to_itself_only_fails_check_and_hidden_test():
    """Skipping the cache (the new token reads only itself) is refused by the check and the hidden test."""
    def shortcut(q, k_new, v_new, K_cache, V_cache):
        _, K, V = decode_right(q, k_new, v_new, K_cache, V_cache)
        return v_new, K, V
    assert "Correct" not in message(checks.check_decode_step, shortcut)
    model, text = sa.llm.load_llama(seed=0), sa.llm.zen_of_python()
    ids = model.encode(text[500:541])
    with torch.no_grad():
        model(ids)
        q, k, v = model.blocks[0].qkv(model.embed(ids))
        kr = sa.llm.rotary(k)
        own = model.last_weights[0][0, 1, 40] @ v[0, 0]
        z = shortcut(q[0, 1, 40], k[0, 0, 40], v[0, 0, 40], kr[0, 0, :40], v[0, 0, :40])[0]
        right = decode_right(q[0, 1, 40], k[0, 0, 40], v[0, 0, 40], kr[0, 0, :40], v[0, 0, :40])[0]
    assert not np.allclose(z.numpy(), own.numpy(), atol=1e-5)
    assert np.allclose(right.numpy(), own.numpy(), atol=1e-5)


def test_rotary_with_an_int_position_names_the_argument():
    """rotary(x[None], T) with a plain int: the error names positions, what it got and what it wants."""
    q = torch.randn(16)
    with pytest.raises(TypeError) as err:
        sa.llm.rotary(q[None], 20)
    text = str(err.value)
    assert "positions must be a torch.Tensor of shape (T,) = (1,)" in text and "got int 20" in text
    assert "torch.tensor([p])" in text


# ------------------------------------------------------------------------------- exercise 2
BOUND_PHRASES = {
    "no_cache": "the caches are missing", "flops1": "2 FLOPs, not 1", "bytes1": "counted as 1 byte",
    "none": "a batch is a whole number", "floor": "rounded to a whole number below",
    "negative": "a negative batch",
    "per_seq": "read once per step for the whole batch", "no_T": "the cache of one token",
    "cache2": "do not multiply by 2 again", "swapped": "bandwidth and flops_per_s are swapped",
    "none_return": "return math.inf, as the exercise asks, not None",
    "capped": "A search that stops at a cap", "forever": "without returning: here no batch gets there",
    "answer_key": "calls the check's own reference", "no_weights": "leave out the weights",
    "bytes4": "4 bytes each (float32)", "T1": "counted for T + 1 tokens", "attn": "cache bytes as FLOPs too",
    "once": "counted once for the whole batch", "half": "counted at half its size",
    "cache4": "counted 4 times over", "heads8": "counted 8 times over",
}
# round() gives the batch below the exact solution on the second case; so does a search one step short
BOUND_EXPECT = {"round": "floor", "search_minus1": "floor"}


def bound_right(n_params, cache_bytes_per_token, T, bandwidth, flops_per_s):
    gain = 2 * n_params / flops_per_s - T * cache_bytes_per_token / bandwidth
    return math.ceil(2 * n_params / bandwidth / gain) if gain > 0 else math.inf


def bound_right_search(n_params, cache_bytes_per_token, T, bandwidth, flops_per_s):
    """Another right answer: grow the batch until the FLOP time catches up (doubling, then bisection)."""
    def compute_bound(b):
        return 2 * n_params * b / flops_per_s >= (2 * n_params + b * T * cache_bytes_per_token) / bandwidth
    if 2 * n_params / flops_per_s <= T * cache_bytes_per_token / bandwidth:
        return float("inf")
    high = 1
    while not compute_bound(high):
        high *= 2
    low = high // 2
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if compute_bound(mid) else (mid, high)
    return high


def _bound(n, c, T, bw, f, *, flops=2, wbytes=2, cache=True, rounding=math.ceil, inf=True):
    gain = flops * n / f - (T * c / bw if cache else 0)
    if gain <= 0 and inf:
        return math.inf
    exact = wbytes * n / bw / gain
    return rounding(exact) if rounding else exact


def bound_cache_once(n_params, cache_bytes_per_token, T, bandwidth, flops_per_s):
    """One cache read for the whole batch, beside the weights: the batch factor forgotten."""
    reading = (2 * n_params + T * cache_bytes_per_token) / bandwidth
    return math.ceil(reading / (2 * n_params / flops_per_s))


def bound_capped(n_params, cache_bytes_per_token, T, bandwidth, flops_per_s):
    """A search that gives up at a cap and returns it, instead of math.inf."""
    batch = 1
    while batch < 10**7:
        reading = (2 * n_params + batch * T * cache_bytes_per_token) / bandwidth
        if 2 * n_params * batch / flops_per_s >= reading:
            return batch
        batch = batch + 1 if batch < 1000 else batch * 2
    return 10**7


def bound_forever(n, c, T, bw, f):
    """A search with no way out: it never stops where no batch gets there (4,096 tokens)."""
    b = 1
    while 2 * n * b / f < (2 * n + b * T * c) / bw:
        b += 1
    return b


BOUND_WRONG = {
    "forever": bound_forever,
    "answer_key": lambda *a: checks.lesson13._bound_batch(*a),
    # a search that returns the batch before the one that passes: the rounded-down batch
    "search_minus1": lambda n, c, T, bw, f: (lambda b: b - 1 if math.isfinite(b) else b)(
        bound_right(n, c, T, bw, f)),
    # the reading time without the weights: every batch, 1 included, is compute-bound
    "no_weights": lambda n, c, T, bw, f: 1 if 2 * n / f > T * c / bw else math.inf,
    "no_cache": lambda n, c, T, bw, f: _bound(n, c, T, bw, f, cache=False),
    "flops1": lambda n, c, T, bw, f: _bound(n, c, T, bw, f, flops=1),
    "bytes1": lambda n, c, T, bw, f: _bound(n, c, T, bw, f, wbytes=1),
    "none": lambda n, c, T, bw, f: _bound(n, c, T, bw, f, rounding=None),
    "floor": lambda n, c, T, bw, f: _bound(n, c, T, bw, f, rounding=math.floor),
    "negative": lambda n, c, T, bw, f: _bound(n, c, T, bw, f, rounding=None, inf=False) if (
        2 * n / f <= T * c / bw) else _bound(n, c, T, bw, f),
    "per_seq": lambda n, c, T, bw, f: math.inf,
    # the cache counted for one token, not T: on the lesson's cases this gives the no-cache batch
    "no_T": lambda n, c, T, bw, f: _bound(n, c, 1, bw, f),
    "round": lambda n, c, T, bw, f: _bound(n, c, T, bw, f, rounding=round),
    "cache2": lambda n, c, T, bw, f: _bound(n, 2 * c, T, bw, f),        # keys and values counted again
    "swapped": lambda n, c, T, bw, f: _bound(n, c, T, f, bw),
    "none_return": lambda n, c, T, bw, f: None if 2 * n / f <= T * c / bw else _bound(n, c, T, bw, f),
    "capped": bound_capped,
    "bytes4": lambda n, c, T, bw, f: _bound(n, c, T, bw, f, wbytes=4),
    "T1": lambda n, c, T, bw, f: _bound(n, c, T + 1, bw, f),
    "attn": lambda n, c, T, bw, f: (lambda g: math.ceil(2 * n / bw / g) if g > 0 else math.inf)(
        (2 * n + T * c) / f - T * c / bw),
    "once": bound_cache_once,
    "half": lambda n, c, T, bw, f: _bound(n, c / 2, T, bw, f),          # bytes taken for numbers, or K only
    "cache4": lambda n, c, T, bw, f: _bound(n, 4 * c, T, bw, f),        # x 2 for K and V, x 2 bytes again
    "heads8": lambda n, c, T, bw, f: _bound(n, c * 64 / 8, T, bw, f),   # n_heads for n_kv_heads (70B shape)
}


def test_bound_hint_needs_a_second_case():
    """An answer that gives the rounded-down batch on the lesson's cases by coincidence, but not on the
    confirming probe, is not told it rounded down: it gets the plain message."""
    def lucky(n, c, T, bw, f):
        right = bound_right(n, c, T, bw, f)
        return right - 1 if (n, T) == (68_976_648_192, 512) else right + 7
    text = message(checks.check_compute_bound_batch, lucky)
    assert "Recheck your working" in text and not [k for k, p in BOUND_PHRASES.items() if p in text]


@pytest.mark.parametrize("answer", [bound_right, bound_right_search])
def test_bound_right_answers_pass(answer, capsys):
    right_answer_passes(checks.check_compute_bound_batch, answer, capsys)


@pytest.mark.parametrize("key", list(BOUND_WRONG))
def test_bound_mistake_is_named(key):
    names_only(message(checks.check_compute_bound_batch, BOUND_WRONG[key]), BOUND_EXPECT.get(key, key),
               BOUND_PHRASES)


@pytest.mark.parametrize("key", list(BOUND_WRONG))
def test_bound_mistake_fails_the_hidden_test(key):
    try:
        passes = hidden_test_passes("13_generation_and_memory", "l13-bound-test",
                                    compute_bound_batch=BOUND_WRONG[key])
    except (TypeError, ValueError):   # float(None): the hidden test raises, a failed test for the grader
        passes = False
    assert not passes


def test_bound_search_that_never_stops_is_stopped_and_named():
    """The learner's call runs under a time limit: the check answers in seconds, naming the case."""
    import time
    start = time.monotonic()
    text = message(checks.check_compute_bound_batch, bound_forever)
    assert time.monotonic() - start < 10
    assert "T=4096" in text and "return math.inf" in text


def test_time_limit_off_the_main_thread():
    """Off the main thread (no signals there) the call is waited for in a thread, then named."""
    import threading
    out = {}

    def run():
        try:
            checks._engine.call_with_time_limit(lambda: bound_forever(68_976_648_192, 327_680, 4096, 3.35e12,
                                                                      989e12), (), 0.5, "too long")
        except checks.ExerciseError as err:
            out["message"] = str(err)
    worker = threading.Thread(target=run)
    worker.start()
    worker.join(5)
    assert out.get("message") == "too long"
    assert checks._engine.call_with_time_limit(lambda a: a + 1, (1,), 5, "too long") == 2


def test_bound_shortcut_flops_per_byte_fails():
    """The H100's FLOPs per byte, the batch with no cache at all, is not the answer once caches are read."""
    text = message(checks.check_compute_bound_batch, lambda n, c, T, bw, f: math.ceil(f / bw))
    assert "the caches are missing" in text


# ------------------------------------------------------------------------------- exercise 3
# free_after, wasted, next_place after 10 decode steps (B = 16): the right values and two ways to write them
PAGED_RIGHT = (3, 21, (6, 8))
PAGED_PHRASES = {
    "rounded_down": "blocks rounded down", "pooled_blocks": "a block taken is missing",
    "request0_only": "the empty slots of request 0 alone",
    "requests12_only": "the empty slots of requests 1 and 2",
    "one_more_token": "counted with one token too many", "one_fewer_token": "counted with one token too few",
    "shared_step": "a step as one token in all", "pool_11": "that leaves 4 blocks taken",
    "in_use": "number of blocks in use", "bound": "that is the bound", "free_too": "free blocks too",
    "before": "before the 10 new tokens", "pooled_waste": "pools all 123 tokens",
    "waste_minus": "off by one in each request: a", "waste_plus": "one slot too many",
    "table_index": "where the block sits in request 0's block table", "swapped": "are swapped",
    "slot_plus": "off by one: counting from 0", "last_written": "where the last of the 10 new tokens went",
    "absolute": "counts within the block", "others_block": "went to request",
    "one_block_taken": "that counts 1 block taken", "slot_only": "block 6 is right, slot 10 is not",
    "listed_free": "give how many blocks are still free, not which", "first_block": "block 5 is table[0]",
    "still_free": "first block still free after the 10 steps", "other_table": "not request 0's",
    "fractional_place": "a block and a slot are whole numbers", "fractional_free": "it counts blocks",
    "fractional_wasted": "it counts slots", "text": "is text: write the number itself",
    "used_slots": "counts the used slots of each request's last block",
}
PAGED_WRONG = {   # (free_after, wasted, next_place) as a learner might slip
    "rounded_down": (6, 21, (6, 8)),                  # floor(n / B) blocks: none taken, all 6 still free
    "pooled_blocks": (12 - math.ceil(123 / 16), 21, (6, 8)),
    "in_use": (3 + 2 + 4, 21, (6, 8)),
    "bound": (3, 3 * (16 - 1), (6, 8)),                                       # the shortcut: the bound B - 1
    "free_too": (3, 21 + 3 * 16, (6, 8)),
    "before": (3, (32 - 30) + (16 - 16) + (48 - 47), (6, 8)),
    "pooled_waste": (3, 8 * 16 - 123, (6, 8)),
    "waste_minus": (3, (48 - 40 - 1) + (32 - 26 - 1) + (64 - 57 - 1), (6, 8)),
    "waste_plus": (3, (48 - 40 + 1) + (32 - 26 + 1) + (64 - 57 + 1), (6, 8)),
    "table_index": (3, 21, (40 // 16, 40 % 16)),
    "swapped": (3, 21, (40 % 16, 40 // 16)),
    "slot_plus": (3, 21, (6, 41 % 16)),
    "last_written": (3, 21, (6, 39 % 16)),
    "absolute": (3, 21, (6, 40)),
    "others_block": (3, 21, (1, 8)),                                          # the first free block
    "request0_only": (3, 48 - 40, (6, 8)),                                    # request 0's waste alone
    "requests12_only": (3, (32 - 26) + (64 - 57), (6, 8)),                    # request 0 left out
    # request 0's slots counted after its next token (slot 8 taken): 16 - 9 = 7, not 8
    "one_more_token": (3, (48 - 41) + (32 - 26) + (64 - 57), (6, 8)),
    "one_fewer_token": (3, (48 - 39) + (32 - 26) + (64 - 57), (6, 8)),
    # "a step" read as one token in all, to requests 0, 1, 2 in turn: 34, 19, 50 tokens
    "shared_step": (3, (48 - 34) + (32 - 19) + (64 - 50), (6, 8)),
    "shared_step_place": (3, 21, (6, 34 % 16)),
    # the pool counted as 11 blocks (the largest number, 11), 9 in use after the steps
    "pool_11": (11 - 9, 21, (6, 8)),
    "one_block_taken": (5, 21, (6, 8)),                      # only request 0's new block counted
    "slot_only": (3, 21, (6, 10)),                           # the right block, the slot = the steps
    "listed_free": ([8, 10, 11], 21, (6, 8)),                # which blocks are free, not how many
    "first_block": (3, 21, (5, 8)),                          # request 0's first block, table[0]
    "still_free": (3, 21, (8, 8)),                           # the first block free after all 10 steps
    "other_table": (3, 21, (7, 8)),                          # request 1's block
    "fractional_place": (3, 21, (6.9, 8.9)),                 # int() would truncate these to (6, 8)
    "fractional_free": (3.5, 21, (6, 8)),
    "fractional_wasted": (3, 21.5, (6, 8)),
    "text": ("3", 21, (6, 8)),
    "used_slots": (3, (40 - 32) + (26 - 16) + (57 - 48), (6, 8)),   # the last blocks' used slots
}
# forgetting one request's block gives the pooled count too
PAGED_EXPECT = {"forgot_one": "pooled_blocks", "shared_step_place": "shared_step"}
PAGED_WRONG["forgot_one"] = (6 - 2, 21, (6, 8))


def _paged_hidden(values, cells=()):
    return hidden_test_passes("13_generation_and_memory", "l13-place-test",
                              free_after=values[0], wasted=values[1], next_place=values[2],
                              In=["", *cells, "the hidden test cell itself"])


def test_shortcuts_through_the_check_package_fail_the_hidden_tests():
    """Calling the check's own reference (exercise 2) or reading its simulated answer (exercise 3) passes
    neither hidden test, though the values of the second are right."""
    key = lambda *a: checks.lesson13._bound_batch(*a)   # noqa: E731
    assert not hidden_test_passes("13_generation_and_memory", "l13-bound-test", compute_bound_batch=key)
    cell = "free_after, wasted, next_place = checks.lesson13._paged_run()[:3]"
    assert checks.lesson13._paged_run()[:3] == PAGED_RIGHT
    assert not _paged_hidden(PAGED_RIGHT, [cell])
    assert not _paged_hidden(PAGED_RIGHT, ["from selfattention.checks.lesson13 import _paged_run"])
    assert _paged_hidden(PAGED_RIGHT, ["checks.check_paged_prediction(free_after, wasted, next_place)"])


@pytest.mark.parametrize("values", [PAGED_RIGHT, (6 - 3, (3 * 16 - 40) + (2 * 16 - 26) + (4 * 16 - 57),
                                                   np.array([[5, 2, 6][40 // 16], 40 - 32]))])
def test_paged_right_answers_pass(values, capsys):
    right_answer_passes(lambda v: checks.check_paged_prediction(*v), values, capsys)
    assert _paged_hidden(values)


@pytest.mark.parametrize("key", list(PAGED_WRONG))
def test_paged_mistake_is_named_and_fails_the_hidden_test(key):
    names_only(message(lambda v: checks.check_paged_prediction(*v), PAGED_WRONG[key]),
               PAGED_EXPECT.get(key, key), PAGED_PHRASES)
    assert not _paged_hidden(PAGED_WRONG[key])


def test_paged_shortcut_the_bound_fails():
    """Writing the bound B - 1 per request instead of predicting the waste is refused, by both tests."""
    values = (3, 45, (6, 8))
    assert "that is the bound" in message(lambda v: checks.check_paged_prediction(*v), values)
    assert not _paged_hidden(values)


def test_paged_blank_answer_is_named():
    assert "no value yet" in message(lambda v: checks.check_paged_prediction(*v), (None, None, None))


def test_paged_wrong_block_message_does_not_give_the_block_away():
    text = message(lambda v: checks.check_paged_prediction(*v), (3, 21, (1, 8)))
    assert "6" not in text and "blocks 1, 4" not in text


def test_paged_pool_counted_as_eleven_blocks_is_told_the_pool_size():
    """free_after = 2: 11 - 9 blocks in use, the pool's largest number taken for its size."""
    text = message(lambda v: checks.check_paged_prediction(*v), (2, 21, (6, 8)))
    assert "it holds 12, not 11" in text and "at most one" in text


def test_bound_success_message_leaves_exercise_4_to_the_learner(capsys):
    """Exercise 4 asks what memory and batching do to decode: exercise 2's success message does not tell."""
    checks.check_compute_bound_batch(lambda n, c, T, bw, f: (
        math.inf if 2 * n / f <= T * c / bw else math.ceil(2 * n / bw / (2 * n / f - T * c / bw))))
    out = capsys.readouterr().out
    assert out.startswith("Correct:") and "memory" not in out and "never" not in out
