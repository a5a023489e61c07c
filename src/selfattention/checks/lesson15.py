"""Checks for lesson 15 (IO-aware attention): the causal tiled loop, read through a counted slow memory; the
elements it moves; and one query tile's backward loop over the key tiles, from the stored log-sum-exp."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .. import llm
from ..llm import SlowMemory
from ._engine import (
    ExerciseError,
    check_array,
    check_value,
    learners_functions,
    not_a_reference,
    passed,
    reference_softmax,
    used_objects,
)

__all__ = ["backward_holds_more_than_tiles", "backward_ignores_L", "backward_reads_problem",
           "check_causal_elements_moved", "check_causal_flash", "check_query_tile_backward", "copies_package_loop",
           "counts_by_running", "holds_more_than_tiles", "uses_torch"]


_REFUSED = ("calls the package's sa.llm.flash_attention_io, which does what the exercise asks you to write "
            "(or to derive): write the loop yourself.")


@not_a_reference
def _refused(*args: Any, **kwargs: Any) -> None:
    # runs as the package function's code, with llm's globals: import what it needs here
    from selfattention.checks._engine import ExerciseError

    raise ExerciseError("your answer calls the package's sa.llm.flash_attention_io, which does what the exercise "
                        "asks you to write (or to derive): write the loop yourself.")


@not_a_reference
def _refuse_slow_memory(self: Any, *args: Any, **kwargs: Any) -> None:
    raise ExerciseError("your answer builds a SlowMemory and runs a loop through it to count the elements: "
                        "derive the count instead (which tiles does query tile n read?).")


@contextmanager
def _without_package_loop(*, memory: bool = False) -> Iterator[None]:
    """While an answer runs, the package's tiled loop (every reference to it: its code is swapped) and, with
    ``memory``, building a new SlowMemory raise an ExerciseError naming the shortcut."""
    code, init = llm.flash_attention_io.__code__, SlowMemory.__init__
    llm.flash_attention_io.__code__ = _refused.__code__
    if memory:
        SlowMemory.__init__ = _refuse_slow_memory  # type: ignore[method-assign]
    try:
        yield
    finally:
        llm.flash_attention_io.__code__ = code
        SlowMemory.__init__ = init  # type: ignore[method-assign]


# ------------------------------------------------------------- exercise 1: the causal tiled loop
def _flash_cases() -> list[tuple[np.ndarray, np.ndarray, np.ndarray, int]]:
    rng = np.random.default_rng(1400)
    small = (rng.normal(size=(8, 3)), rng.normal(size=(8, 3)), rng.normal(size=(8, 2)), 4)
    # scores in the thousands, the first queries most similar to keys of a later tile: exp() overflows without a
    # running maximum, and reading a masked key changes the answer a lot
    Q, K, V = rng.normal(size=(12, 4)) * 30, rng.normal(size=(12, 4)) * 30, rng.normal(size=(12, 3))
    K[8:] = Q[:4] * 0.9
    K[5] = Q[7] * 0.9  # a score of about 1,600 that query 7 may read: exp() overflows
    return [small, (Q, K, V, 4)]


def _causal(Q: np.ndarray, K: np.ndarray, V: np.ndarray, *, scale: bool = True, mask: bool = True,
            within_tiles_of: int | None = None, own_key: bool = True, local_of: int | None = None) -> np.ndarray:
    S = Q @ K.T / (np.sqrt(Q.shape[1]) if scale else 1.0)
    T = len(Q)
    allowed = np.tri(T, k=0 if own_key else -1, dtype=bool)
    if local_of:  # the tiles up to the diagonal read, each masked by np.tri(b): tile-local positions
        pos = np.arange(T)
        allowed = ((pos[None, :] // local_of) <= (pos[:, None] // local_of)) & (
            (pos[None, :] % local_of) <= (pos[:, None] % local_of))
    if not mask and within_tiles_of:  # tiles skipped, but no mask inside the diagonal tiles
        b = within_tiles_of
        allowed = (np.arange(T)[None, :] // b) <= (np.arange(T)[:, None] // b)
    return reference_softmax(np.where(allowed, S, -np.inf)) @ V


def _no_rescale(Q: np.ndarray, K: np.ndarray, V: np.ndarray, b: int) -> np.ndarray:
    """The loop with the running maximum updated but the old sum and output never multiplied by
    exp(m_old - m_new)."""
    T, d = Q.shape
    out = np.zeros((T, V.shape[1]))
    for i in range(0, T, b):
        q, rows = Q[i:i + b], np.arange(i, min(i + b, T))[:, None]
        m, total, acc = np.full((len(q), 1), -np.inf), np.zeros((len(q), 1)), np.zeros((len(q), V.shape[1]))
        for j in range(0, i + b, b):
            s = q @ K[j:j + b].T / np.sqrt(d)
            s = np.where(np.arange(j, j + len(K[j:j + b]))[None, :] <= rows, s, -np.inf)
            m = np.maximum(m, s.max(axis=1, keepdims=True))
            total = total + np.exp(s - m).sum(axis=1, keepdims=True)
            acc = acc + np.exp(s - m) @ V[j:j + b]
        out[i:i + b] = acc / total
    return out


def _mixed_frames(Q: np.ndarray, K: np.ndarray, V: np.ndarray, b: int, *, keys_local: bool) -> np.ndarray:
    """Exercise 1's output when the mask compares positions in two frames: a key's place within its tile
    against the query's place in the sequence (``keys_local``), or the other way round; key tiles up to the
    diagonal read, as asked. Rows whose every key is hidden come out NaN."""
    T, d = Q.shape
    out = np.full((T, V.shape[1]), np.nan)
    for i in range(0, T, b):
        last = min(i + b, T)
        s = Q[i:last] @ K[:last].T / np.sqrt(d)
        key = np.arange(last) % b if keys_local else np.arange(last)
        query = np.arange(i, last) if keys_local else np.arange(last - i)
        s = np.where(key[None, :] > query[:, None], -np.inf, s)
        with np.errstate(all="ignore"):
            w = np.exp(s - s.max(axis=1, keepdims=True))
            out[i:last] = (w / w.sum(axis=1, keepdims=True)) @ V[:last]
    return out


def _slipped_loop(memory: SlowMemory, b: int, *, rescale_o: bool = True, stale_max: bool = False,
                 tile_softmax: str | None = None, root: str = "d", rescale: str = "before",
                 normalise_each: bool = False, mask_after_exp: bool = False, tile_max: bool = False,
                 raw_exp: bool = False, rescale_ell: bool = True, mask: str = "after",
                 fill: float = -np.inf) -> None:
    """The causal tiled loop with one of the slips a learner makes, switched on (it refuses to run with none,
    so the package holds no answer to exercise 1): ``rescale_o`` False rescales the running
    sum but not the output; ``stale_max`` keeps the first tile's maximum; ``tile_softmax`` ("mean" or "sum")
    normalises each tile's softmax on its own; ``root`` "d_v" scales by sqrt(d_v); ``rescale`` "after"
    multiplies by exp(m - m') after the tile's terms are added, "inverse" multiplies by exp(m' - m);
    ``normalise_each`` divides o by ℓ after every tile and resets ℓ to 1; ``mask_after_exp`` takes the maximum
    over every score, masked ones included, and zeroes the masked exponentials; ``tile_max`` takes each tile's
    exponentials relative to that tile's own maximum and adds them unrescaled; ``raw_exp`` keeps no maximum
    (np.exp of the raw scores); ``rescale_ell`` False rescales o but not ℓ; ``root`` "b" scales by sqrt(b), the
    tile size; ``mask`` "before" hides the keys before each query (the mask reversed), "before_own" those
    before it and its own, "own" hides the keys after it and its own, "zero" sets the masked scores to 0 instead
    of -inf, "nan" to NaN; ``fill`` is the number masked scores are set to (-1e30 is as right as -inf)."""
    _require_slip(_slipped_loop, locals())
    T, d = memory.arrays["Q"].shape
    d_v = memory.arrays["V"].shape[1]
    scale = np.sqrt({"d_v": d_v, "b": b}.get(root, d))
    for i in range(0, T, b):
        q = memory.read("Q", i, i + b)
        rows = np.arange(i, i + len(q))[:, None]
        m, total, acc = np.full((len(q), 1), -np.inf), np.zeros((len(q), 1)), np.zeros((len(q), d_v))
        for j in range(0, rows[-1, 0] + 1, b):
            k, v = memory.read("K", j, j + b), memory.read("V", j, j + b)
            keys = np.arange(j, j + len(k))[None, :]
            hidden = {"before": keys < rows, "before_own": keys <= rows, "own": keys >= rows}.get(mask, keys > rows)
            s = np.where(hidden, {"zero": 0.0, "nan": np.nan}.get(mask, fill), q @ k.T / scale)
            if mask_after_exp:
                raw, keep = q @ k.T / scale, np.isfinite(s)
                new_m = np.maximum(m, raw.max(axis=1, keepdims=True))
                total = total * np.exp(m - new_m) + (np.exp(raw - new_m) * keep).sum(axis=1, keepdims=True)
                acc = acc * np.exp(m - new_m) + (np.exp(raw - new_m) * keep) @ v
                m = new_m
                continue
            if tile_max or raw_exp:
                e = np.exp(s - s.max(axis=1, keepdims=True)) if tile_max else np.exp(s)
                total, acc = total + e.sum(axis=1, keepdims=True), acc + e @ v
                continue
            if tile_softmax:
                e = np.exp(s - s.max(axis=1, keepdims=True))
                acc = acc + (e / e.sum(axis=1, keepdims=True)) @ v
                total = total + 1.0 if tile_softmax == "mean" else np.ones_like(total)
                continue
            new_m = s.max(axis=1, keepdims=True) if stale_max and j == 0 else (
                m if stale_max else np.maximum(m, s.max(axis=1, keepdims=True)))
            if rescale == "after":
                total = (total + np.exp(s - new_m).sum(axis=1, keepdims=True)) * np.exp(m - new_m)
                acc = (acc + np.exp(s - new_m) @ v) * np.exp(m - new_m)
                m = new_m
                continue
            factor = np.exp(new_m - m) if rescale == "inverse" else np.exp(m - new_m)
            total = (total * factor if rescale_ell else total) + np.exp(s - new_m).sum(axis=1, keepdims=True)
            acc = (acc * factor if rescale_o else acc) + np.exp(s - new_m) @ v
            if normalise_each:
                acc, total = acc / total, np.ones_like(total)
            m = new_m
        memory.write("O", acc / total, i)


def _require_slip(fn: Callable[..., Any], given: dict[str, Any]) -> None:
    """Raise ValueError when every switch of ``fn`` has its default (right) value: no slip switched on."""
    import inspect

    defaults = {name: p.default for name, p in inspect.signature(fn).parameters.items()
                if p.kind is inspect.Parameter.KEYWORD_ONLY}
    if all(given[name] == value for name, value in defaults.items()):
        raise ValueError(f"{fn.__name__} computes a slip, and none was switched on: it is no answer.")


def _slip(Q: np.ndarray, K: np.ndarray, V: np.ndarray, b: int, **switches: Any) -> np.ndarray:
    memory = SlowMemory(Q=Q, K=K, V=V)
    with np.errstate(all="ignore"):
        _slipped_loop(memory, b, **switches)
    return memory.arrays["O"]


def _pattern_problem(log: list[tuple[str, str, int, int]], T: int, b: int) -> str | None:
    """Name what is wrong with the reads and writes of the loop, or None."""
    names = {name for _, name, _, _ in log}
    if names & {"S", "P"}:
        return ("scores or weights (S or P) went through slow memory: keep each tile's scores in fast memory; "
                "only Q, K and V are read and only O is written.")
    for op, name, start, stop in log:
        if op == "read" and name in "QKV" and stop - start > b:
            return (f"{name} rows {start}..{stop - 1} were read at once: more than one tile of b = {b} rows. Read "
                    f"Q, K and V a tile at a time (memory.read(name, j, j + b)); fast memory holds only tiles.")
    q_reads = [s for op, n, s, _ in log if op == "read" and n == "Q"]
    if sorted(q_reads) != list(range(0, T, b)):
        return ("each tile of queries must be read exactly once (then kept in fast memory while the key tiles "
                f"stream past); the query tiles read start at rows {q_reads}.")
    o_writes = [(s, e) for op, n, s, e in log if op == "write" and n == "O"]
    wide = [(s, e) for s, e in o_writes if e - s > b]
    if wide:
        s, e = wide[0]
        return (f"O rows {s}..{e - 1} were written in one piece, after the loop over query tiles had built "
                f"them all: that holds all of O in fast memory. Write each query tile's b rows of o / ℓ as soon "
                f"as its last key tile has passed (memory.write('O', rows, i)), then move to the next query tile.")
    starts = [s for s, _ in o_writes]
    repeated = sorted({s for s in starts if starts.count(s) > 1})
    if repeated:
        return (f"the output tile at row {repeated[0]} was written {starts.count(repeated[0])} times, once per key "
                f"tile: o and ℓ stay in fast memory while the key tiles pass; write o / ℓ once, after the "
                f"tile's last key tile.")
    if sorted(starts) != list(range(0, T, b)):
        return ("each tile of outputs must be written exactly once, after its last key tile; the output rows "
                f"written start at {starts}.")
    k_tiles: dict[int, list[int]] = {}
    current = None
    for op, name, start, _ in log:
        if op == "read" and name == "Q":
            current = start
        elif op == "read" and name == "K" and current is not None:
            k_tiles.setdefault(current, []).append(start)
    v_reads = sum(1 for op, n, _, _ in log if op == "read" and n == "V")
    k_reads = sum(len(v) for v in k_tiles.values())
    for i in range(0, T, b):
        got = k_tiles.get(i, [])
        last = min(i + b, T) - 1
        above = [j for j in got if j > last]
        if above:
            return (f"the query tile at row {i} read the key tile at row {above[0]}, whose keys all come after its "
                    f"queries: such a tile is masked out entirely; skip it (never read it).")
        if i not in got:
            return (f"the query tile at row {i} did not read its diagonal key tile (rows {i}..{last}): it holds each "
                    f"query's own key and the keys just before it. Only tiles with every key after every query "
                    f"are skipped.")
        needed = list(range(0, i + 1, b))
        if sorted(got) != needed:
            twice = sorted({j for j in got if got.count(j) > 1})
            again = (f": the key tile at row {twice[0]} was read {got.count(twice[0])} times. Read each tile once "
                     f"and use its k and v from fast memory") if twice else ""
            return (f"the query tile at row {i} read the key tiles starting at rows {got}; it needs each of the "
                    f"tiles starting at rows {needed} once{again}.")
    if v_reads != k_reads:
        return f"K was read {k_reads} times but V {v_reads} times: each key tile needs its value tile once."
    return None


class _NoLog(list):  # type: ignore[type-arg]
    """A log that keeps nothing, so that measuring an answer's memory does not count the log's growth."""

    def append(self, item: Any) -> None:
        pass


_CAP_CASE = (1024, 8, 8)  # T, d, b: many tiles, so holding a whole row of keys is 128 times a tile


def _held(causal_flash: Callable[..., Any], T: int, d: int, b: int) -> int:
    """The most memory the answer held at once on a random (T, d) input with tiles of b, in numbers of 8
    bytes (as counted by tracemalloc)."""
    rng = np.random.default_rng(1401)
    Q, K, V = rng.normal(size=(3, T, d))
    memory = SlowMemory(Q=Q, K=K, V=V, O=np.zeros((T, d)))
    memory.log = _NoLog()
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        with _without_package_loop(), np.errstate(all="ignore"):
            causal_flash(memory, b)
        return (tracemalloc.get_traced_memory()[1] - start) // 8
    finally:
        if not was_tracing:
            tracemalloc.stop()


def _fast_memory_problem(causal_flash: Callable[..., Any]) -> str | None:
    """Run the answer on a long input and measure the most memory it held at once: name a loop that holds
    far more than its tiles, or None. Run again at half the length to tell what it held: T x T numbers (a
    causal mask built once for the whole input, e.g. np.tri(T)) quadruple when T doubles; a list of a row's
    key tiles (then one ordinary softmax) doubles."""
    T, d, b = _CAP_CASE
    tiles = 4 * b * d + b * b
    limit = 16 * tiles + 4096  # room for temporaries and Python's own objects; a whole row of keys is T d
    held = _held(causal_flash, T, d, b)
    if held <= limit:
        return None
    start = (f"on T = {T}, d = {d}, b = {b} your loop held about {held:,} numbers in fast memory at once, where "
             f"its tiles need about 4bd + b^2 = {tiles}")
    growth = held / max(_held(causal_flash, T // 2, d, b), 1)
    if growth > 3:
        return (f"{start}, and that grows as T^2 (halving T divided it by {growth:.1f}): something of T x T "
                f"size was held, such as a causal mask built once for the whole input (np.tri(T)). Fast "
                f"memory holds only tiles: build each tile's b x b mask from the positions (key position "
                f"j + c > query position i + r, with np.arange).")
    return (f"{start}: fast memory holds only the query tile, the current key and value tiles, their b x b "
            f"scores and each query's m, ℓ and o. Keep no list of key tiles (or of all a row's scores) for one "
            f"ordinary softmax at the end: update m, ℓ and o as each key tile passes.")


def _torch_compute_used(code: Any, scope: dict[str, Any]) -> bool:
    """Whether ``code`` (or a function nested in it) reaches something of PyTorch that computes: a function, a
    class or a tensor, by a global name, an import or an attribute chain such as ``torch.nn.functional.softmax``.
    A bare ``import torch`` and constants such as ``torch.inf`` compute nothing and are not counted."""
    import dis
    import importlib
    import types

    def from_torch(obj: Any) -> bool:
        name = getattr(obj, "__name__", None) if isinstance(obj, types.ModuleType) else getattr(
            type(obj), "__module__", None) if not callable(obj) else getattr(obj, "__module__", None)
        return isinstance(name, str) and (name == "torch" or name.startswith("torch."))

    def computes(obj: Any) -> bool:
        return not isinstance(obj, (types.ModuleType, int, float, complex, str, type(None)))

    local: dict[str, Any] = {}
    top: Any = None          # the PyTorch object the last instruction left, when it left one
    imported: Any = None     # the module of the last import statement
    for ins in dis.get_instructions(code):
        op, arg = ins.opname, ins.argval
        if op == "IMPORT_NAME":
            root = str(arg).split(".")[0]
            imported = top = importlib.import_module(root) if root == "torch" else None
        elif op == "IMPORT_FROM":
            base = top if isinstance(top, types.ModuleType) and hasattr(top, arg) else imported
            top = getattr(base, arg, None) if base is not None else None
            if top is not None and computes(top):
                return True
        elif op in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE"):
            obj = local.get(arg, scope.get(arg))
            top = obj if obj is not None and from_torch(obj) else None
            if top is not None and computes(top):
                return True
        elif op in ("LOAD_ATTR", "LOAD_METHOD") and top is not None:
            top = getattr(top, arg, None)
            if top is not None and computes(top):
                return True
        elif op in ("STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL"):
            if top is not None:
                local[arg] = top
            else:
                local.pop(arg, None)
            top = None
        elif op not in ("SWAP", "POP_TOP", "RESUME", "CACHE", "EXTENDED_ARG", "NOP"):
            top = None
    return any(_torch_compute_used(c, scope) for c in code.co_consts if hasattr(c, "co_code"))


def uses_torch(fn: Callable[..., Any]) -> bool:
    """Whether ``fn``, or a function of the learner's that it reaches, computes with PyTorch (a function or a
    tensor of it, such as ``F.softmax`` or ``torch.tensor``); importing it, or a constant such as ``torch.inf``,
    does not count. Exercise 1's fast memory is measured with tracemalloc, which sees NumPy's allocations and
    not PyTorch's, so the loop is asked for in NumPy."""
    found = False
    for f in learners_functions(fn):
        code = getattr(f, "__code__", None)
        if code is not None:
            scope = dict(getattr(f, "__globals__", {}))
            scope.update(used_objects(f))
            found = found or _torch_compute_used(code, scope)
    return found


def holds_more_than_tiles(causal_flash: Callable[..., Any]) -> bool:
    """Whether an answer to Exercise 1 keeps more than its tiles in fast memory (the check's measurement on
    T = 1,024), or is written with PyTorch, whose memory the measurement cannot see: the hidden test refuses
    both, as the check does."""
    return uses_torch(causal_flash) or _fast_memory_problem(causal_flash) is not None


def _own_key_problem(out: np.ndarray, Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> str | None:
    """Name a mask that also hides each query's own key (>= instead of >): query 0 then has no key left."""
    bad = ~np.isfinite(out).all(axis=1)
    if not bad.any():
        return None
    with np.errstate(all="ignore"):
        strict = _causal(Q, K, V, own_key=False)
    if np.array_equal(bad, ~np.isfinite(strict).all(axis=1)) and np.allclose(out[~bad], strict[~bad], atol=1e-6):
        return ("row 0 of O is NaN: every key of query 0 was masked, so its softmax divides 0 by 0. A query "
                "reads its own key: set to -inf only the keys after it (key position > query position), "
                "not key position >= query position.")
    return None


_RESCALE_SLIPS = {
    "the old ℓ and o were multiplied by exp(m - m') after this tile's terms were added, so the tile's own "
    "terms were shrunk too (and the first tile's, where m = -inf, became 0): rescale the old ℓ and o first, "
    "then add the tile's e^(s - m').": {"rescale": "after"},
    "every row of O is NaN, as when the old ℓ and o are multiplied by exp(m' - m), the inverse of the "
    "rescale: at the first tile m = -inf makes that factor inf, and inf times the empty sum 0 is NaN. When "
    "the maximum rises from m to m', terms taken relative to m must shrink: multiply by exp(m - m'), at "
    "most 1.":
        {"rescale": "inverse"},
    "the running maximum m included the scores of masked keys (the mask was applied after np.exp, by zeroing "
    "terms): a masked key's large score makes every kept e^(s - m) underflow to 0, and ℓ = 0 gives NaN. Set "
    "the masked scores to -inf before taking the maximum.": {"mask_after_exp": True},
    "o was divided by ℓ after every tile and ℓ then set to 1: the next tile's terms are then added to a "
    "normalised o as if the earlier keys' weights summed to 1 next to them. Keep ℓ and o unnormalised across "
    "the tiles and divide o by ℓ once, at the end.": {"normalise_each": True},
    "np.exp was taken of the raw scores, with no running maximum: a score in the hundreds overflows to inf "
    "and inf / inf is NaN. Keep a running maximum m per query (m' = max(m, this tile's largest score)), take "
    "e^(s - m') and rescale the old ℓ and o by exp(m - m') when m rises.": {"raw_exp": True},
    "each key tile's exponentials were taken relative to that tile's own maximum and added to ℓ and o as "
    "they are: terms measured from different maxima cannot be added. Keep one running maximum m per query "
    "and rescale the old ℓ and o by exp(m - m') whenever a tile raises it.": {"tile_max": True},
}


def _nan_rows(out: np.ndarray) -> str:
    rows = np.flatnonzero(~np.isfinite(out).all(axis=1))
    return ", ".join(str(r) for r in rows[:6]) + (", ..." if len(rows) > 6 else "")


def _mask_problem(out: np.ndarray, Q: np.ndarray, K: np.ndarray, V: np.ndarray, b: int) -> str | None:
    """Name a mask that hides the wrong keys (the keys before each query, with or without its own) or sets
    them to 0 instead of -inf, from the output the loop wrote; None when the output is none of these."""
    right = _causal(Q, K, V)
    for switch, side in (("before", "the keys before each query, key position < query position"),
                         ("before_own", "each query's own key and those before it, key position <= query "
                                        "position")):
        slip = _slip(Q, K, V, b, mask=switch)
        if np.isfinite(out).all() or not np.allclose(out, slip, equal_nan=True):
            continue
        rows = _nan_rows(out)
        return (f"rows {rows} of O are NaN: your mask hid {side}, and kept "
                f"the keys after it: the reverse of the causal mask. For those queries every score of the first key "
                f"tile they read is -inf, so m stays -inf and exp(s - m) = exp(-inf - (-inf)) is NaN. Hide the "
                f"keys after the query: key position > query position.")
    for switch, side in (("own", "each query's own key too, key position >= query position"),
                         ("before", "the keys before each query, key position < query position, and kept "
                                    "those after it"),
                         ("before_own", "each query's own key and those before it, key position <= query "
                                        "position, and kept those after it")):
        slip = _slip(Q, K, V, b, mask=switch, fill=-1e30)
        if np.isfinite(out).all() and np.allclose(out, slip):
            return (f"your mask hid {side}. A large negative score such as -1e30 works as well as -inf here, "
                    f"but it hid the wrong keys: a query whose every key in a tile is hidden then gives those "
                    f"keys equal weights instead of none. Hide only the keys after the query: key position > "
                    f"query position.")
    slip = _slip(Q, K, V, b, mask="nan")
    if not np.isfinite(out).all() and np.allclose(out, slip, equal_nan=True):
        return (f"rows {_nan_rows(out)} of O are NaN: the masked scores were set to NaN, and NaN spreads through "
                f"the maximum, np.exp and the sums into every row with a masked key. Set them to -inf, whose "
                f"e^(s - m) is exactly 0.")
    slip = _slip(Q, K, V, b, mask="zero")
    if not np.allclose(slip, right) and np.allclose(out, slip):
        return ("the masked scores were set to 0, not -inf: e^(0 - m) is not 0, so the keys after each query "
                "still get weight (a score of 0 is an ordinary score). Set them to -inf, so that their "
                "e^(s - m) is exactly 0.")
    return None


def _rescale_problem(out: np.ndarray, Q: np.ndarray, K: np.ndarray, V: np.ndarray, b: int) -> str | None:
    """Name a slip in the order or direction of the online softmax's rescale (NaN where it gives NaN), or
    None."""
    right = _causal(Q, K, V)
    for text, switches in _RESCALE_SLIPS.items():
        slip = _slip(Q, K, V, b, **switches)
        if not np.allclose(slip, right, equal_nan=True) and np.allclose(out, slip, equal_nan=True):
            return text
    return None


def _runs_when_square(causal_flash: Callable[..., Any], Q: np.ndarray, K: np.ndarray, b: int) -> bool:
    """Whether the answer runs without error when V is as wide as Q (d_v = d)."""
    V = np.random.default_rng(1402).normal(size=Q.shape)
    try:
        with _without_package_loop(), np.errstate(all="ignore"):
            causal_flash(SlowMemory(Q=Q, K=K, V=V), b)
    except Exception:
        return False
    return True


def _skipped_diagonal(log: list[tuple[str, str, int, int]], b: int) -> int | None:
    """The first query tile that read every key tile before its diagonal one but not the diagonal one
    (the loop ``range(0, i, b)``), or None: why a loop that crashed before its checks crashed."""
    k_tiles: dict[int, list[int]] = {}
    current = None
    for op, name, start, _ in log:
        if op == "read" and name == "Q":
            current = start
            k_tiles.setdefault(start, [])
        elif op == "read" and name == "K" and current is not None:
            k_tiles[current].append(start)
    for i, got in k_tiles.items():
        if got == list(range(0, i, b)):
            return i
    return None


class _Tracked(np.ndarray):
    """An array of Q, K or V as memory.arrays hands it out in the check: its shape may be read freely, but
    indexing it or computing with it is noted as a bypass of memory.read."""

    def __getitem__(self, key: Any) -> Any:
        _GuardedArrays.bypassed = True
        return np.asarray(super().__getitem__(key))

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        _GuardedArrays.bypassed = True
        plain = [np.asarray(x) if isinstance(x, _Tracked) else x for x in inputs]
        return getattr(ufunc, method)(*plain, **kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        # np.zeros_like(memory.arrays["K"]) and the like read only the shape: allowed, and a plain array back
        if func not in _SHAPE_ONLY:
            _GuardedArrays.bypassed = True
        args = tuple(np.asarray(x) if isinstance(x, _Tracked) else x for x in args)
        kwargs = {k: np.asarray(x) if isinstance(x, _Tracked) else x for k, x in kwargs.items()}
        return func(*args, **kwargs)


_SHAPE_ONLY = {np.zeros_like, np.ones_like, np.empty_like, np.full_like, np.shape, np.ndim, np.size}


class _GuardedArrays(dict):  # type: ignore[type-arg]
    """memory.arrays for the check: Q, K and V looked up directly (not through memory.read) come back as
    arrays that note any use beyond their shape, so that a loop bypassing memory.read is told so."""

    bypassed = False

    def __getitem__(self, name: str) -> Any:
        value = dict.__getitem__(self, name)
        return value.view(_Tracked) if name in ("Q", "K", "V") else value


class _GuardedMemory(SlowMemory):
    def __init__(self, **arrays: Any) -> None:
        super().__init__(**arrays)
        _GuardedArrays.bypassed = False
        self.arrays = _GuardedArrays(self.arrays)

    def read(self, name: str, start: int = 0, stop: int | None = None) -> np.ndarray:
        if name not in self.arrays:
            raise KeyError(f"slow memory holds {sorted(self.arrays)}, not {name!r}")
        rows = dict.__getitem__(self.arrays, name)[start:stop].copy()
        self.moved += rows.size
        self.log.append(("read", name, start, start + rows.shape[0]))
        return rows


def copies_package_loop(fn: Callable[..., Any]) -> bool:
    """Whether ``fn``, or a function of the learner's that it reaches, is the package's flash_attention_io
    pasted in: its docstring, or its compiled code."""
    ref = llm.flash_attention_io.__code__
    doc = llm.flash_attention_io.__doc__
    for f in learners_functions(fn):
        code = getattr(f, "__code__", None)
        if code is None:
            continue
        if code.co_code == ref.co_code or (doc and doc in code.co_consts):
            return True
    return False


def check_causal_flash(causal_flash: Callable[..., Any]) -> None:
    """Exercise 1: causal attention tile by tile through a counted slow memory: the output, and the reads
    and writes (each query tile once, its key/value tiles up to the diagonal, each output tile once)."""
    if not callable(causal_flash):
        raise ExerciseError("causal_flash should be a function: write it in the answer cell above.")
    if getattr(causal_flash, "__code__", None) is llm.flash_attention_io.__code__:
        raise ExerciseError(f"causal_flash is the package's loop: your answer {_REFUSED}")
    if copies_package_loop(causal_flash):
        raise ExerciseError("causal_flash is a copy of the package's sa.llm.flash_attention_io, which does what "
                            "the exercise asks you to write: write the loop yourself.")
    problem = _global_arrays_problem(
        causal_flash, "k = memory.read('K', j, j + b) and v = memory.read('V', j, j + b), then the scores s "
        "from q and k")
    if problem:
        raise ExerciseError(problem)
    if uses_torch(causal_flash):
        raise ExerciseError(
            "causal_flash uses PyTorch: write the loop in NumPy. The check measures what the "
            "loop holds in fast memory through NumPy's allocations and cannot see PyTorch's, so a PyTorch "
            "loop could keep all of a row's keys unseen.")
    for Q, K, V, b in _flash_cases():
        T = len(Q)
        what = f"T = {T}, d = {Q.shape[1]}, b = {b}"
        memory = _GuardedMemory(Q=Q, K=K, V=V)
        try:
            with _without_package_loop(), np.errstate(all="ignore"):
                causal_flash(memory, b)
        except ExerciseError:
            raise
        except Exception as exc:
            if V.shape[1] != Q.shape[1] and _runs_when_square(causal_flash, Q, K, b):
                raise ExerciseError(
                    f"causal_flash raised {type(exc).__name__} on {what}, d_v = {V.shape[1]}, but runs when the "
                    f"values are as wide as the queries: something sized with d (Q's width) holds values or "
                    f"outputs, such as acc = np.zeros((len(q), d)). Outputs have V's width, d_v = "
                    f"memory.arrays['V'].shape[1].") from None
            if isinstance(exc, NameError) and not any(name in "KV" for _, name, _, _ in memory.log):
                raise ExerciseError(
                    f"causal_flash raised NameError on {what} before reading any key tile ({exc}): the start of "
                    f"the key-tile loop is still to write. Skip a tile the mask hides entirely, else read k and "
                    f"v, compute the scores s and mask them.") from None
            if isinstance(exc, NameError) and getattr(exc, "name", None) in ("k", "v", "s"):
                line = {"k": "k = memory.read('K', j, j + b)", "v": "v = memory.read('V', j, j + b)",
                        "s": "s = q @ k.T / np.sqrt(d), then masked"}[exc.name]
                raise ExerciseError(
                    f"causal_flash raised NameError on {what}: {exc.name} is not defined. The given lines after "
                    f"your answer use this tile's k, v and scores s: your lines assign all three ({line}).") from None
            i = _skipped_diagonal(memory.log, b)
            if i is not None:
                raise ExerciseError(
                    f"causal_flash raised {type(exc).__name__} on {what} after the query tile at row {i} did not "
                    f"read its diagonal key tile (rows {i}..{min(i + b, T) - 1}): it holds each query's own key "
                    f"(query 0 has no other), so skipping it leaves nothing to attend to. Only tiles with every "
                    f"key after every query are skipped: let j run up to i.") from None
            raise ExerciseError(f"causal_flash raised {type(exc).__name__} on {what}: {exc}") from None
        if _GuardedArrays.bypassed:
            raise ExerciseError(f"your loop takes rows of Q, K or V from memory.arrays directly, bypassing "
                                f"memory.read, so they are never counted as moved (on {what}): read every tile "
                                f"with memory.read(name, j, j + b); use memory.arrays only for shapes.")
        if {"S", "P"} & set(memory.arrays):
            raise ExerciseError(f"{_pattern_problem(memory.log, T, b)} (on {what})")
        if "O" not in memory.arrays:
            raise ExerciseError(f"nothing was written to O (on {what}): write each tile's output with "
                                f"memory.write('O', rows, i).")
        problem = _pattern_problem(memory.log, T, b) or _rescale_problem(memory.arrays["O"][:T], Q, K, V, b) or (
            _own_key_problem(memory.arrays["O"][:T], Q, K, V)) or _mask_problem(memory.arrays["O"][:T], Q, K, V, b)
        if problem:
            raise ExerciseError(f"{problem} (on {what})")
        out, stale = memory.arrays["O"][:T], _slip(Q, K, V, b, stale_max=True)
        if not np.allclose(stale, _causal(Q, K, V)) and np.allclose(out, stale, equal_nan=True):
            raise ExerciseError(
                f"the output O (on {what}) is what a stale maximum gives: m was taken from the first key "
                f"tile and never raised, so a later, larger score overflows exp(s - m). Update m' = max(m, "
                f"this tile's largest score) for every tile, and rescale ℓ and o by exp(m - m').")
        mistakes = {
            "inside a diagonal tile the keys after each query were not masked: set those scores to -inf "
            "(key position > query position).": _causal(Q, K, V, mask=False, within_tiles_of=b),
            "the scores are not scaled: divide them by sqrt(d_k).": _causal(Q, K, V, scale=False),
            "the scores were divided by sqrt(d_v), the width of the values: divide by sqrt(d), the width of "
            "the queries and keys (memory.arrays['Q'].shape[1]).": _slip(Q, K, V, b, root="d_v"),
            "the scores were divided by sqrt(b), the tile size: the scale belongs to the width of q and k, so "
            "divide by sqrt(d) (memory.arrays['Q'].shape[1]), whatever the tiles.": _slip(Q, K, V, b, root="b"),
            "the mask compares positions within the tile (the same np.tri(b) on every tile), so it also hides "
            "keys of earlier tiles that every query of this tile may read. Compare positions in the whole "
            "sequence: key j + c is masked when j + c > i + r.": _causal(Q, K, V, local_of=b),
            "the mask compares a key's place within its tile (0..b-1) with the query's place in the whole "
            "sequence: both sides must count from the same start. Key j + c is masked when j + c > i + r.":
                _mixed_frames(Q, K, V, b, keys_local=True),
            "the mask compares a key's place in the whole sequence with the query's place within its tile "
            "(0..b-1): both sides must count from the same start. Key j + c is masked when j + c > i + r.":
                _mixed_frames(Q, K, V, b, keys_local=False),
            "when a tile raises a row's maximum, the running sum and output must be multiplied by "
            "exp(m_old - m_new) before the new tile is added; here they were not.": _no_rescale(Q, K, V, b),
            "the running sum ℓ was rescaled by exp(m - m') when the maximum rose, but the output o was not: "
            "o' = o exp(m - m') + the tile's e^(s - m') v.": _slip(Q, K, V, b, rescale_o=False),
            "the output o was rescaled by exp(m - m') when the maximum rose, but the running sum ℓ was not: "
            "ℓ' = ℓ exp(m - m') + the tile's sum of e^(s - m').": _slip(Q, K, V, b, rescale_ell=False),
            "the scores were multiplied by sqrt(d): divide them, S = q k^T / sqrt(d).": _causal(
                Q * Q.shape[1], K, V),
            "the scores were divided by d, not by sqrt(d): S = q k^T / sqrt(d).": _causal(Q * np.sqrt(
                1 / np.sqrt(Q.shape[1])), K * np.sqrt(1 / np.sqrt(Q.shape[1])), V),
            "each key tile's softmax was normalised on its own (divided by that tile's sum) and the tiles "
            "averaged: a query's weights are one softmax over all its keys. Keep the unnormalised sums ℓ "
            "and o across the tiles and divide o by ℓ once, at the end.": _slip(Q, K, V, b, tile_softmax="mean"),
            "each key tile's softmax was normalised on its own (divided by that tile's sum) and the tiles "
            "added: a query's weights are one softmax over all its keys. Keep the unnormalised sums ℓ and o "
            "across the tiles and divide o by ℓ once, at the end.": _slip(Q, K, V, b, tile_softmax="sum"),
        }
        out = memory.arrays["O"][:T]
        if not np.isfinite(out).all() and not any(np.allclose(out, w, equal_nan=True) for w in mistakes.values()):
            raise ExerciseError(
                f"rows {_nan_rows(out)} of O are NaN or infinite (on {what}). In this loop that comes from a key "
                f"tile where every score of a query is -inf while its m is still -inf (exp(-inf - (-inf)) is "
                f"NaN), or from ℓ = 0 at the end: check which keys your mask sets to -inf. The causal mask hides "
                f"only keys after the query (key position > query position), so key 0, in the first tile each "
                f"query reads, is never hidden.")
        check_array(out, _causal(Q, K, V), f"the output O (on {what})", mistakes=mistakes)
    problem = _fast_memory_problem(causal_flash)
    if problem:
        raise ExerciseError(problem)
    passed("exact causal attention, each query tile read once, only the key tiles up to the diagonal read, "
           "each output tile written once, and no more than the tiles held in fast memory.")


# ------------------------------------------------------- exercise 2: elements moved, predicted
_MOVED_CASES = [(1024, 64, 128), (4096, 128, 64), (96, 8, 32), (2**20, 128, 64)]
_STEP_LIMIT = 1_000_000  # Python steps a derivation may take: a sum over 16,384 query tiles fits, a simulation not


class _TooManySteps(Exception):
    pass


def call_within_steps(fn: Callable[..., Any], *args: Any, limit: int = _STEP_LIMIT) -> Any:
    """``fn(*args)``, stopped with _TooManySteps once it has run ``limit`` lines of Python: a count derived
    (a formula, or a sum over the query tiles) runs in a few; one obtained by running a loop, or a counter,
    through every tile of T = 1,048,576 takes hundreds of millions."""
    import sys

    steps = 0

    def trace(frame: Any, event: str, arg: Any) -> Any:
        nonlocal steps
        steps += 1
        if steps > limit:
            raise _TooManySteps
        return trace

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        return fn(*args)
    finally:
        sys.settrace(previous)


def counts_by_running(causal_elements_moved: Callable[..., Any]) -> bool:
    """For exercise 2's hidden test: whether the answer, on T = 1,048,576, d = 128, b = 64, runs past the
    step limit (it simulates the loop instead of deriving the count)."""
    try:
        with _without_package_loop(memory=True):
            call_within_steps(causal_elements_moved, 2**20, 128, 64)
    except _TooManySteps:
        return True
    except ExerciseError:
        return True
    return False


def _fitted_count_problem(causal_elements_moved: Callable[..., Any]) -> str:
    """Fit the answer, on three sizes, to a T d + c T^2 d / b and say which term is off; if it is not of
    that form, say so. The right count has a = 3, c = 1."""
    sizes = [(1024, 64, 128), (512, 16, 32), (96, 8, 32), (2048, 8, 64)]
    try:
        got = np.array([float(causal_elements_moved(T, d, b)) for T, d, b in sizes])
    except Exception:
        got = np.full(len(sizes), np.nan)
    basis = np.array([[T * d, T * T * d / b] for T, d, b in sizes])
    if np.isfinite(got).all():
        (a, c), *_ = np.linalg.lstsq(basis, got, rcond=None)
        a, c = round(a, 6) + 0.0, round(c, 6) + 0.0
        if np.allclose(basis @ (a, c), got, rtol=1e-9):
            parts = [f"your counts follow {a:g} T d + {c:g} T^2 d / b on four sizes."]
            if not np.isclose(c, 1):
                parts.append("Its T^2 d / b term is off: query tile n (from 0) reads key/value tiles 0..n, "
                             "2 b d numbers each; sum that over the T/b query tiles (the sum has a T d part "
                             "too).")
            else:
                parts.append("Its T^2 d / b term is right, its T d term is not: add the T d part of the "
                             "key/value tiles' sum, Q read once and O written once.")
            return " ".join(parts)
    return ("your counts are not of the form a T d + c T^2 d / b on four sizes, as a count of tiles is. Derive "
            "it: query tile n reads key/value tiles 0..n, 2 b d numbers each; add Q read once and O written "
            "once.")


def _short_message(causal_elements_moved: Callable[..., Any], short: int) -> str:
    """The message for a count ``short`` T d short of the right one (1 or 2). Several slips give each when T is
    a multiple of b; on T = 100, b = 32 (N = T // b = 3, a part tile left over) they differ, so an answer
    written with N = T // b tells which it made, and the message names that one. One written with T/b cannot
    tell: the message then names what is observed, the missing T d, and how to get the slip named."""
    T, d, b = 100, 8, 32
    N = T // b
    half = ("that counts N^2/2 of the N^2 key/value tiles (N = T/b, the number of query tiles): query tile n "
            "reads tiles 0..n, n + 1 of them, its diagonal tile in full, which is more than half")
    slips = {
        1: {2 * T * d + b * d * N * N: f"{half}.",
            T * d + b * d * N * (N + 1): "O's write (or Q's read) is missing: besides the key/value tiles, Q is "
                                         "read once and O is written once, T d numbers each."},
        2: {2 * T * d + b * d * N * (N - 1): "that leaves out the diagonal tiles: query tile n reads key/value "
                                             "tiles 0..n, n + 1 of them, its diagonal tile included (the mask "
                                             "hides only part of it).",
            b * d * N * (N + 1): "Q's read and O's write are both missing: besides the key/value tiles, Q is read "
                                 "once and O is written once, T d numbers each.",
            T * d + b * d * N * N: "that counts half of the N^2 tiles (N^2/2, N = T/b) and leaves out O's write: "
                                   "query tile n reads key/value tiles 0..n, its diagonal tile in full, and O is "
                                   "written once (T d numbers)."},
    }[short]
    try:
        with _without_package_loop(memory=True), np.errstate(all="ignore"):
            got = float(call_within_steps(causal_elements_moved, T, d, b))
    except Exception:
        got = float("nan")
    for value, text in slips.items():
        if np.isclose(got, value):
            return text
    what = "T d" if short == 1 else "2 T d"
    return (f"your count is {what} short: {'one T x d array' if short == 1 else 'two T x d arrays'} of "
            f"numbers too few. Written with T/b, the count cannot show where they went missing; write "
            f"N = T // b for the number of query tiles and run this check again to have the slip named.")


def check_causal_elements_moved(causal_elements_moved: Callable[..., Any]) -> None:
    """Exercise 2: the elements the causal tiled loop moves, 3 T d + T^2 d / b (T a multiple of b)."""
    if not callable(causal_elements_moved):
        raise ExerciseError("causal_elements_moved should be a function: write it in the answer cell above.")
    short_by_td, short_by_2td = _short_message(causal_elements_moved, 1), _short_message(causal_elements_moved, 2)
    for T, d, b in _MOVED_CASES:
        try:
            with _without_package_loop(memory=True):
                got = call_within_steps(causal_elements_moved, T, d, b)
        except ExerciseError:
            raise
        except _TooManySteps:
            raise ExerciseError(
                f"causal_elements_moved({T:,}, {d}, {b}) ran more than {_STEP_LIMIT:,} steps of Python and was "
                f"stopped: it counts by running through the tiles (a loop over every key tile of every query "
                f"tile, or a counter run through a loop), which at this size takes hundreds of millions. Derive "
                f"the count: which key tiles does query tile n read? (A sum over the T/b query tiles is fine.)"
            ) from None
        except Exception as exc:
            raise ExerciseError(f"causal_elements_moved({T}, {d}, {b}) raised {type(exc).__name__}: {exc}") from None
        if np.ndim(got) != 0 or isinstance(got, np.ndarray):
            raise ExerciseError(f"causal_elements_moved({T}, {d}, {b}) returned a {type(got).__name__} of shape "
                                f"{np.shape(got)}: return one number (a float or an int, as float(...) gives), not an "
                                f"array or list.")
        N = T // b  # query tiles; the messages spell it out, as the lesson does not name it
        hints = {
            "that is the count of the loop without the mask (every key tile for every query tile, "
            "2 T d + 2 T^2 d / b); the causal loop reads only the tiles up to the diagonal.": 2 * T * d + 2 * T**2 * d / b,
            short_by_2td: T * d + T**2 * d / b,
            "only the keys are counted: every key tile read comes with its value tile, 2 b d numbers in all.":
                2 * T * d + b * d * N * (N + 1) / 2,
            short_by_td: 2 * T * d + T**2 * d / b,
            "that counts (N + 1)(N + 2)/2 key/value tiles (N = T/b, the number of query tiles), one row of tiles "
            "too many: query tile n, for n = 0 .. N - 1, reads key tiles 0..n, so N(N + 1)/2 tiles in all.":
                2 * T * d + 2 * b * d * (N + 1) * (N + 2) / 2,
            "that counts the keys but not the values, and each b x b tile of scores as moved: every key tile read comes with "
            "its value tile (2 b d numbers), and the scores stay in fast memory; only Q, K, V and O cross.":
                2 * T * d + (b * d + b * b) * N * (N + 1) / 2,
            "that is standard attention's count (S and P through slow memory), not the tiled loop's.":
                4 * T * d + 4 * T**2,
            "that reads the query tile again for every key/value tile: it is read once and stays in fast "
            "memory while its key tiles stream past (T d numbers for Q in all).": T * d + 3 * b * d * N * (N + 1) / 2,
            "that counts each b x b tile of scores as moved: the scores stay in fast memory; only Q, K, V "
            "and O cross.": 3 * T * d + T**2 * d / b + b * b * N * (N + 1) / 2,
            "that counts each b x b tile of scores as written and read: the scores stay in fast memory; only "
            "Q, K, V and O cross.": 3 * T * d + T**2 * d / b + 2 * b * b * N * (N + 1) / 2,
            "that counts only the keys and leaves out the diagonal tiles: each key tile comes with its value "
            "tile (2 b d numbers), and query tile n reads key tiles 0..n, n + 1 of them.":
                2 * T * d + b * d * N * (N - 1) / 2,
        }
        right, tiles = 3 * T * d + T**2 * d / b, N * (N + 1) / 2
        stats = ("m and ℓ are counted as moved: they are b numbers each per query tile, kept in fast memory "
                 "beside the tile's o from its first key tile to its last, and never cross to slow memory. "
                 "Only Q, K, V and O cross.")
        hints.update({
            f"{stats} (Here each query's m and ℓ were written once, 2 T numbers.)": right + 2 * T,
            f"{stats} (Here each query's m and ℓ were read and written once, 4 T numbers.)": right + 4 * T,
            f"{stats} (Here they were written after every key tile, 2 b numbers per tile.)": right + 2 * b * tiles,
            f"{stats} (Here they were read and written at every key tile, 4 b numbers per tile.)":
                right + 4 * b * tiles,
            "that adds T, one number per query (its m, ℓ or L) counted as moved: exercise 1's loop keeps those "
            "in fast memory and writes only O.": right + T,
            "O is counted as read once too: the output tile is built in fast memory and only written, once, "
            "after its last key tile (T d numbers for O, not 2 T d).": right + T * d,
            "O is counted as read and written at every key tile, as if o were accumulated in slow memory: o "
            "stays in fast memory while the key tiles pass and is written once (T d numbers for O).":
                T * d + 4 * b * d * tiles,
        })
        try:
            check_value(got, right, f"causal_elements_moved({T}, {d}, {b})", hints=hints)
        except ExerciseError as err:
            if "Recheck your working" not in str(err):
                raise
            raise ExerciseError(f"causal_elements_moved({T}, {d}, {b}) = {float(got):.4g} is not right yet: "
                                + _fitted_count_problem(causal_elements_moved)) from None
    passed(f"3 T d + T^2 d / b: for T = 4,096, d = 128, b = 64 that is {3 * 4096 * 128 + 4096**2 * 128 // 64:,} "
           f"elements, against {2 * 4096 * 128 + 2 * 4096**2 * 128 // 64:,} without the mask.")


# --------------------------------------- exercise 3: one query tile's backward loop over key tiles
def _backward_case(seed: int, T: int, scale: float) -> dict[str, Any]:
    """Full attention on a random (T, d = 4, d_v = 3) input, differentiated by PyTorch's autograd: Q, K, V, O,
    the stored L, a random dO, and autograd's dS (the gradient of the scaled scores), dQ, dK, dV."""
    import torch

    rng = np.random.default_rng(seed)
    Q, K = rng.normal(size=(2, T, 4)) * scale
    V, dO = rng.normal(size=(2, T, 3))
    q, k, v = (torch.tensor(a, requires_grad=True) for a in (Q, K, V))
    S = q @ k.T / 2.0
    S.retain_grad()
    O = torch.softmax(S, dim=1) @ v
    O.backward(torch.tensor(dO))
    return {"Q": Q, "K": K, "V": V, "O": O.detach().numpy(), "dO": dO,
            "L": torch.logsumexp(S, dim=1).detach().numpy(), "dS": S.grad.numpy(), "dQ": q.grad.numpy(),
            "dK": k.grad.numpy(), "dV": v.grad.numpy()}


def _backward_cases() -> list[tuple[dict[str, Any], int, int]]:
    """(case, query tile rows, key tile rows b): square tiles first (so a wrong axis gives numbers, not an
    error), then scores in the hundreds and tiles that are not square."""
    return [(_backward_case(1500, 8, 1.5), 4, 4), (_backward_case(1501, 12, 12.0), 3, 4)]


def _right_query_tile(q: np.ndarray, K: np.ndarray, V: np.ndarray, L: np.ndarray, O: np.ndarray,
                      dO: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One query tile's gradients from whole matrices (no tiles): (dq, dK share, dV share)."""
    d = q.shape[1]
    P = np.exp(q @ K.T / np.sqrt(d) - L[:, None])
    dS = P * (dO @ V.T - (dO * O).sum(axis=1)[:, None])
    return dS @ K / np.sqrt(d), dS.T @ q / np.sqrt(d), P.T @ dO


def _slipped_query_tile(q: np.ndarray, K: np.ndarray, V: np.ndarray, L: np.ndarray, O: np.ndarray, dO: np.ndarray,
                b: int, *, scale: bool = True, from_L: bool = True, L_axis: int = 0, transpose: bool = True,
                D: str = "rows", D_axis: int = 0, dS_scaled: bool = False, grad_scale: str = "d",
                accumulate: bool = True, exp_P: bool = True, dS_P: bool = True,
                dK_from: str = "dS", dq_scaled: bool = True, dV_from: str = "P",
                L_sign: int = -1, dK_scaled: bool = True,
                dV_scaled: bool = False, L_use: str = "exponent") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One query tile's backward loop over the key tiles: (dq, dK share, dV share), with one of the slips a
    learner makes switched on (it refuses to run with none)."""
    _require_slip(_slipped_query_tile, locals())
    d, d_v = q.shape[1], V.shape[1]
    root = {"d": np.sqrt(d), "d_v": np.sqrt(d_v), "none": 1.0}[grad_scale]
    dq, dK, dV = np.zeros_like(q), np.zeros_like(K), np.zeros_like(V)
    Dv = (dO * O).sum(axis=1)
    for j in range(0, len(K), b):
        k, v = K[j:j + b], V[j:j + b]
        S = q @ k.T / (np.sqrt(d) if scale else 1.0)
        if from_L:
            P = np.exp(S + L_sign * (L[:, None] if L_axis == 0 else L[None, :]))
        else:
            P = reference_softmax(S)
        if not exp_P:
            P = S - L[:, None]
        if L_use == "tile_max":  # e^(S - this tile's row maxima): never normalised
            P = np.exp(S - S.max(axis=1, keepdims=True))
        elif L_use != "exponent":  # "divide": e^S / L; "none": e^S
            P = np.exp(S) / (L[:, None] if L_use == "divide" else 1.0)
        dV[j:j + b] = P.T @ dO if transpose else P @ dO
        dP = dO @ v.T
        if D == "none":
            dS = P * dP
        else:
            Di = {"rows": Dv, "scalar": np.full(len(q), Dv.sum()), "dO": dO.sum(axis=1),
                  "dP": dP.sum(axis=1), "dP0": dP.sum(axis=0), "mean": (dO * O).mean(axis=1)}.get(
                D, (P * dP).sum(axis=1))
            dS = (P if dS_P else 1.0) * (dP - (Di[:, None] if D_axis == 0 else Di[None, :]))
        if dS_scaled:
            dS = dS / np.sqrt(d)
        if dV_from == "dS":
            dV[j:j + b] = dS.T @ dO
        if dV_scaled:
            dV[j:j + b] /= np.sqrt(d)
        dq = (dq if accumulate else 0.0) + dS @ k / (root if dq_scaled else 1.0)
        dK[j:j + b] = (dS if dK_from == "dS" else P).T @ q / (root if dK_scaled else 1.0)
    return dq, dK, dV


_SQUARE_ONLY = {"L_axis", "no_transpose", "D_axis", "D_dP_columns"}

_BACKWARD_SLIPS: dict[str, tuple[str, dict[str, Any]]] = {
    "tile_softmax": ("P was not recomputed from L: these weights sum to 1 over each key tile's keys alone (a "
                     "softmax of the tile). P's entries belong to each query's softmax over all its keys, "
                     "whose normaliser the stored L holds (section 2, step 2).", {"from_L": False}),
    "tile_max": ("P was taken as e^(S - m) with m each row's largest score in this key tile: subtracting a "
                 "maximum keeps e^ from overflowing but does not normalise, and one tile's maximum is not the "
                 "row's. These are not the row's softmax weights; the stored L is what normalises them "
                 "(section 2).", {"L_use": "tile_max"}),
    "no_exp": ("P was taken as S - L, the logarithm of the weights, not the weights: L_i is a logarithm, "
               "log sum_j e^(S_ij) (section 2, step 2).", {"exp_P": False}),
    "L_divides": ("P was taken as e^S / L: L is a log-sum-exp, L_i = log sum_j e^(S_ij), the logarithm of "
                  "row i's sum, not the sum itself (section 2, step 2).", {"L_use": "divide"}),
    "L_unused": ("P was taken as e^S, with L left out: these weights are not normalised, and L_i, row i's "
                 "log-sum-exp, is what normalises row i (section 2, step 2).", {"L_use": "none"}),
    "unscaled": ("the scores are not scaled: S = q k^T / sqrt(d), as in the forward pass that computed L.",
                 {"scale": False}),
    "L_axis": ("L laid along the keys (L[None, :]): L_i belongs to query i, so it applies to row i of the "
               "scores, not to column i.", {"L_axis": 1}),
    "no_transpose": ("dV's share is P^T dO, not P dO: key j's value gets the gradient of every query that read "
                     "it, weighted by P_ij, so sum over the queries (rows of P).", {"transpose": False}),
    "no_D": ("D is missing: dS = P * (dP - D[:, None]); P * dP alone forgets that the weights of a row sum "
             "to 1 (section 2, step 3).", {"D": "none"}),
    "D_tile": ("D computed from each key tile alone (rowsum of P * dP over its keys): D_i sums over all of row "
               "i's keys, which one tile does not see. Derive the whole row's sum from what the function is "
               "given for its queries (exercise 3's hint).",
               {"D": "tile"}),
    "D_scalar": ("D is one number, a sum over the whole tile: D_i is one number per query, "
                 "summed over row i alone.", {"D": "scalar"}),
    "D_dO": ("D was taken as the row sums of dO alone: that drops the weights P and the values from "
             "D_i = sum_j P_ij dP_ij. Write dP_ij out in dO and V and sum over j first (exercise 3's hint).",
             {"D": "dO"}),
    "dS_no_P": ("dS was taken as dP - D: the factor P is missing. Each score's gradient is its weight times "
                "(dP - D): dS = P * (dP - D[:, None]), lesson 06's alpha * (g - alpha . g).", {"dS_P": False}),
    "dK_from_P": ("dK was built from P: P^T q. Keys enter through the scores, S = q k^T / sqrt(d), so dK "
                  "comes from the scores' gradient: dK = dS^T q / sqrt(d).", {"dK_from": "P"}),
    "dq_unscaled": ("dq is not divided by sqrt(d) (dK is): S = q k^T / sqrt(d), so dq = dS k / sqrt(d).",
                    {"dq_scaled": False}),
    "dK_unscaled": ("dK is not divided by sqrt(d) (dq is): S = q k^T / sqrt(d), so dK = dS^T q / sqrt(d).",
                    {"dK_scaled": False}),
    "D_dP": ("D was taken as the row sums of dP over this tile's keys: D_i = sum_j P_ij dP_ij weights each dP "
             "by its P and sums over all of row i's keys, which one tile does not see; a tile's dP alone is "
             "neither weighted nor whole (exercise 3's hint).", {"D": "dP"}),
    "D_dP_columns": ("D was taken as the column sums of dP (axis 0, over the queries): D_i belongs to query "
                     "i and sums over all of its keys.", {"D": "dP0"}),
    "D_mean": ("D is the mean of dO * O over each row, not its sum: D_i is a sum over row i's columns.",
               {"D": "mean"}),
    "dV_scaled": ("dV was divided by sqrt(d): values enter through O = P V, not through the scaled scores, so "
                  "no 1/sqrt(d) reaches them: dV = P^T dO.", {"dV_scaled": True}),
    "dV_from_dS": ("dV was built from dS: values enter through O = P V, not through the scores, so dV = P^T dO.",
                   {"dV_from": "dS"}),
    "L_plus": ("P was taken as e^(S + L): L_i is the log of row i's softmax denominator, which divides, so "
               "in the exponent it has the other sign.", {"L_sign": 1}),
    "D_axis": ("D laid along the keys (D[None, :]): D_i belongs to query i, so it subtracts from row i: "
               "D[:, None].", {"D_axis": 1}),
    "dS_scaled": ("dq and dK are exactly half the right ones: 1/sqrt(d) was applied twice, to dS and again in "
                  "dq = dS k / sqrt(d). dS is already the gradient of the scaled scores S = q k^T / sqrt(d); "
                  "the chain rule through S divides by sqrt(d) once.", {"dS_scaled": True}),
    "d_v": ("dq and dK were divided by sqrt(d_v), the width of the values: the scores were scaled by sqrt(d), "
            "the width of q and k, so dq = dS k / sqrt(d) and dK = dS^T q / sqrt(d).", {"grad_scale": "d_v"}),
    "no_grad_scale": ("dq and dK are twice the right ones here: S = q k^T / sqrt(d), so the chain rule through "
                      "S gives dq = dS k / sqrt(d) and dK = dS^T q / sqrt(d).", {"grad_scale": "none"}),
    "not_summed": ("dq holds only the last key tile's share: query i's score with every key carries gradient "
                   "to q_i, so dq sums dS k / sqrt(d) over all the key tiles (dq += ...).", {"accumulate": False}),
}


def _backward_reads_problem(memory: SlowMemory, b: int) -> str | None:
    """Name what is wrong with exercise 3's reads of K and V, or None: each key tile and each value tile read
    once, through memory.read, and nothing taken from memory.arrays but shapes."""
    T = memory.arrays["K"].shape[0]
    if _GuardedArrays.bypassed:
        return ("your loop takes K or V from memory.arrays directly, bypassing memory.read: that is the whole "
                "matrix in fast memory, and the tile loop the exercise asks for is skipped. Read each tile with "
                "memory.read(name, j, j + b); use memory.arrays only for shapes.")
    for op, name, start, stop in memory.log:
        if op == "read" and stop - start > b:
            return (f"{name} rows {start}..{stop - 1} were read at once: more than one tile of b = {b} rows. "
                    f"Read K and V a tile at a time (memory.read(name, j, j + b)).")
    for name in "KV":
        starts = [start for op, n, start, _ in memory.log if op == "read" and n == name]
        if sorted(starts) != list(range(0, T, b)):
            return (f"the tiles of {name} read start at rows {starts}: the loop reads each tile of K and of V "
                    f"exactly once, at rows 0, b, 2b, ... ({list(range(0, T, b))}).")
    return None


def _returned_order(mine: list[np.ndarray], right: tuple[np.ndarray, ...]) -> tuple[str, ...] | None:
    """The names of what the answer returned, in its order, when its three arrays are the right ones in
    another order than (dq, dK, dV); else None."""
    import itertools

    names = ("dq", "dK", "dV")
    for perm in itertools.permutations(range(3)):
        if perm != (0, 1, 2) and all(a.shape == right[p].shape and np.allclose(a, right[p])
                                     for a, p in zip(mine, perm, strict=True)):
            return tuple(names[p] for p in perm)
    return None


def _global_arrays_problem(fn: Callable[..., Any], example: str = "for example P and D from this tile's scores "
                           "and the stored L, O and dO") -> str | None:
    """Name the arrays a function reads from the notebook's globals instead of computing them itself (a
    ``P`` or ``D`` left over from a demonstration cell, a whole ``K``), or None; ``example`` says what the
    loop body should compute instead."""
    import dis

    names, codes = [], [fn.__code__]
    while codes:
        code = codes.pop()
        codes.extend(c for c in code.co_consts if hasattr(c, "co_code"))
        names.extend(ins.argval for ins in dis.get_instructions(code)
                     if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and ins.argval not in names)
    arrays = [n for n in names if isinstance(fn.__globals__.get(n), np.ndarray)
              or type(fn.__globals__.get(n)).__name__ == "Tensor"]
    if not arrays:
        return None
    shapes = ", ".join(f"{n} {tuple(fn.__globals__[n].shape)}" for n in arrays)
    return (f"your function reads {', '.join(arrays)} from the notebook's globals ({shapes}), not from its own "
            f"lines: an array the loop needs is used but never assigned inside it. Compute each one in the loop "
            f"body from the tile ({example}).")


def check_query_tile_backward(query_tile_backward: Callable[..., Any]) -> None:
    """Exercise 3: one query tile's backward loop over the key tiles (read from slow memory a tile at a time),
    from the stored L, O and dO: dq summed over the tiles, each key tile's dK and dV shares. Every query tile's
    results assembled give PyTorch's autograd dQ, dK, dV."""
    if not callable(query_tile_backward):
        raise ExerciseError("query_tile_backward should be a function: write it in the answer cell above.")
    if uses_torch(query_tile_backward):
        raise ExerciseError("query_tile_backward uses PyTorch: write it in NumPy from section 2's rules. "
                            "Autograd on the query rows would give the gradients without the loop the "
                            "exercise asks for.")
    problem = _global_arrays_problem(query_tile_backward)
    if problem:
        raise ExerciseError(problem)
    for case, bq, b in _backward_cases():
        T = len(case["Q"])
        dQ, dK, dV = np.zeros_like(case["Q"]), np.zeros_like(case["K"]), np.zeros_like(case["V"])
        for i in range(0, T, bq):
            rows = slice(i, i + bq)
            q, L, O, dO = case["Q"][rows], case["L"][rows], case["O"][rows], case["dO"][rows]
            what = (f"the query tile {i}..{i + bq - 1} with key tiles of b = {b} (T = {T}, scores up to "
                    f"{np.abs(q @ case['K'].T).max() / 2:,.0f})")
            memory = _GuardedMemory(K=case["K"], V=case["V"])
            try:
                with np.errstate(all="ignore"):
                    got = query_tile_backward(q.copy(), L.copy(), O.copy(), dO.copy(), memory, b)
            except ExerciseError:
                raise
            except Exception as exc:
                d_v = dO.shape[1]
                if isinstance(exc, ValueError) and (f"({d_v},1)" in str(exc) or f"({d_v},)" in str(exc)):
                    raise ExerciseError(
                        f"query_tile_backward raised ValueError on {what}: {exc}. An array of {d_v} entries "
                        f"(d_v, the columns of dO and O) met a tile of scores: D was summed over axis 0, the "
                        f"queries, giving one number per column. D_i sums row i over its columns: "
                        f"one number per query.") from None
                if isinstance(exc, NameError) and getattr(exc, "name", None) in ("P", "D"):
                    raise ExerciseError(
                        f"query_tile_backward raised NameError on {what}: {exc.name} is not defined yet. The "
                        f"given lines after your answer use this tile's P (b_q, b) and D (b_q,): your lines "
                        f"compute both, from the stored values you are given.") from None
                if isinstance(exc, ValueError) and "could not broadcast" in str(exc) and (
                        str(exc).count(",") >= 3):
                    raise ExerciseError(
                        f"query_tile_backward raised ValueError on {what}: {exc}. An array of three dimensions "
                        f"was made, as D[:, None] does when D is already a column (summed with keepdims=True, "
                        f"shape (b_q, 1)): use one or the other, so that dP - D is (b_q, b).") from None
                if isinstance(exc, IndexError) and ("0-dimensional" in str(exc) or "scalar" in str(exc)):
                    raise ExerciseError(
                        f"query_tile_backward raised IndexError on {what}: {str(exc).rstrip('.')}. A single number "
                        f"was indexed, as D[:, None] does when D was summed with no axis: that "
                        f"adds up the whole tile. D must be one number per query row, "
                        f"summed over that row alone.") from None
                raise ExerciseError(f"query_tile_backward raised {type(exc).__name__} on {what}: {exc}") from None
            problem = _backward_reads_problem(memory, b)
            if problem:
                raise ExerciseError(f"{problem} (on {what})")
            if not isinstance(got, tuple | list) or len(got) != 3:
                raise ExerciseError("query_tile_backward should return three arrays, (dq, dK, dV): "
                                    f"it returned {type(got).__name__}.")
            mine = [np.asarray(g, dtype=float) for g in got]
            if all(a.size and not a.any() for a in mine):
                raise ExerciseError(f"on {what}: your dq, dK and dV are all zeros, as the starter code made "
                                    "them: the loop body must fill this tile's rows j:j + b of dV and dK and "
                                    "add its share to dq (dq += ...).")
            right = _right_query_tile(q, case["K"], case["V"], L, O, dO)
            order = _returned_order(mine, right)
            if order is not None:
                raise ExerciseError(f"on {what}: your function returned ({', '.join(order)}): the values are "
                                    "right, the order is not. Return (dq, dK, dV).")
            for key, (text, switches) in _BACKWARD_SLIPS.items():
                if key in _SQUARE_ONLY and bq != b:
                    continue
                with np.errstate(all="ignore"):
                    wrong = _slipped_query_tile(q, case["K"], case["V"], L, O, dO, b, **switches)
                if all(np.isfinite(w).all() and np.shape(w) == a.shape and np.allclose(a, w)
                       for a, w in zip(mine, wrong, strict=True)) and not all(
                           np.allclose(w, r) for w, r in zip(wrong, right, strict=True)):
                    raise ExerciseError(f"on {what}: {text}")
            for name, a, r in zip(("dq", "dK", "dV"), mine, right, strict=True):
                check_array(a, r, f"your {name} on {what}")
            dQ[rows] += mine[0]
            dK += mine[1]
            dV += mine[2]
        for name, ours, auto in (("dQ", dQ, case["dQ"]), ("dK", dK, case["dK"]), ("dV", dV, case["dV"])):
            check_array(ours, auto, f"{name} assembled from your query tiles (against PyTorch's autograd)")
    problem = _L_problem(query_tile_backward) or _backward_memory_problem(query_tile_backward)
    if problem:
        raise ExerciseError(problem)
    passed("each query tile's dq, summed over the key tiles, and its dK and dV shares, added over the query "
           "tiles, give PyTorch's autograd gradients of the whole attention.")


def backward_reads_problem(query_tile_backward: Callable[..., Any]) -> str | None:
    """For exercise 3's hidden test: run the answer on one query tile through the check's guarded memory and
    name what is wrong with its reads of K and V (a bypass of memory.read, a read of more than a tile, a tile
    read twice or not at all), or None."""
    case = _backward_case(1502, 8, 1.0)
    memory = _GuardedMemory(K=case["K"], V=case["V"])
    rows = slice(2, 5)
    with np.errstate(all="ignore"):
        query_tile_backward(case["Q"][rows].copy(), case["L"][rows].copy(), case["O"][rows].copy(),
                            case["dO"][rows].copy(), memory, 4)
    return _backward_reads_problem(memory, 4)


_BACKWARD_CAP_CASE = (4096, 4, 3, 16)  # T, d, d_v, b: 256 key tiles; a row of scores is 256 times a tile


def _backward_inputs(seed: int, T: int, d: int, d_v: int, rows: int) -> dict[str, np.ndarray]:
    """A random (T, d) attention in NumPy and one query tile of ``rows`` queries: q, its L, O, dO, and K, V."""
    rng = np.random.default_rng(seed)
    Q, K = rng.normal(size=(2, T, d))
    V, dO = rng.normal(size=(2, T, d_v))
    S = Q[:rows] @ K.T / np.sqrt(d)
    L = S.max(axis=1) + np.log(np.exp(S - S.max(axis=1, keepdims=True)).sum(axis=1))
    return {"q": Q[:rows], "L": L, "O": np.exp(S - L[:, None]) @ V, "dO": dO[:rows], "K": K, "V": V}


def _backward_held(query_tile_backward: Callable[..., Any], T: int, d: int, d_v: int, b: int) -> int:
    """The most memory the answer held at once, beyond what it returns, in numbers of 8 bytes."""
    case = _backward_inputs(1503, T, d, d_v, b)
    memory = SlowMemory(K=case["K"], V=case["V"])
    memory.log = _NoLog()
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        with np.errstate(all="ignore"):
            query_tile_backward(case["q"], case["L"], case["O"], case["dO"], memory, b)
        return (tracemalloc.get_traced_memory()[1] - start) // 8
    finally:
        if not was_tracing:
            tracemalloc.stop()


def _backward_memory_problem(query_tile_backward: Callable[..., Any]) -> str | None:
    """Name a backward loop that holds all of K and V (or a whole row of scores) in fast memory, or None. The
    dK and dV shares it returns are T x d and T x d_v and are allowed, with room for a list of their tiles and
    one of dq's shares besides; a row of scores, b x T, is 4 times K's size here and comes four times (S, P,
    dP, dS) in section 2's whole-matrix code."""
    T, d, d_v, b = _BACKWARD_CAP_CASE
    tiles = 2 * b * d + 2 * b * d_v + 4 * b * b
    limit = 3 * T * (d + d_v) + 16 * tiles + 4096
    held = _backward_held(query_tile_backward, T, d, d_v, b)
    if held <= limit:
        return None
    return (f"on T = {T}, d = {d}, d_v = {d_v}, b = {b} your loop held about {held:,} numbers at once, where the "
            f"dK and dV it returns take {T * (d + d_v):,} and its tiles about {tiles}: it kept all of K and V, or "
            f"a whole row of scores, in fast memory (for example the tiles read and then np.concatenate'd for "
            f"section 2's whole-matrix code). Fast memory holds one K and V tile at a time: compute each tile's "
            f"P, dS and shares as it passes.")


def backward_holds_more_than_tiles(query_tile_backward: Callable[..., Any]) -> bool:
    """For exercise 3's hidden test: the check's memory measurement."""
    return _backward_memory_problem(query_tile_backward) is not None


_L_SHIFT = 1.0


def _L_problem(query_tile_backward: Callable[..., Any]) -> str | None:
    """The control on L: raise every stored L_i by c = 1. A loop that recomputes P = e^(S - L) gets weights,
    and so a dV, e^(-c) times as large; one that takes a fresh softmax of the scores ignores L and does not."""
    case = _backward_inputs(1504, 16, 4, 3, 4)
    got = []
    for shift in (0.0, _L_SHIFT):
        memory = SlowMemory(K=case["K"], V=case["V"])
        with np.errstate(all="ignore"):
            out = query_tile_backward(case["q"].copy(), case["L"] + shift, case["O"].copy(), case["dO"].copy(),
                                      memory, 4)
        got.append(np.asarray(out[2], dtype=float))
    if np.allclose(got[1], got[0] * np.exp(-_L_SHIFT)):
        return None
    if np.allclose(got[1], got[0]):
        return (f"a control: with every stored L_i raised by c = {_L_SHIFT:g} your dV did not change, where "
                f"weights recomputed from L make it e^(-c) = {np.exp(-_L_SHIFT):.3f} times as large. Your "
                f"weights do not come from the stored L (a fresh softmax of the scores, for example): recompute "
                f"each tile's P from the L you are given (section 2, step 2).")
    return (f"a control: with every stored L_i raised by c = {_L_SHIFT:g} your dV should be e^(-c) = "
            f"{np.exp(-_L_SHIFT):.3f} times as large, as weights recomputed from L are, and it is not: "
            f"recompute each tile's P from the L you are given (section 2, step 2).")


def backward_ignores_L(query_tile_backward: Callable[..., Any]) -> bool:
    """For exercise 3's hidden test: the check's control that shifts L."""
    return _L_problem(query_tile_backward) is not None
