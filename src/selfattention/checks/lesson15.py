"""Checks for lesson 15 (IO-aware attention): the causal tiled loop, read through a counted slow memory; the
elements it moves; and one tile's share of the backward pass, from the stored log-sum-exp."""

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
    code_names,
    learners_functions,
    passed,
    reference_softmax,
    used_objects,
)

__all__ = ["check_causal_flash", "check_causal_elements_moved", "check_tile_backward", "holds_more_than_tiles",
           "uses_torch"]


_REFUSED = ("calls the package's sa.llm.flash_attention_io, which does what the exercise asks you to write "
            "(or to derive): write the loop yourself.")


def _refused(*args: Any, **kwargs: Any) -> None:
    # runs as the package function's code, with llm's globals: import what it needs here
    from selfattention.checks._engine import ExerciseError

    raise ExerciseError("your answer calls the package's sa.llm.flash_attention_io, which does what the exercise "
                        "asks you to write (or to derive): write the loop yourself.")


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
            within_tiles_of: int | None = None, own_key: bool = True) -> np.ndarray:
    S = Q @ K.T / (np.sqrt(Q.shape[1]) if scale else 1.0)
    T = len(Q)
    allowed = np.tri(T, k=0 if own_key else -1, dtype=bool)
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
    o_writes = [s for op, n, s, _ in log if op == "write" and n == "O"]
    if sorted(o_writes) != list(range(0, T, b)):
        return ("each tile of outputs must be written exactly once, after its last key tile; the output rows "
                f"written start at {o_writes}.")
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
        if sorted(got) != list(range(0, i + 1, b)):
            return (f"the query tile at row {i} read the key tiles starting at {got}; it needs each of the tiles "
                    f"0, b, ..., {i} once.")
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
            f"scores and m, l, a. Keep no list of key tiles (or of all a row's scores) for one ordinary "
            f"softmax at the end: update m, l and a as each key tile passes.")


def uses_torch(fn: Callable[..., Any]) -> bool:
    """Whether ``fn``, or a function of the learner's that it reaches, refers to PyTorch (the module, or
    anything defined in it, such as ``F`` or ``torch.softmax``). Exercise 1's fast memory is measured with
    tracemalloc, which sees NumPy's allocations and not PyTorch's, so the loop is asked for in NumPy."""
    def from_torch(obj: Any) -> bool:
        name = getattr(obj, "__name__", None) if isinstance(obj, type(np)) else getattr(obj, "__module__", None)
        return isinstance(name, str) and (name == "torch" or name.startswith("torch."))

    def imports_torch(f: Callable[..., Any]) -> bool:  # "import torch" inside the function: a name, no global
        code = getattr(f, "__code__", None)
        return code is not None and any(n == "torch" or n.startswith("torch.") for n in code_names(code))

    return any(imports_torch(f) or any(from_torch(obj) for obj in used_objects(f).values())
               for f in learners_functions(fn))


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
    strict = _causal(Q, K, V, own_key=False)
    if bad[0] and np.allclose(out[~bad], strict[~bad], atol=1e-6):
        return ("row 0 of O is NaN: every key of query 0 was masked, so its softmax divides 0 by 0. A query "
                "reads its own key: set to -inf only the keys after it (key position > query position), "
                "not key position >= query position.")
    return None


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


def check_causal_flash(causal_flash: Callable[..., Any]) -> None:
    """Exercise 1: causal attention tile by tile through a counted slow memory: the output, and the reads
    and writes (each query tile once, its key/value tiles up to the diagonal, each output tile once)."""
    if not callable(causal_flash):
        raise ExerciseError("causal_flash should be a function: write it in the answer cell above.")
    if getattr(causal_flash, "__code__", None) is llm.flash_attention_io.__code__:
        raise ExerciseError(f"causal_flash is the package's loop: your answer {_REFUSED}")
    if uses_torch(causal_flash):
        raise ExerciseError(
            "causal_flash uses PyTorch: write the loop in NumPy. The check measures what the "
            "loop holds in fast memory through NumPy's allocations and cannot see PyTorch's, so a PyTorch "
            "loop could keep all of a row's keys unseen.")
    for Q, K, V, b in _flash_cases():
        T = len(Q)
        what = f"T = {T}, d = {Q.shape[1]}, b = {b}"
        memory = SlowMemory(Q=Q, K=K, V=V)
        try:
            with _without_package_loop():
                causal_flash(memory, b)
        except ExerciseError:
            raise
        except Exception as exc:
            i = _skipped_diagonal(memory.log, b)
            if i is not None:
                raise ExerciseError(
                    f"causal_flash raised {type(exc).__name__} on {what} after the query tile at row {i} did not "
                    f"read its diagonal key tile (rows {i}..{min(i + b, T) - 1}): it holds each query's own key "
                    f"(query 0 has no other), so skipping it leaves nothing to attend to. Only tiles with every "
                    f"key after every query are skipped: let j run up to i.") from None
            raise ExerciseError(f"causal_flash raised {type(exc).__name__} on {what}: {exc}") from None
        if {"S", "P"} & set(memory.arrays):
            raise ExerciseError(f"{_pattern_problem(memory.log, T, b)} (on {what})")
        if "O" not in memory.arrays:
            raise ExerciseError(f"nothing was written to O (on {what}): write each tile's output with "
                                f"memory.write('O', rows, i).")
        problem = _pattern_problem(memory.log, T, b) or _own_key_problem(memory.arrays["O"][:T], Q, K, V)
        if problem:
            raise ExerciseError(f"{problem} (on {what})")
        mistakes = {
            "inside a diagonal tile the keys after each query were not masked: set those scores to -inf "
            "(key position > query position).": _causal(Q, K, V, mask=False, within_tiles_of=b),
            "the scores are not scaled: divide them by sqrt(d_k).": _causal(Q, K, V, scale=False),
            "when a tile raises a row's maximum, the running sum and output must be multiplied by "
            "exp(m_old - m_new) before the new tile is added; here they were not.": _no_rescale(Q, K, V, b),
        }
        check_array(memory.arrays["O"][:T], _causal(Q, K, V), f"the output O (on {what})", mistakes=mistakes)
    problem = _fast_memory_problem(causal_flash)
    if problem:
        raise ExerciseError(problem)
    passed("exact causal attention, each query tile read once, only the key tiles up to the diagonal read, "
           "each output tile written once, and no more than the tiles held in fast memory.")


# ------------------------------------------------------- exercise 2: elements moved, predicted
_MOVED_CASES = [(1024, 64, 128), (4096, 128, 64), (96, 8, 32)]


def check_causal_elements_moved(causal_elements_moved: Callable[..., Any]) -> None:
    """Exercise 2: the elements the causal tiled loop moves, 3 T d + T^2 d / b (T a multiple of b)."""
    if not callable(causal_elements_moved):
        raise ExerciseError("causal_elements_moved should be a function: write it in the answer cell above.")
    for T, d, b in _MOVED_CASES:
        try:
            with _without_package_loop(memory=True):
                got = causal_elements_moved(T, d, b)
        except ExerciseError:
            raise
        except Exception as exc:
            raise ExerciseError(f"causal_elements_moved({T}, {d}, {b}) raised {type(exc).__name__}: {exc}") from None
        N = T // b
        hints = {
            "that is the count of the loop without the mask (every key tile for every query tile, "
            "2 T d + 2 T^2 d / b); the causal loop reads only the tiles up to the diagonal.": 2 * T * d + 2 * T**2 * d / b,
            "that leaves out the diagonal tiles (query tile n reads key tiles 0..n, n + 1 of them), or else it "
            "leaves out Q's read and O's write (T d numbers each): both mistakes give T d + T^2 d / b.":
                2 * T * d + b * d * N * (N - 1),
            "only the keys are counted: every key tile read comes with its value tile, 2 b d numbers in all.":
                2 * T * d + b * d * N * (N + 1) / 2,
            "that counts N^2/2 of the N^2 key/value tiles (N = T / b): the causal loop reads N(N + 1)/2 of them, "
            "the diagonal tiles included (query tile n reads key tiles 0..n). Leaving out O's write (T d numbers) "
            "gives the same count.": 2 * T * d + T**2 * d / b,
            "that is standard attention's count (S and P through slow memory), not the tiled loop's.":
                4 * T * d + 4 * T**2,
        }
        check_value(got, 3 * T * d + T**2 * d / b, f"causal_elements_moved({T}, {d}, {b})", hints=hints)
    passed(f"3 T d + T^2 d / b: for T = 4,096, d = 128, b = 64 that is {3 * 4096 * 128 + 4096**2 * 128 // 64:,} "
           f"elements, against {2 * 4096 * 128 + 2 * 4096**2 * 128 // 64:,} without the mask.")


# ------------------------------------------- exercise 3: a tile of weights from the stored log-sum-exp
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
    """(case, query tile rows, key tile rows): square tiles first (so a wrong axis gives numbers, not an error),
    then scores in the hundreds and tiles that are not square."""
    return [(_backward_case(1500, 8, 1.5), 4, 4), (_backward_case(1501, 12, 12.0), 3, 4)]


def _tile_mistakes(q: np.ndarray, k: np.ndarray, v: np.ndarray, L: np.ndarray, O: np.ndarray,
                   dO: np.ndarray) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The wrong dV and dS a learner's typical slips give on this tile, keyed by the message naming each."""
    S = q @ k.T / np.sqrt(q.shape[1])
    P = np.exp(S - L[:, None])
    dP, D = dO @ v.T, (dO * O).sum(axis=1)
    tile = reference_softmax(S)
    unscaled = np.exp(q @ k.T - L[:, None])
    common = {
        "P was not recomputed from L: these weights sum to 1 over this tile's keys alone (a softmax of the "
        "tile). P's entries belong to each query's softmax over all its keys: P = e^(S - L[:, None]).": tile,
        "the scores are not scaled: S = q k^T / sqrt(d), as in the forward pass that computed L.": unscaled,
    }
    if S.shape[0] == S.shape[1]:
        common["L laid along the keys (L[None, :]): L_i belongs to query i, so it subtracts from row i: "
               "L[:, None]."] = np.exp(S - L[None, :])
    dV = {m: W.T @ dO for m, W in common.items()}
    if S.shape[0] == S.shape[1]:
        dV["dV's share is P^T dO, not P dO: key j's value gets the gradient of every query that read it, "
           "weighted by P_ij, so sum over the queries (rows of P)."] = P @ dO
    dS = {m: W * (dO @ v.T - D[:, None]) for m, W in common.items()}
    dS["D is missing: dS = P * (dP - D[:, None]), with D_i = rowsum(dO_i * O_i); P * dP alone forgets that "
       "the weights of a row sum to 1."] = P * dP
    dS["D computed from this tile alone (rowsum of P * dP over its keys): D_i sums over all of row i's keys, "
       "which is why it is taken as rowsum(dO * O) from the stored output."] = P * (dP - (P * dP).sum(axis=1,
                                                                                                   keepdims=True))
    if S.shape[0] == S.shape[1]:
        dS["D laid along the keys (D[None, :]): D_i belongs to query i, so it subtracts from row i: "
           "D[:, None]."] = P * (dP - D[None, :])
    return dV, dS


def check_tile_backward(tile_backward: Callable[..., Any]) -> None:
    """Exercise 3: one tile's share of the backward pass, from its q, k, v, the stored L, O and dO: P = e^(S - L),
    dV share P^T dO, dS = P * (dP - D); every tile's shares assembled give PyTorch's autograd dQ, dK, dV."""
    if not callable(tile_backward):
        raise ExerciseError("tile_backward should be a function: write it in the answer cell above.")
    for case, bq, bk in _backward_cases():
        T = len(case["Q"])
        dQ, dK, dV = np.zeros_like(case["Q"]), np.zeros_like(case["K"]), np.zeros_like(case["V"])
        for i in range(0, T, bq):
            for j in range(0, T, bk):
                rows, cols = slice(i, i + bq), slice(j, j + bk)
                q, k, v = case["Q"][rows], case["K"][cols], case["V"][cols]
                L, O, dO = case["L"][rows], case["O"][rows], case["dO"][rows]
                what = (f"the tile of queries {i}..{i + bq - 1} and keys {j}..{j + bk - 1} "
                        f"(scores up to {np.abs(q @ k.T).max() / 2:,.0f})")
                try:
                    with np.errstate(all="ignore"):
                        got = tile_backward(q.copy(), k.copy(), v.copy(), L.copy(), O.copy(), dO.copy())
                except Exception as exc:
                    raise ExerciseError(f"tile_backward raised {type(exc).__name__} on {what}: {exc}") from None
                if not isinstance(got, tuple | list) or len(got) != 2:
                    raise ExerciseError("tile_backward should return two arrays, (dV_share, dS): "
                                        f"it returned {type(got).__name__}.")
                P = np.exp(q @ k.T / 2.0 - L[:, None])
                wrong_dV, wrong_dS = _tile_mistakes(q, k, v, L, O, dO)
                right_dV, right_dS = P.T @ dO, case["dS"][rows, cols]
                for name, answer, right, wrong in (("dV_share", got[0], right_dV, wrong_dV),
                                                   ("dS", got[1], right_dS, wrong_dS)):
                    arr = np.asarray(answer, dtype=float)
                    found = [m for m, w in wrong.items() if np.shape(w) == arr.shape and np.isfinite(w).all()
                             and not np.allclose(w, right) and np.allclose(arr, w)]
                    if found:
                        raise ExerciseError(f"on {what}, your {name}: {found[0]}")
                    check_array(arr, right, f"your {name} on {what}")
                dV[cols] += np.asarray(got[0], dtype=float)
                dS_ = np.asarray(got[1], dtype=float)
                dQ[rows] += dS_ @ k / 2.0
                dK[cols] += dS_.T @ q / 2.0
        for name, mine, auto in (("dQ", dQ, case["dQ"]), ("dK", dK, case["dK"]), ("dV", dV, case["dV"])):
            check_array(mine, auto, f"{name} assembled from your tiles (against PyTorch's autograd)")
    passed("every tile's dV share and dS, assembled (dQ = dS k / sqrt(d), dK = dS^T q / sqrt(d)), give "
           "PyTorch's autograd gradients of the whole attention.")
