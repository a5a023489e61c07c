"""Checks for lesson 13 (generation and memory): one decode step with a KV cache, the lower bound on the
time of a decode step, and predicting a paged cache after a few decode steps."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ._engine import (
    ExerciseError,
    _to_array,
    call_with_time_limit,
    check_array,
    check_value,
    passed,
)

__all__ = ["check_decode_step", "check_compute_bound_batch", "check_paged_prediction"]


# ---------------------------------------------------------------- exercise 1: one decode step
def _rot(x: Any, position: int) -> Any:
    """RoPE of one vector (d_k,) at ``position``, as the model rotates its queries and keys."""
    import torch

    from .. import llm

    return llm.rotary(x[None, :], torch.tensor([position]))[0]


def _attend(q: Any, K: Any, V: Any) -> np.ndarray:
    """One query (d_k,) over keys (n, d_k) and values (n, d_v), in float64, with a stable softmax."""
    q, K, V = (np.asarray(a, dtype=float) for a in (q, K, V))
    s = K @ q / np.sqrt(len(q))
    e = np.exp(s - s.max())
    return (e / e.sum()) @ V


def _decode_cases() -> list[dict[str, Any]]:
    """Steps of the course's tiny decoder (layer 0, seed 0): the query, key and value of token T straight
    from W_Q, W_K, W_V (not rotated), the caches of tokens 0..T-1 (keys rotated at their positions), and
    ``model``: row T of the model's own causal attention output for that head (None: a case built here)."""
    import torch

    from .. import llm

    model = llm.load_llama(seed=0)
    text = llm.zen_of_python()
    cases = []
    for start, T, head in ((0, 20, 0), (300, 60, 3)):
        ids = model.encode(text[start:start + T + 1])
        with torch.no_grad():
            model(ids)
            q, k, v = model.blocks[0].qkv(model.embed(ids))
            group = head // (model.num_heads // model.num_kv_heads)
            k_rot = llm.rotary(k)
            own = (model.last_weights[0][0, head, T] @ v[0, group]).numpy()
        cases.append({"q": q[0, head, T], "k": k[0, group, T], "v": v[0, group, T],
                      "K": k_rot[0, group, :T], "V": v[0, group, :T], "T": T, "model": own})
    # scores in the hundreds: exp() overflows without the maximum subtracted
    big = dict(cases[0])
    big["q"], big["model"] = big["q"] * 150, None
    cases.append(big)
    return cases


def _decode_variants(c: dict[str, Any]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(z, K cache) of the right step and of each slip."""
    import torch

    q, k, v, K, V, T = c["q"], c["k"], c["v"], c["K"], c["V"], c["T"]
    Vg = torch.cat([V, v[None]])

    def step(q_at: int | None, k_at: int | None, keys: Any = None) -> tuple[np.ndarray, np.ndarray]:
        qr = q if q_at is None else _rot(q, q_at)
        kr = k if k_at is None else _rot(k, k_at)
        Kg = torch.cat([K, kr[None]]) if keys is None else keys
        return _attend(qr, Kg, Vg), Kg.numpy()

    right = step(T, T)
    qr, Kg, d_k = _rot(q, T), right[1], len(q)

    def scaled(by: float, keys: Any = Kg, values: Any = Vg) -> tuple[np.ndarray, np.ndarray]:
        """The right rotations and caches, the scores divided by ``by`` instead of sqrt(d_k)."""
        return _attend(qr * np.sqrt(d_k) / by, keys, values), Kg

    def weighted(scores_to_weights: Callable[[np.ndarray], np.ndarray], rows: Any) -> np.ndarray:
        scores = Kg @ np.asarray(qr, dtype=float) / np.sqrt(d_k)
        return scores_to_weights(scores) @ np.asarray(rows, dtype=float)

    def softmax(s: np.ndarray) -> np.ndarray:
        e = np.exp(s - s.max())
        return e / e.sum()

    return {
        "by_dk": scaled(d_k),
        "by_T": scaled(np.sqrt(T)),
        "by_T1": scaled(np.sqrt(T + 1)),
        "times": scaled(1 / np.sqrt(d_k)),
        "drop_first": scaled(np.sqrt(d_k), Kg[1:], Vg[1:]),
        "alone": (np.asarray(v, dtype=float), Kg),
        "rot_v": (_attend(qr, Kg, torch.cat([V, _rot(v, T)[None]])), Kg),
        "keys_as_values": (weighted(softmax, Kg), Kg),
        "no_softmax": (weighted(lambda s: s, Vg), Kg),
        "no_sum": (weighted(lambda s: np.exp(s - s.max()), Vg), Kg),
        "no_sum_raw": (weighted(np.exp, Vg), Kg),
        "right": right,
        "old": (_attend(_rot(q, T), K, V), right[1]),
        "plus1": step(T + 1, T + 1),
        "minus1": step(T - 1, T - 1),
        "q_minus1": step(T - 1, T),
        "k_minus1": step(T, T - 1),
        "q_plus1": step(T + 1, T),
        "by_dmodel": scaled(8.0),
        "ones": (weighted(np.ones_like, Vg), Kg),
        "pos_dk": step(len(q), len(q)),
        "unrotated": step(None, None),
        "q_only": step(T, None),
        "k_only": step(None, T),
        "again": step(T, T, torch.cat([llm_rotary_all(K), _rot(k, T)[None]])),
        "unscaled": (_attend(_rot(q, T) * np.sqrt(len(q)), right[1], Vg), right[1]),
        "k_as_q": (_attend(_rot(k, T), right[1], Vg), right[1]),
        "top_left": (np.asarray(Vg[0], dtype=float), Kg),
        "uniform": (np.asarray(Vg, dtype=float).mean(axis=0), Kg),
    }


def llm_rotary_all(K: Any) -> Any:
    """The cached keys rotated a second time, by 0..T-1 (a slip: they are cached already rotated)."""
    from .. import llm

    return llm.rotary(K)


_DECODE_WORDS = {
    "old": "the new token is missing from what its query attended to (attended before appending, or masked "
           "itself out): append its rotated key and value first, then attend over all T + 1 tokens; under the "
           "causal mask a token reads itself.",
    "plus1": "q and k_new were rotated at position T + 1: positions count from 0, so the T cached tokens sit "
             "at 0 to T - 1 and the new one at T (len(K_cache)).",
    "minus1": "q and k_new were rotated at position T - 1, the last cached token's place: the new token sits "
              "at T (len(K_cache)), positions counting from 0.",
    "q_minus1": "q was rotated at position T - 1 and k_new at T: the new token's query and key both sit at "
                "position T (len(K_cache)), the query too.",
    "k_minus1": "k_new was rotated at position T - 1 and q at T: the new token's key and query both sit at "
                "position T (len(K_cache)), the key too.",
    "q_plus1": "q was rotated one place past k_new (at T + 1, k_new at T): the new token's query and key both sit at "
               "position T (len(K_cache)), positions counting from 0.",
    "by_dmodel": "the scores were divided by sqrt(d_model) = 8, the width of the whole model: the scale is "
                 "sqrt(d_k) = 4, the length of one head's query (math.sqrt(len(q))).",
    "ones": "every weight is 1, so z is the sum of all T + 1 values: the softmax ran over an axis of length 1 "
            "(dim=0 of a (1, T + 1) row of scores). Softmax over the T + 1 scores (dim=-1).",
    "pos_dk": "q and k_new were rotated at position d_k = 16, the number of columns of K_cache "
              "(K_cache.shape[1]): the new token's position is the number of rows, T = K_cache.shape[0].",
    "unrotated": "q and k_new were not rotated (or rotated at position 0): RoPE turns the new token's query "
                 "and key by its position T before it is scored and cached.",
    "q_only": "only q was rotated: k_new must be rotated at position T too, before it joins the cache.",
    "k_only": "only k_new was rotated: the query must be rotated at position T too, or its scores are "
              "not the model's.",
    "again": "the cached keys were rotated a second time: K_cache holds keys already rotated at their "
             "positions; rotate only the new token's q and k_new.",
    "unscaled": "the scores are not scaled: divide them by sqrt(d_k).",
    "by_dk": "the scores were divided by d_k = 16, not by its square root: divide by sqrt(d_k) = 4 "
             "(math.sqrt(len(q))).",
    "by_T": "the scores were divided by sqrt(T), the square root of the number of cached tokens "
            "(len(K_cache)), not by sqrt(d_k): the scale is the square root of the length of a query, "
            "len(q) = 16.",
    "by_T1": "the scores were divided by sqrt(T + 1), the square root of the number of keys, not by "
             "sqrt(d_k): the scale is the square root of the length of a query, len(q) = 16.",
    "times": "the scores were multiplied by sqrt(d_k): divide them by it.",
    "drop_first": "the oldest token (position 0) is missing from what the query attended to: the cache "
                  "grows, nothing is dropped; attend to all T + 1 rows.",
    "alone": "z is v_new itself: the query attended to the new token alone. It must attend to all T + 1 "
             "tokens, the T cached ones and itself.",
    "rot_v": "v_new was rotated too: RoPE turns only queries and keys, whose dot products are the scores; "
             "values are cached and weighted as they come.",
    "keys_as_values": "the weights were applied to the keys: z is the weighted sum of the values, "
                      "weights @ V.",
    "no_softmax": "the scores were used as weights without a softmax: softmax them first, so the weights "
                  "are positive and sum to 1.",
    "no_sum": "the weights were exponentiated but not divided by their sum: softmax divides each exp() by the "
              "sum of all T + 1 of them, so the weights sum to 1.",
    "no_sum_raw": "the weights are exp() of the scores, not divided by their sum: softmax divides each exp() "
                  "by the sum of all T + 1 of them, so the weights sum to 1.",
    "k_as_q": "the new token's key k_new was used as the query: the scores compare the rotated query with "
              "every key.",
    "top_left": "z is the oldest value, V_cache[0]: the query attended to position 0 alone. A causal mask over one "
                "query and T + 1 keys (is_causal=True in scaled_dot_product_attention) is lined up top-left, so "
                "it lets the query see only the first key; a decode query comes after every cached token and "
                "needs no mask.",
    "uniform": "z is the plain mean of the T + 1 values: every weight is 1 / (T + 1), whatever the scores. Weight "
               "each value by the softmax of its own score, q . k_j / sqrt(d_k).",
}


def check_decode_step(decode_step: Callable[..., Any]) -> None:
    """Exercise 1: one cached decode step of the tiny decoder (rotate the new query and key at position T,
    append, attend) against the model's own causal attention output; the caches returned must hold the old
    rows, then the new one."""
    import torch

    from .. import llm

    if not callable(decode_step):
        raise ExerciseError("decode_step should be a function: write it in the answer cell above.")
    for c in _decode_cases():
        T = c["T"]
        what = f"T = {T} cached tokens" + ("" if c["model"] is not None else ", scores in the hundreds")
        args = [c[n].clone() for n in ("q", "k", "v", "K", "V")]
        try:
            result = decode_step(*args)
        except Exception as exc:  # the learner's code crashed
            raise ExerciseError(f"decode_step raised {type(exc).__name__} on {what}: {exc}") from None
        if result is None or result is Ellipsis:
            raise ExerciseError("decode_step returns nothing yet: return z, the grown K cache and V cache.")
        if not isinstance(result, tuple) or len(result) != 3:
            count = f"{len(result)} things" if isinstance(result, tuple) else "one thing"
            raise ExerciseError(f"decode_step should return three things, z, K_cache and V_cache "
                                f"(return z, K, V); it returned {count}.")
        z, K_new, V_new = (_to_array(part, name) for part, name in zip(result, ("z", "K_cache", "V_cache"), strict=True))
        if not np.isfinite(z).all():
            raise ExerciseError(f"z (on {what}) contains NaN or infinite values: with scores in the hundreds, "
                                f"torch.exp overflows. Subtract the scores' maximum before exponentiating "
                                f"(softmax is unchanged by that shift), or call torch.softmax, which does.")
        variants = _decode_variants(c)
        K_old = c["K"].numpy()
        if K_new.shape == (T + 1, K_old.shape[1]) and not np.allclose(K_new[:T], K_old, atol=1e-5):
            at_T = llm.rotary(c["K"], torch.full((T,), T)).numpy()
            if np.allclose(K_new[:T], llm_rotary_all(c["K"]).numpy(), atol=1e-5):
                raise ExerciseError(f"z (on {what}) is not right yet: {_DECODE_WORDS['again']}")
            if np.allclose(K_new[:T], at_T, atol=1e-5):
                raise ExerciseError(f"the returned K_cache (on {what}) has its {T} cached keys rotated again, by "
                                    f"the new position T = {T}: K_cache holds keys already rotated at their own "
                                    f"positions, and a score depends on the offset only; rotate only q and k_new.")
        mistakes = {_DECODE_WORDS[k]: v[0] for k, v in variants.items() if k in _DECODE_WORDS}
        if z.shape == (1, *variants["ones"][0].shape) and np.allclose(z[0], variants["ones"][0], rtol=1e-4, atol=1e-5):
            raise ExerciseError(f"z (on {what}) is not right yet: {_DECODE_WORDS['ones']}")
        check_array(z, variants["right"][0], f"z (on {what})", mistakes=mistakes, rtol=1e-4, atol=1e-5)
        if c["model"] is not None and not np.allclose(variants["right"][0], c["model"], atol=1e-5):
            raise AssertionError("the check's reference differs from the model's own output")
        K_want, V_want = variants["right"][1], torch.cat([c["V"], c["v"][None]]).numpy()
        if (K_new.shape == V_want.shape and V_new.shape == K_want.shape and np.allclose(K_new, V_want, atol=1e-5)
                and np.allclose(V_new, K_want, atol=1e-5)):
            raise ExerciseError("the two caches are returned swapped: the second thing returned holds the values, "
                                "the third the keys. Return z, K_cache, V_cache in that order.")
        for got, want, name in ((K_new, K_want, "the returned K_cache"), (V_new, V_want, "the returned V_cache")):
            if got.shape == want.shape and np.allclose(got, np.roll(want, 1, axis=0), atol=1e-5):
                raise ExerciseError(f"{name} has the new row first: append it at the end, after the "
                                    f"{T} cached rows (the order of positions).")
            if got.shape == want[:-1].shape:
                raise ExerciseError(f"{name} has {got.shape[0]} rows, as many as before the step: append the new "
                                    f"row (torch.cat) and return the grown cache.")
            if name.endswith("K_cache") and got.shape == want.shape and np.allclose(got[-1], c["k"].numpy(), atol=1e-5):
                raise ExerciseError("the key appended to K_cache is k_new as it came, not rotated: the cache holds "
                                    "every key rotated at its position, so the next steps can use it as it is.")
            check_array(got, want, name, rtol=1e-4, atol=1e-5)
    passed("z is row T of the model's own causal attention for that head (two prompts, and scores in the "
           "hundreds), and the caches grew by one row each, the key rotated at position T. The cached keys "
           "were never rotated again: a score depends on the offset only, so a key rotated once at its "
           "position stays right for every later query.")


# ------------------------------------------------- exercise 2: the batch where decoding turns compute-bound
def _bound_batch(n: float, c: float, T: int, bw: float, f: float, *, flops_per_weight: float = 2.0,
                 weight_bytes: float = 2.0, no_cache: bool = False, rounding: str = "ceil",
                 cache_factor: float = 1.0, cache_once: bool = False) -> float:
    """Smallest batch b with flops_per_weight n b / f >= (weight_bytes n + b T c) / bw (math.inf if none);
    ``cache_once``: the slip that reads one cache for the whole batch, (weight_bytes n + T c) / bw."""
    per_sequence = 0.0 if no_cache or cache_once else T * cache_factor * c / bw
    gain = flops_per_weight * n / f - per_sequence  # seconds gained per extra sequence
    need = (weight_bytes * n + (T * c if cache_once else 0.0)) / bw
    if rounding == "none_negative":  # the formula without the case where no batch gets there
        return need / gain
    if gain <= 0:
        return math.inf
    exact = need / gain
    return {"ceil": math.ceil(exact), "floor": math.floor(exact), "none": exact}[rounding]


_BOUND_WORDS = {
    "no_cache": ("the caches are missing: every sequence in the batch brings its own cache of "
                 "T x cache_bytes_per_token bytes, read at every step."),
    "once": ("the cache was counted once for the whole batch: the weights are shared by the batch, but each "
             "of the b sequences brings its own cache, so a step reads 2 n_params + b x T x "
             "cache_bytes_per_token bytes."),
    "half": ("each cache was counted at half its size: cache_bytes_per_token is already in bytes (not numbers "
             "of 2 bytes) and already holds a token's key and its value; use it as it is."),
    "cache4": ("each cache was counted 4 times over: cache_bytes_per_token is already in bytes (do not multiply "
               "by 2 bytes per number) and already holds the key and the value (do not multiply by 2)."),
    "heads8": ("each cache was counted 8 times over, h/g = 64/8 for the 70B shape, as if every query head cached "
               "its own key and value: cache_bytes_per_token already counts the g key/value heads that are "
               "cached."),
    "flops1": "each weight does a multiply and an add per sequence: 2 FLOPs, not 1.",
    "bytes1": "the weights were counted as 1 byte each; they are stored in 2 bytes (float16).",
    "none": "a batch is a whole number of sequences: round the exact solution up (math.ceil).",
    "floor": ("that is the exact solution rounded to a whole number below it (round(), math.floor, or a search "
              "that returns the batch before the one that passes): at that batch the FLOPs still take less time "
              "than the reading. Return the first batch where they do not (math.ceil, whatever the fraction)."),
    "cache2": ("the caches were counted twice over: cache_bytes_per_token already holds a token's key and value, "
               "in bytes, so a sequence of T tokens brings T x cache_bytes_per_token bytes; do not multiply by 2 "
               "again (neither for key and value nor for 2 bytes per number)."),
    "swapped": ("bandwidth and flops_per_s are swapped: the FLOP time is FLOPs / flops_per_s, the reading time "
                "bytes / bandwidth."),
    "bytes4": "the weights were counted as 4 bytes each (float32); they are stored in 2 bytes (float16).",
    "T1": ("each cache was counted for T + 1 tokens: the step reads the T tokens already cached, "
           "T x cache_bytes_per_token bytes per sequence."),
    "attn": ("the FLOP time counts the T x cache_bytes_per_token cache bytes as FLOPs too: the exercise counts "
             "the weights' FLOPs alone, 2 per parameter per sequence (attention's FLOPs are small beside them)."),
}


def _slip(key: str, n: float, c: float, T: int, bw: float, f: float) -> set[float]:
    """The batches the slip ``key`` gives on one case (floor: rounded down or to the nearest)."""
    if key == "swapped":
        return {_bound_batch(n, c, T, f, bw)}
    if key == "floor":
        exact = _bound_batch(n, c, T, bw, f, rounding="none")
        return {math.inf} if math.isinf(exact) else {math.floor(exact), round(exact)}
    if key == "T1":
        return {_bound_batch(n, c, T + 1, bw, f)}
    if key == "attn":
        gain = (2 * n + T * c) / f - T * c / bw
        return {math.ceil(2 * n / bw / gain) if gain > 0 else math.inf}
    kwargs: dict[str, Any] = {"no_cache": {"no_cache": True}, "once": {"cache_once": True},
                              "half": {"cache_factor": 0.5}, "cache4": {"cache_factor": 4.0},
                              "heads8": {"cache_factor": 8.0}, "flops1": {"flops_per_weight": 1.0},
                              "bytes1": {"weight_bytes": 1.0}, "bytes4": {"weight_bytes": 4.0},
                              "none": {"rounding": "none"}, "cache2": {"cache_factor": 2.0}}[key]
    return {_bound_batch(n, c, T, bw, f, **kwargs)}


_BOUND_SECONDS = 3.0


def _bound_call(case: tuple[float, ...]) -> str:
    n, c, T, bw, f = case
    return (f"compute_bound_batch(n_params={n:,.0f}, cache_bytes_per_token={c:,}, T={T}, "
            f"bandwidth={bw:.3g}, flops_per_s={f:.3g})")


def _learners_batch(compute_bound_batch: Callable[..., Any], case: tuple[float, ...]) -> Any:
    """The learner's answer on one case: under a time limit (a search that never stops must not hang the
    check); a call of this module's reference is refused by the engine, as in every check."""
    right = _bound_batch(*case)
    late = (f"{_bound_call(case)} ran for {_BOUND_SECONDS:g} s without returning"
            + (": here no batch gets there (each sequence's cache takes longer to read than its FLOPs take), so "
               "a search that adds one sequence at a time never stops. Compare the seconds one more sequence "
               "adds to the FLOP time and to the reading time first, and return math.inf when the reading "
               "grows faster." if math.isinf(right) else
               f": the right batch here is {right:,}, so a search should stop there; check its condition."))
    return call_with_time_limit(compute_bound_batch, case, _BOUND_SECONDS, late)


def _same(got: float, want: float) -> bool:
    """Whether two batches agree (both infinite, or equal to 1e-9)."""
    return got == want or (math.isfinite(want) and math.isfinite(got) and math.isclose(got, want, rel_tol=1e-9))


def _confirmed(compute_bound_batch: Callable[..., Any], key: str) -> bool:
    """Whether the answer gives the slip's batch on every case and on the confirming probe, so that a hint is
    never named on one number that a different slip happens to give too."""
    for case in (*_BOUND_CASES, _CONFIRM, _SMALL_CACHE):
        try:
            got = float(np.asarray(_learners_batch(compute_bound_batch, case)).item())
        except ExerciseError:
            raise
        except Exception:
            return False
        if not any(got == want or (math.isfinite(want) and math.isclose(got, want, rel_tol=1e-9))
                   for want in _slip(key, *case)):
            return False
    return True

# the 70B shape of section 4 (g = 8) on an H100, 512 tokens per text; a 7B model on another GPU; the 70B
# shape at 4,096 tokens, where each sequence's cache takes longer to read than its FLOPs take
_BOUND_CASES = [(68_976_648_192, 327_680, 512, 3.35e12, 989e12), (7e9, 131_072, 100, 2e12, 5e14),
                (68_976_648_192, 327_680, 4096, 3.35e12, 989e12)]


# a cache of 1 MB per token: forgetting to multiply it by T gives a batch (255) that neither the right answer
# (inf) nor leaving the cache out (250) gives, so the two slips, which agree on the cases above, can be told apart
_PROBE = (7e9, 1_000_000, 100, 2e12, 5e14)
# a 1B shape with a small cache, where the exact batch (1,973.2) tells the slips apart: rounded down 1,973,
# attention's FLOPs added 1,919, float32 weights 3,947, T + 1 tokens 2,122, no cache 247
_CONFIRM = (1e9, 71_000, 100, 2e12, 4.93e14)
# a cache so small that no cache slip makes the batch infinite: an answer that is math.inf everywhere is not
# taken for a cache counted 8 times over
_SMALL_CACHE = (7e9, 1_000, 100, 2e12, 5e14)
_NO_T_WORDS = ("each sequence's cache was counted as cache_bytes_per_token bytes, the cache of one token: a "
               "sequence of T tokens brings T x cache_bytes_per_token bytes, read at every step.")


def _forgot_T(compute_bound_batch: Callable[..., Any]) -> bool:
    """Whether the answer gives, on the probe case, the batch of a cache counted for one token, not T."""
    n, c, _, bw, f = _PROBE
    try:
        got = float(np.asarray(_learners_batch(compute_bound_batch, _PROBE)).item())
    except ExerciseError:
        raise
    except Exception:
        return False
    return math.isclose(got, _bound_batch(n, c, 1, bw, f), rel_tol=1e-9)


def check_compute_bound_batch(compute_bound_batch: Callable[..., Any]) -> None:
    """Exercise 2: the smallest batch at which a decode step's FLOP time reaches its reading time."""
    if not callable(compute_bound_batch):
        raise ExerciseError("compute_bound_batch should be a function: write it in the answer cell above.")
    for case in _BOUND_CASES:
        n, c, T, bw, f = case
        call = _bound_call(case)
        try:
            got = _learners_batch(compute_bound_batch, case)
        except ExerciseError:
            raise
        except Exception as exc:
            raise ExerciseError(f"{call} raised {type(exc).__name__}: {exc}") from None
        right = _bound_batch(*case)
        if got is None and math.isinf(right):
            raise ExerciseError(f"{call} returned None: here no batch gets there (each sequence's cache takes "
                                f"longer to read than its FLOPs take). For that case return math.inf, as the "
                                f"exercise asks, not None.")
        if got is None:
            raise ExerciseError(f"{call} returned None: return the batch (a whole number).")
        try:
            value = float(np.asarray(got).item()) if hasattr(got, "__array__") else float(got)
        except (TypeError, ValueError):
            value = None  # check_value names it
        if value is not None and not _same(value, right):
            for key, words in _BOUND_WORDS.items():
                if any(_same(value, wrong) for wrong in _slip(key, *case)) and _confirmed(compute_bound_batch, key):
                    shown = "inf" if math.isinf(value) else f"{value:,.6g}"
                    raise ExerciseError(f"{call} = {shown} is not right yet: {words}")
        if value is not None and math.isinf(right) and value < 0:
            raise ExerciseError(f"{call} = {value:,.1f}, a negative batch: here each sequence's cache takes "
                                f"longer to read than its FLOPs take, so adding sequences never catches up and "
                                f"no batch is compute-bound. Return math.inf when that happens.")
        if value is not None and math.isinf(right) and value >= 0 and math.isfinite(value):
            shown = f"{value:,.0f}" if value >= 1e6 else f"{value:,.6g}"
            raise ExerciseError(f"{call} = {shown}, but here no batch gets there: each sequence's cache takes "
                                f"longer to read than its FLOPs take, so the FLOP time never catches up. A search "
                                f"that stops at a cap returns the cap; detect that case and return math.inf.")
        if value is not None and math.isinf(value) and not math.isinf(right):
            raise ExerciseError(f"{call} = inf, but a large enough batch gets there here: the weights are read "
                                f"once per step for the whole batch (not once per sequence), while their FLOPs "
                                f"grow with the batch.")
        if (value is not None and not math.isclose(value, right, rel_tol=1e-9)
                and math.isclose(value, _bound_batch(n, c, 1, bw, f), rel_tol=1e-9) and _forgot_T(compute_bound_batch)):
            raise ExerciseError(f"{call} = {value:,.0f} is not right yet: {_NO_T_WORDS}")
        if value == 1 and math.isfinite(right) and right > 1:
            flop_ms, read_ms = 1e3 * 2 * n / f, 1e3 * (2 * n + T * c) / bw
            raise ExerciseError(f"{call} = 1 is not right yet: at a batch of 1 the FLOP time, 2 x n_params / "
                                f"flops_per_s = {flop_ms:.3g} ms, is below the reading time, (2 x n_params + T x "
                                f"cache_bytes_per_token) / bandwidth = {read_ms:.3g} ms. Did the reading time "
                                f"leave out the weights? They are read at every step, whatever the batch.")
        hints: dict[str, float] = {}
        for key, words in _BOUND_WORDS.items():
            for wrong in _slip(key, *case):
                if wrong != right and not math.isinf(wrong) and _confirmed(compute_bound_batch, key):
                    hints.setdefault(words, wrong)
        check_value(got, right, call, hints=hints, rtol=1e-9, atol=0)
    passed(f"at 512 tokens per text the 70B shape turns compute-bound at a batch of {_bound_batch(*_BOUND_CASES[0])} "
           f"(on one H100 or two: both speeds double), against {math.ceil(989e12 / 3.35e12)} with no cache at all.")


# ---------------------------------------------------------------- exercise 3: a paged cache, predicted
# B = 16; free list [1, 4, 6, 8, 10, 11]; requests of 30, 16, 47 tokens with tables [5, 2], [7], [0, 3, 9];
# 10 decode steps, one token per request per step in the order 0, 1, 2.
_PAGED_B, _PAGED_FREE, _PAGED_LENGTHS, _PAGED_TABLES, _PAGED_STEPS = (
    16, [1, 4, 6, 8, 10, 11], [30, 16, 47], [[5, 2], [7], [0, 3, 9]], 10)


def _paged_run() -> tuple[int, int, tuple[int, int], list[list[int]], list[tuple[int, int, int]]]:
    """Simulate the scenario: (free blocks left, wasted slots, (block, slot) of request 0's next token,
    the tables, and (step, request, block) of each block taken)."""
    B, free, tables, lengths = _PAGED_B, list(_PAGED_FREE), [list(t) for t in _PAGED_TABLES], list(_PAGED_LENGTHS)
    taken = []
    for step in range(1, _PAGED_STEPS + 1):
        for r in range(len(lengths)):
            if lengths[r] == len(tables[r]) * B:  # the last block is full
                tables[r].append(free.pop(0))
                taken.append((step, r, tables[r][-1]))
            lengths[r] += 1
    wasted = sum(len(t) * B - n for t, n in zip(tables, lengths, strict=True))
    n = lengths[0]
    return len(free), wasted, (tables[0][n // B], n % B), tables, taken


def _number(x: Any) -> float | None:
    """``x`` as a float, or None when it is not one number (check_value then names it)."""
    try:
        return float(np.asarray(x).item()) if hasattr(x, "__array__") else float(x)
    except (TypeError, ValueError):
        return None


def _listed(requests: tuple[int, ...] | list[int]) -> str:
    """(1, 2) -> 'requests 1 and 2'."""
    words = [str(r) for r in requests]
    return f"request {words[0]}" if len(words) == 1 else "requests " + ", ".join(words[:-1]) + " and " + words[-1]


def _shared_steps() -> list[int]:
    """The lengths if each of the 10 steps wrote one token in all, to requests 0, 1, 2 in turn."""
    lengths = list(_PAGED_LENGTHS)
    for step in range(_PAGED_STEPS):
        lengths[step % len(lengths)] += 1
    return lengths


def check_paged_prediction(free_after: Any, wasted: Any, next_place: Any) -> None:
    """Exercise 3: the free blocks, the wasted slots and the place of request 0's next token after 10 decode
    steps of three requests in a paged cache (B = 16)."""
    B = _PAGED_B
    free_right, wasted_right, place_right, tables, taken = _paged_run()
    after = [n + _PAGED_STEPS for n in _PAGED_LENGTHS]  # 40, 26, 57
    pooled = math.ceil(sum(after) / B)
    in_use = sum(len(t) for t in _PAGED_TABLES)
    pool = len(_PAGED_FREE) + in_use  # 12 blocks, numbered 0 to 11
    in_use_after = sum(len(t) for t in tables)
    for name, x in (("free_after", free_after), ("wasted", wasted)):
        if isinstance(x, str):
            raise ExerciseError(f"{name} = {x!r:.40} is text: write the number itself, without quotes.")
    if isinstance(free_after, (list, tuple, set, np.ndarray)) and np.size(free_after) != 1:
        raise ExerciseError(f"free_after = {np.asarray(list(free_after)).tolist()!r:.80} lists blocks: give how many "
                            f"blocks are still free, not which (one number).")
    value = _number(free_after)
    if value is not None and value != int(value):
        raise ExerciseError(f"free_after = {value:g} is not a whole number: it counts blocks.")
    if value is not None and value < free_right:
        taken = len(_PAGED_FREE) - value
        also = (f" (Counting the pool: its blocks are numbered 0 to {pool - 1}, so it holds {pool}, not "
                f"{pool - 1}.)" if value == pool - 1 - in_use_after else "")
        raise ExerciseError(f"free_after = {value:g} is not right yet: that leaves {taken:g} blocks taken in "
                            f"{_PAGED_STEPS} steps, but each request gains {_PAGED_STEPS} tokens, fewer than "
                            f"B = {B}, so it fills at most one more block and takes at most one.{also}")
    check_value(free_after, free_right, "free_after", rtol=0, atol=0.01, hints={
        f"that is as if no request took a block, i.e. the blocks rounded down: a request of n tokens holds "
        f"ceil(n / B) blocks (request 0's 40 tokens need {math.ceil(40 / B)}).": len(_PAGED_FREE),
        f"a block taken is missing: for each request in turn, find whether its last block fills up within the "
        f"{_PAGED_STEPS} steps; each that fills takes the first free block. (Counting blocks for all "
        f"{sum(after)} tokens together, {pooled}, gives the same number, but each request fills blocks of its "
        f"own.)": len(_PAGED_FREE) + in_use - pooled,
        "that is the number of blocks in use, not of those still free.": sum(len(t) for t in tables),
        **{f"that counts {k} block{'s' * (k > 1)} taken, but {len(taken)} requests fill their last block within "
           f"the {_PAGED_STEPS} steps, and each of them takes one: check every request, not only request 0."
           : len(_PAGED_FREE) - k for k in range(1, len(taken))},
    })
    per_request = [len(t) * B - n for t, n in zip(tables, after, strict=True)]
    partial: dict[str, float] = {}
    for kept in ((0,), (1,), (2,), (0, 1), (0, 2), (1, 2)):
        left = [r for r in range(3) if r not in kept]
        partial[f"that counts the empty slots of {_listed(kept)} alone; add those of "
                f"{_listed(left)}: every request wastes the end of its own last block, a block taken during "
                f"the {_PAGED_STEPS} steps included."] = sum(per_request[r] for r in kept)
    token_words = f"{after[0]}, {after[1]} and {after[2]}"
    for d in (1, 2):
        partial[f"that is {d} slot{'s' * (d > 1)} fewer than the requests' blocks leave empty: {d} request"
                f"{'s were' if d > 1 else ' was'} counted with one token too many. After "
                f"{_PAGED_STEPS} steps they hold {token_words} tokens; request 0's next token (position "
                f"{after[0]}) is not written yet."] = wasted_right - d
        partial[f"that is {d} slot{'s' * (d > 1)} more than the requests' blocks leave empty: {d} request"
                f"{'s were' if d > 1 else ' was'} counted with one token too few. After "
                f"{_PAGED_STEPS} steps they hold {token_words} tokens."] = wasted_right + d
    shared = _shared_steps()
    partial[f"that reads a step as one token in all, shared by the three requests (they would hold "
            f"{', '.join(str(n) for n in shared)}); at each step every request gets one token, so each gains "
            f"{_PAGED_STEPS}."] = sum(math.ceil(n / B) * B - n for n in shared)
    wasted_value = _number(wasted)
    if wasted_value is not None and wasted_value != int(wasted_value):
        raise ExerciseError(f"wasted = {wasted_value:g} is not a whole number: it counts slots.")
    check_value(wasted, wasted_right, "wasted", rtol=0, atol=0.01, hints={**partial,
        f"that counts the used slots of each request's last block "
        f"({' + '.join(str(n - (len(t) - 1) * B) for t, n in zip(tables, after, strict=True))}), not the empty ones: "
        f"a last block of n_last tokens leaves B - n_last slots empty.":
            sum(n - (len(t) - 1) * B for t, n in zip(tables, after, strict=True)),
        f"that is the bound, B - 1 = {B - 1} per request; count each request's empty slots in its last "
        f"block.": 3 * (B - 1),
        f"that counts the {free_right} free blocks too; count only the slots in the requests' own "
        f"blocks.": wasted_right + free_right * B,
        f"that counts the empty slots before the {_PAGED_STEPS} new tokens; predict them after.":
            sum(len(t) * B - n for t, n in zip(_PAGED_TABLES, _PAGED_LENGTHS, strict=True)),
        f"that pools all {sum(after)} tokens in {pooled} blocks; each request wastes the end of its own "
        f"last block.": pooled * B - sum(after),
        "off by one in each request: a request of n tokens in ceil(n / B) blocks leaves "
        "ceil(n / B) * B - n slots empty.": wasted_right - 3,
        "off by one in each request (one slot too many): a request of n tokens in ceil(n / B) blocks "
        "leaves ceil(n / B) * B - n slots empty.": wasted_right + 3,
    })
    if next_place is None or next_place is Ellipsis:
        raise ExerciseError("next_place has no value yet: write (block, slot).")
    try:
        block, slot = (int(x) for x in next_place)
        whole = all(float(x) == int(x) for x in next_place)
    except (TypeError, ValueError):
        raise ExerciseError(f"next_place = {next_place!r:.80}; write two whole numbers, (block, slot).") from None
    if not whole:
        raise ExerciseError(f"next_place = {tuple(next_place)!r:.80}: a block and a slot are whole numbers; "
                            f"write (block, slot).")
    n = after[0]
    table = tables[0]
    others = {b: (step, r) for step, r, b in taken if r != 0}  # blocks the other requests took
    if (block, slot) != place_right:
        if (block, slot) == (n // B, n % B):
            why = (f"{block} = {n} // {B} is where the block sits in request 0's block table {table}, not the "
                   f"block's number in the pool")
        elif (block, slot) == (n % B, n // B):
            why = "// and % are swapped: the block is table[position // B], the slot position % B"
        elif block == place_right[0] and slot == n % B + 1:
            why = (f"off by one: counting from 0, the next token's position is {n}, its slot {n} - "
                   f"{(n // B) * B} = {n % B}")
        elif block == place_right[0] and slot == n % B - 1:
            why = (f"that is where the last of the {_PAGED_STEPS} new tokens went (position {n - 1}); the next "
                   f"one is at position {n}")
        elif block == place_right[0] and slot == _shared_steps()[0] % B:
            why = (f"that reads a step as one token in all, shared by the three requests: at each step every "
                   f"request gets one token, so request 0 gains {_PAGED_STEPS}")
        elif block == place_right[0] and slot == n:
            why = f"the slot counts within the block: {n} % {B}"
        elif block == place_right[0]:
            why = (f"block {block} is right, slot {slot} is not: the slot is the token's position within its "
                   f"block, position % B, with positions counting from 0 and request 0 holding {_PAGED_LENGTHS[0]} "
                   f"+ {_PAGED_STEPS} tokens")
        elif block in table and table.index(block) != n // B:
            i = table.index(block)
            why = (f"block {block} is table[{i}], request 0's block for positions {i * B} to {i * B + B - 1}; "
                   f"position {n} sits in table[{n} // {B}] = table[{n // B}], a block request 0 takes during "
                   f"the {_PAGED_STEPS} steps")
        elif block in (free_left := [b for b in _PAGED_FREE if not any(b == t for _, _, t in taken)]) \
                and block == free_left[0]:
            why = (f"block {block} is the first block still free after the {_PAGED_STEPS} steps: request 0 took its "
                   f"new block earlier, at the step where it reached position 32; see which block was first on "
                   f"the free list then")
        elif any(block in t for t in _PAGED_TABLES[1:]):
            r = next(i for i, t in enumerate(_PAGED_TABLES) if block in t)
            why = (f"block {block} is in request {r}'s block table {_PAGED_TABLES[r]}, not request 0's: the next token "
                   f"of request 0 goes to a block of its own table")
        elif block in others:
            step, r = others[block]
            why = (f"block {block} went to request {r} at step {step}: walk the steps in order (requests 0, 1, 2 at "
                   f"each step), find the step at which request 0 reaches position 32, and see which block is "
                   f"first on the free list then")
        else:
            why = "follow request 0's table as the free list is taken, step by step"
        raise ExerciseError(f"next_place = ({block}, {slot}) is not right yet: {why}.")
    contiguous = 3 * 256 - sum(after)
    passed(f"{_PAGED_STEPS} steps take {len(_PAGED_FREE) - free_right} blocks (request 1 at step 1, request 2 "
           f"at step 2, request 0 at step 3), leaving {free_right} free; the requests' blocks hold "
           f"{per_request[0]} + {per_request[1]} + {per_request[2]} = {wasted_right} empty slots (the bound: "
           f"{3 * (B - 1)}); request 0's next token, position {n}, goes to block table[{n // B}] = "
           f"{place_right[0]}, slot {place_right[1]}. Reserved contiguously for 256 tokens each, the three "
           f"would leave {contiguous} slots empty.")
