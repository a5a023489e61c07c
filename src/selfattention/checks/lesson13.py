"""Checks for lesson 13 (generation and memory): one decode step with a KV cache, the lower bound on the
time of a decode step, and reading a sequence's keys through its block table."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ._engine import ExerciseError, _to_array, check_array, check_value, passed

__all__ = ["check_decode_step", "check_compute_bound_batch", "check_place_token"]


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
    return {
        "right": right,
        "old": (_attend(_rot(q, T), K, V), right[1]),
        "plus1": step(T + 1, T + 1),
        "minus1": step(T - 1, T - 1),
        "unrotated": step(None, None),
        "q_only": step(T, None),
        "k_only": step(None, T),
        "again": step(T, T, torch.cat([llm_rotary_all(K), _rot(k, T)[None]])),
        "unscaled": (_attend(_rot(q, T) * np.sqrt(len(q)), right[1], Vg), right[1]),
        "k_as_q": (_attend(_rot(k, T), right[1], Vg), right[1]),
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
    "unrotated": "q and k_new were not rotated (or rotated at position 0): RoPE turns the new token's query "
                 "and key by its position T before it is scored and cached.",
    "q_only": "only q was rotated: k_new must be rotated at position T too, before it joins the cache.",
    "k_only": "only k_new was rotated: the query must be rotated at position T too, or its scores are "
              "not the model's.",
    "again": "the cached keys were rotated a second time: K_cache holds keys already rotated at their "
             "positions; rotate only the new token's q and k_new.",
    "unscaled": "the scores are not scaled: divide them by sqrt(d_k).",
    "k_as_q": "the new token's key k_new was used as the query: the scores compare the rotated query with "
              "every key.",
}


def check_decode_step(decode_step: Callable[..., Any]) -> None:
    """Exercise 1: one cached decode step of the tiny decoder (rotate the new query and key at position T,
    append, attend) against the model's own causal attention output; the caches returned must hold the old
    rows, then the new one."""
    import torch

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
            raise ExerciseError("decode_step should return three things, z, K_cache and V_cache "
                                "(return z, K, V), not one.")
        z, K_new, V_new = (_to_array(part, name) for part, name in zip(result, ("z", "K_cache", "V_cache"), strict=True))
        variants = _decode_variants(c)
        mistakes = {_DECODE_WORDS[k]: v[0] for k, v in variants.items() if k in _DECODE_WORDS}
        check_array(z, variants["right"][0], f"z (on {what})", mistakes=mistakes, rtol=1e-4, atol=1e-5)
        if c["model"] is not None and not np.allclose(variants["right"][0], c["model"], atol=1e-5):
            raise AssertionError("the check's reference differs from the model's own output")
        K_want, V_want = variants["right"][1], torch.cat([c["V"], c["v"][None]]).numpy()
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
           "hundreds), and the caches grew by one row each, the key rotated at position T.")


# ------------------------------------------------- exercise 2: the batch where decoding turns compute-bound
def _bound_batch(n: float, c: float, T: int, bw: float, f: float, *, flops_per_weight: float = 2.0,
                 weight_bytes: float = 2.0, no_cache: bool = False, rounding: str = "ceil") -> float:
    """Smallest batch b with flops_per_weight n b / f >= (weight_bytes n + b T c) / bw (math.inf if none)."""
    gain = flops_per_weight * n / f - (0.0 if no_cache else T * c / bw)  # seconds gained per extra sequence
    need = weight_bytes * n / bw
    if rounding == "none_negative":  # the formula without the case where no batch gets there
        return need / gain
    if gain <= 0:
        return math.inf
    exact = need / gain
    return {"ceil": math.ceil(exact), "floor": math.floor(exact), "none": exact}[rounding]


_BOUND_WORDS = {
    "no_cache": ("the caches are missing (or counted once for the whole batch): every sequence in the batch "
                 "brings its own cache of T x cache_bytes_per_token bytes, read at every step."),
    "flops1": "each weight does a multiply and an add per sequence: 2 FLOPs, not 1.",
    "bytes1": "the weights were counted as 1 byte each; they are stored in 2 bytes (float16).",
    "none": "a batch is a whole number of sequences: round the exact solution up (math.ceil).",
    "floor": ("that was rounded down: at that batch the FLOPs still take less time than the reading. Round "
              "up (math.ceil)."),
}

# the 70B shape of section 4 (g = 8) on an H100, 512 tokens per text; a 7B model on another GPU; the 70B
# shape at 4,096 tokens, where each sequence's cache takes longer to read than its FLOPs take
_BOUND_CASES = [(68_976_648_192, 327_680, 512, 3.35e12, 989e12), (7e9, 131_072, 100, 2e12, 5e14),
                (68_976_648_192, 327_680, 4096, 3.35e12, 989e12)]


# a cache of 1 MB per token: forgetting to multiply it by T gives a batch (255) that neither the right answer
# (inf) nor leaving the cache out (250) gives, so the two slips, which agree on the cases above, can be told apart
_PROBE = (7e9, 1_000_000, 100, 2e12, 5e14)
_NO_T_WORDS = ("each sequence's cache was counted as cache_bytes_per_token bytes, the cache of one token: a "
               "sequence of T tokens brings T x cache_bytes_per_token bytes, read at every step.")


def _forgot_T(compute_bound_batch: Callable[..., Any]) -> bool:
    """Whether the answer gives, on the probe case, the batch of a cache counted for one token, not T."""
    n, c, _, bw, f = _PROBE
    try:
        got = float(np.asarray(compute_bound_batch(*_PROBE)).item())
    except Exception:
        return False
    return math.isclose(got, _bound_batch(n, c, 1, bw, f), rel_tol=1e-9)


def check_compute_bound_batch(compute_bound_batch: Callable[..., Any]) -> None:
    """Exercise 2: the smallest batch at which a decode step's FLOP time reaches its reading time."""
    if not callable(compute_bound_batch):
        raise ExerciseError("compute_bound_batch should be a function: write it in the answer cell above.")
    for case in _BOUND_CASES:
        n, c, T, bw, f = case
        call = (f"compute_bound_batch(n_params={n:,.0f}, cache_bytes_per_token={c:,}, T={T}, "
                f"bandwidth={bw:.3g}, flops_per_s={f:.3g})")
        try:
            got = compute_bound_batch(*case)
        except Exception as exc:
            raise ExerciseError(f"{call} raised {type(exc).__name__}: {exc}") from None
        right = _bound_batch(*case)
        try:
            value = float(np.asarray(got).item()) if hasattr(got, "__array__") else float(got)
        except (TypeError, ValueError):
            value = None  # check_value names it
        if value is not None and math.isinf(right) and value < 0:
            raise ExerciseError(f"{call} = {value:,.1f}, a negative batch: here each sequence's cache takes "
                                f"longer to read than its FLOPs take, so adding sequences never catches up and "
                                f"no batch is compute-bound. Return math.inf when that happens.")
        if value is not None and math.isinf(value) and not math.isinf(right):
            raise ExerciseError(f"{call} = inf, but a large enough batch gets there here: the weights are read "
                                f"once per step for the whole batch (not once per sequence), while their FLOPs "
                                f"grow with the batch.")
        if (value is not None and not math.isclose(value, right, rel_tol=1e-9)
                and math.isclose(value, _bound_batch(n, c, 1, bw, f), rel_tol=1e-9) and _forgot_T(compute_bound_batch)):
            raise ExerciseError(f"{call} = {value:,.0f} is not right yet: {_NO_T_WORDS}")
        hints: dict[str, float] = {}
        for key, words in _BOUND_WORDS.items():
            kwargs: dict[str, Any] = {"no_cache": {"no_cache": True}, "flops1": {"flops_per_weight": 1.0},
                                      "bytes1": {"weight_bytes": 1.0}, "none": {"rounding": "none"},
                                      "floor": {"rounding": "floor"}}[key]
            wrong = _bound_batch(*case, **kwargs)
            if wrong != right and not math.isinf(wrong):
                hints.setdefault(words, wrong)
        check_value(got, right, call, hints=hints, rtol=1e-9, atol=0)
    n, c, T = _BOUND_CASES[0][:3]
    room = 2 * 80 * 2**30 - 2 * n  # bytes two H100s (80 GiB each) leave after the float16 weights
    passed(f"at 512 tokens per text the 70B shape turns compute-bound at a batch of {_bound_batch(*_BOUND_CASES[0])} "
           f"(on one H100 or two: both speeds double), against {math.ceil(989e12 / 3.35e12)} with no cache at all. "
           f"But the {room / 1e9:.1f} GB two H100s leave after the weights hold only {int(room // (T * c))} caches "
           f"of 512 tokens ({room / 1e9:.1f}e9 / (512 x {c:,})): memory capacity caps the batch before the "
           f"roofline does. At 4,096 tokens never: each sequence's cache takes longer to read than its FLOPs take.")


# ---------------------------------------------------------------- exercise 3: the block allocator
# (block_table, length, free_blocks, B, tokens to append one after another)
_PLACE_CASES = [([], 0, [7, 2, 5, 9, 4, 0], 4, 11), ([3], 2, [6, 1, 8], 3, 6)]


def _place_right(table: list[int], length: int, free: list[int], B: int) -> tuple[int, int]:
    if length == len(table) * B:  # no block yet, or the last one full
        table.append(free.pop(0))
    return table[length // B], length % B


class _Table(list):  # type: ignore[type-arg]
    """A block table that answers a look-up past its end with -1 - index instead of raising, so that the
    check can tell which entry an answer looked up."""

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, (int, np.integer)) and i >= len(self):
            return -1 - int(i)
        return super().__getitem__(i)


def check_place_token(place_token: Callable[..., Any]) -> None:
    """Exercise 3: the paged cache's allocator step: take a block when the last is full, return
    (block, slot) of the new token; run on tokens appended one after another."""
    if not callable(place_token):
        raise ExerciseError("place_token should be a function: write it in the answer cell above.")
    for table0, length0, free0, B, n in _PLACE_CASES:
        table, free = _Table(table0), list(free0)
        want_table, want_free = list(table0), list(free0)
        for p in range(length0, length0 + n):  # p: the new token's position, = length
            call = f"place_token(block_table={list(table)}, length={p}, free_blocks={free}, B={B})"
            right = _place_right(want_table, p, want_free, B)
            before = len(table)
            try:
                got = place_token(table, p, free, B)
            except Exception as exc:
                raise ExerciseError(f"{call} raised {type(exc).__name__}: {exc}") from None
            if got is None or got is Ellipsis:
                raise ExerciseError(f"{call} returns nothing yet: return (block, slot).")
            new, need = len(table) - before, len(want_table) - before
            if new > need:
                raise ExerciseError(f"{call} took a block although the last one still had a free slot for token "
                                    f"{p}. Take a block only when length == len(block_table) * B (an "
                                    f"off-by-one?).")
            if new < need:
                raise ExerciseError(f"{call}: token {p} needed a new block (the {before} block(s) hold "
                                    f"{before * B} slots, all used) but none was taken. Take one when "
                                    f"length == len(block_table) * B, before looking the block up.")
            if list(table) != want_table:
                raise ExerciseError(f"{call} appended block {list.__getitem__(table, -1)} to the table; take the "
                                    f"first free block, free_blocks.pop(0), which is {want_table[-1]}.")
            try:
                block, slot = (int(x) for x in got)
            except (TypeError, ValueError):
                raise ExerciseError(f"{call} returned {got!r:.80}; return two whole numbers, (block, slot).") from None
            if (block, slot) == right:
                continue
            if (block, slot) == (p // B, right[1]):
                raise ExerciseError(f"{call} gave block {block}, slot {slot}: {block} = {p} // B is where the block "
                                    f"sits in block_table, not the block's number in the pool. Return the block "
                                    f"itself, block_table[{p} // B] = {right[0]}.")
            index = -1 - block if block < 0 else (want_table.index(block) if block in want_table else None)
            shown = f"block_table[{index}], slot {slot}" if index is not None else f"block {block}, slot {slot}"
            if (index, slot) == (p % B, p // B):
                raise ExerciseError(f"{call} gave {shown}: // and % are swapped. Token {p} lives in block "
                                    f"block_table[{p} // B] at slot {p} % B.")
            for d in (B - 1, B + 1):
                if d > 0 and (index, slot) == (p // d, p % d):
                    raise ExerciseError(f"{call} gave {shown}: divide by B = {B}, the slots per block, not by {d}.")
            if (index, slot) == ((p + 1) // B, (p + 1) % B):
                raise ExerciseError(f"{call} gave {shown}, the place of token {p + 1}: off by one. Counting "
                                    f"from 0, the new token's position is length = {p}.")
            raise ExerciseError(f"{call} gave {shown}; token {p} goes to block_table[{p // B}], slot "
                                f"{right[1]}.")
    passed("each token found its slot, and a block was taken from the free list exactly when the last was full.")
