"""Checks for lesson 07 (multi-head attention): the factor on head 2's W_Q that sharpens its row of "apple", heads
the whole layer batched as PyTorch stores it, a W_O designed to mix the heads."""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ._engine import ExerciseError, _to_array, lines_run, passed, reference_softmax, stand_ins

__all__ = ["check_head2_sharpen", "check_mha_layer", "check_mixing_W_O"]

# ------------------------------------------------------------------ the worked example (lesson 07)
_X = np.array([[1.0, 0.5, 0.2, 0.1],     # I
               [0.9, 1.1, 0.1, 0.0],     # love
               [0.1, 0.2, 1.0, 0.5],     # apple
               [0.0, 0.1, 0.4, 1.2]])    # phones
_HEAD1 = tuple(np.array(m, dtype=float) for m in (
    [[1, 0], [0, 1], [1, 0], [0, 1]], [[1, 0], [0, 1], [0, 1], [1, 0]], [[1, 0], [0, 1], [1, 1], [0, 1]]))
_HEAD2 = tuple(np.array(m, dtype=float) for m in (
    [[0, 0], [0, 0], [2, 0], [0, 1]], [[0, 0], [0, 0], [0, 1], [1, 0]], [[0, 0], [0, 0], [1, 0], [0, 1]]))
_APPLE = 2
_TOKENS = ("I", "love", "apple", "phones")
_HAND_TOL = 0.01  # a hand computation to 2 decimals


def _hand_array(got: Any, name: str, size: int) -> np.ndarray:
    arr = _to_array(got, name)
    if arr.size != size:
        raise ExerciseError(f"{name} has shape {arr.shape}; it should hold {size} numbers.")
    arr = arr.reshape(-1)
    if not np.all(np.isfinite(arr)):
        raise ExerciseError(f"{name} contains NaN or infinite values.")
    return arr


def _head2_score_mistakes() -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(right raw scores of "apple" in head 2, {mistake: scores})."""
    Q, K, _ = (_X @ W for W in _HEAD2)
    Q1, K1, _ = (_X @ W for W in _HEAD1)
    right = Q[_APPLE] @ K.T
    wrong = {
        "these are the column of \"apple\" (its key against every query, k_apple . q_j); the row of \"apple\" "
        "is its query against every key, q_apple . k_j. In head 2 the two differ (its query is [2 fruit, tech], "
        "its key [tech, fruit]).": Q @ K[_APPLE],
        "these scores are already divided by sqrt(2); step 1 asks for the raw scores q_apple . k_j (the "
        "division is step 2).": right / np.sqrt(2),
        "these are queries against queries (q_apple . q_j); score the query of \"apple\" against the keys, "
        "q_apple . k_j (K = X W_K).": Q @ Q[_APPLE],
        "these are head 1's scores for \"apple\"; head 2 uses its own Q and K (the table of head 2).":
            Q1[_APPLE] @ K1.T,
        "these are the weights after softmax (they sum to 1), not the raw scores: step 1 asks for q_apple . k_j "
        "before the division by sqrt(2) and the softmax.": reference_softmax(right / np.sqrt(2)),
        "the scores are in reverse order; list them for the keys I, love, apple, phones, in that order.":
            right[::-1],
    }
    for t in (0, 1, 3):
        wrong[f"these are the scores of \"{_TOKENS[t]}\" (its query against every key); the exercise asks for "
              f"the row of \"apple\": q_apple . k_j for each key j."] = Q[t] @ K.T
    return right, wrong


def _weight_on_phones(c: float, scores: np.ndarray, divisor: float = np.sqrt(2)) -> float:
    """The weight "apple" gives "phones" when every raw score is multiplied by ``c`` (W_Q times c)."""
    e = np.exp(c * (scores - scores.max()) / divisor)
    return float(e[3] / e.sum())


def _smallest_c(scores: np.ndarray, divisor: float = np.sqrt(2), target: float = 0.9) -> float:
    """The smallest c > 0 with a weight above ``target`` on "phones" (bisection; the weight rises with c)."""
    lo, hi = 0.0, 100.0
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if _weight_on_phones(mid, scores, divisor) > target else (mid, hi)
    return hi


def _c_mistakes(scores: np.ndarray) -> dict[str, float]:
    """{mistake: the c it gives} for step 2, from the right raw scores."""
    gap = scores[3] - scores[2]  # phones against apple's own key, the largest of the three other terms
    return {
        "the scores were not divided by sqrt(d_k) = sqrt(2): the weight on \"phones\" is the softmax of "
        "c q_apple . k_j / sqrt(2).": _smallest_c(scores, divisor=1.0),
        "the scores were divided by d_k = 2 instead of sqrt(d_k) = sqrt(2).": _smallest_c(scores, divisor=2.0),
        "this c multiplies every score by c^2, as if both the queries and the keys were scaled; multiplying "
        "W_Q by c multiplies only the queries, so each score q_apple . k_j by c.": np.sqrt(_smallest_c(scores)),
        "this keeps only the term of \"apple\"'s own key (c = sqrt(2) ln 9 / 1.1); the keys of \"I\" and "
        "\"love\" still take some weight at that c, so the weight on \"phones\" is still below 0.9. Solve "
        "with all three terms (trying values of c in NumPy is fine).": np.sqrt(2) * np.log(9) / gap,
    }


def check_head2_sharpen(apple_scores_2: Any, c_phones: Any, more_than_estimate: Any = None) -> None:
    """Exercise 1: the prediction ``more_than_estimate`` (True: the keys of "I" and "love" push c above the
    two-term estimate sqrt(2) ln 9 / (omega_apple,phones - omega_apple,apple), checked after c), head 2's raw
    scores of "apple" against the four keys (4 numbers, within 0.01), and the
    smallest factor c on W_Q^(2) for which "apple" gives "phones" a weight above 0.9 (within 0.01 of 2.979,
    and giving a weight above 0.9: 2.98, not 2.97)."""
    right_s, score_mistakes = _head2_score_mistakes()
    s = _hand_array(apple_scores_2, "apple_scores_2", 4)
    if not np.allclose(s, right_s, atol=_HAND_TOL, rtol=0):
        for explanation, wrong in score_mistakes.items():
            if np.allclose(s, wrong, atol=_HAND_TOL, rtol=0):
                raise ExerciseError(f"apple_scores_2 is not right yet: {explanation}")
        i = int(np.argmax(np.abs(s - right_s)))
        raise ExerciseError(f"apple_scores_2 differs from the right row: your score against the key of "
                            f"\"{_TOKENS[i]}\" is {s[i]:.3f}, more than 0.01 from q_apple . k_{_TOKENS[i]}. "
                            f"Recheck that dot product: the query of \"apple\" is [2.0, 0.5], and the keys are "
                            f"the rows of head 2's K.")
    c = _hand_array(c_phones, "c_phones", 1)[0]
    right_c = _smallest_c(right_s)
    if abs(c - right_c) > _HAND_TOL or _weight_on_phones(c, right_s) < 0.8999:  # within 0.01, at 0.9
        for explanation, wrong in _c_mistakes(right_s).items():
            if abs(c - wrong) <= _HAND_TOL:
                raise ExerciseError(f"c_phones is not right yet: {explanation}")
        w = _weight_on_phones(c, right_s)
        if w > 0.9:
            raise ExerciseError(f"c_phones is not right yet: at c = {c:.3f} \"apple\" gives \"phones\" "
                                f"{w:.4f}, above 0.9, but a smaller c already does: give the smallest one, to "
                                f"two decimals.")
        raise ExerciseError(f"c_phones is not right yet: at c = {c:.3f} \"apple\" gives \"phones\" {w:.4f}, "
                            f"not above 0.9. The weight is exp(c 2.6 / sqrt(2)) divided by the sum of "
                            f"exp(c omega_j / sqrt(2)) over the four raw scores omega_j = q_apple . k_j; it grows with c.")
    approx = np.sqrt(2) * np.log(9) / (right_s[3] - right_s[2])
    if not isinstance(more_than_estimate, bool | np.bool_):
        raise ExerciseError(f"apple_scores_2 and c_phones are right; more_than_estimate is "
                            f"{more_than_estimate!r}: answer True or False, as you predicted.")
    if not more_than_estimate:
        raise ExerciseError(f"apple_scores_2 and c_phones are right, but more_than_estimate is not: your own "
                            f"c = {right_c:.3f} is above the two-term estimate {approx:.3f}. The keys of \"I\" "
                            f"and \"love\" add exp(c omega_j / sqrt(2)) to the softmax's sum at every c, so "
                            f"\"phones\" gets less than with two terms, and c must grow further.")
    passed(f"apple's raw scores in head 2 are {np.round(right_s, 2).tolist()}; at c = 1 \"phones\" gets "
           f"{_weight_on_phones(1.0, right_s):.3f}, and c = {right_c:.3f} lifts it to 0.9. \"apple\"'s own key "
           f"alone would give c = {approx:.3f}; the keys of \"I\" and \"love\" ask for a little more. A head "
           f"is sharpened by the size of its scores, which training sets through W_Q and W_K.")


# ------------------------------------------------------------------ exercise 3: a W_O that routes the heads
def check_mixing_W_O(W_O_mix: Any, can_recover_fruit: Any = None) -> None:
    """Exercise 3: a (4, 4) W_O for two heads of d_k = 2 (concatenation [head 1's 2 features | head 2's fruit,
    tech]) such that, for every token, output features 0-1 are head 1's output unchanged and output features
    2-3 depend on head 2 only through its tech feature (concatenation feature 3), not always 0. Many W_O do.
    ``can_recover_fruit`` (True/False): can a linear read-out of the output recover head 2's fruit feature? No:
    row 2 of every such W_O is 0."""
    W = _to_array(W_O_mix, "W_O_mix")
    if W.shape != (4, 4):
        raise ExerciseError(f"W_O_mix has shape {W.shape}; W_O maps the 4 concatenated features to 4 output "
                            f"features: shape (4, 4).")
    if not np.all(np.isfinite(W)):
        raise ExerciseError("W_O_mix contains NaN or infinite values.")

    def problems(M: np.ndarray) -> list[str]:
        """What is wrong with M, block by block (rows: head 1's features 0-1, head 2's fruit 2, tech 3)."""
        out = []
        if not np.allclose(M[2:, :2], 0):
            out.append("output features 0-1 change with head 2's output: rows 2-3 (head 2's block W_O^(2)) must "
                       "write nothing into columns 0-1.")
        if not np.allclose(M[:2, :2], np.eye(2)):
            out.append("output features 0-1 are not head 1's output unchanged: rows 0-1, columns 0-1 (head 1's "
                       "block writing there) must pass head 1's feature 0 to output 0 and feature 1 to output 1, "
                       "unscaled.")
        if not np.allclose(M[:2, 2:], 0):
            out.append("output features 2-3 change when head 1's output changes: rows 0-1 (head 1's block "
                       "W_O^(1)) must write nothing into columns 2-3.")
        fruit, tech = not np.allclose(M[2, 2:], 0), not np.allclose(M[3, 2:], 0)
        if fruit and not tech:
            out.append("output features 2-3 read head 2's fruit feature (its feature 0, the concatenation's "
                       "feature 2, row 2 of W_O), not its tech feature: that is its feature 1, the "
                       "concatenation's feature 3, row 3 of W_O. (Row r of W_O is what concatenated feature r "
                       "writes; column c is the output feature it writes into.)")
        elif fruit:
            out.append("output features 2-3 change with head 2's fruit feature: row 2 of W_O (the "
                       "concatenation's feature 2) must write nothing into columns 2-3. (Row r of W_O is what "
                       "concatenated feature r writes; column c is the output feature it writes into.)")
        elif not tech:
            out.append("output features 2-3 never see head 2's tech feature (they are always 0 or depend on "
                       "nothing): row 3 of W_O (the concatenation's feature 3) must write into column 2 or 3.")
        return out

    # What the matrix does comes first; that its transpose would be right is a fact about it, said after.
    wrong = problems(W)
    if wrong and not problems(W.T):
        raise ExerciseError(f"W_O_mix is not right yet: {wrong[0]} Its transpose would be right: in "
                            f"concat(heads) W_O the rows of W_O are the inputs (the 4 concatenated head features) "
                            f"and the columns the outputs, so a design written as (output, input) must be "
                            f"transposed.")
    if wrong:
        raise ExerciseError(f"W_O_mix is not right yet: {wrong[0]}")
    rank = int(np.linalg.matrix_rank(W, tol=1e-6))   # entries within 1e-8 of 0 count as 0 above: here too
    if not isinstance(can_recover_fruit, bool | np.bool_):
        raise ExerciseError(f"W_O_mix is right; can_recover_fruit is {can_recover_fruit!r}: answer True or "
                            f"False.")
    if can_recover_fruit:
        raise ExerciseError(
            f"your W_O_mix is right, but can_recover_fruit is not: row 2 of W_O, the only row head 2's fruit "
            f"feature meets, is 0, so two tokens that differ only there get the same output, and no "
            f"read-out of it can tell them apart (W_O_mix has rank {rank}, less than 4).")
    passed(f"rows 0-1 (head 1's block W_O^(1)) write [I | 0], row 2 (head 2's fruit) writes nothing and row 3 "
           f"(head 2's tech) writes only into outputs 2-3: each head reaches the output through its own block "
           f"of rows. Your W_O has rank {rank}: no linear read-out of this output recovers head 2's fruit feature "
           f"(the inputs' fruit still travels on: head 1's values read it, and the residual stream carries X, "
           f"lesson 11).")


# ------------------------------------------------------------------ Exercise 2: the whole layer, batched
class ReadyMadeCalled(Exception):
    """Raised by the stand-ins of ready-made attention layers while a learner's mha_forward runs."""


_READY_MADE_PLACES = {
    "torch": ("scaled_dot_product_attention",),
    "torch.nn": ("MultiheadAttention",),
    "torch.nn.modules.activation": ("MultiheadAttention",),
    "torch.nn.functional": ("scaled_dot_product_attention", "multi_head_attention_forward"),
}
_SA_READY_MADE = ("MultiHeadAttention", "SelfAttention", "attention_weights", "scaled_dot_product_attention",
                  "basic_self_attention")


def ready_made_blocked() -> contextlib.AbstractContextManager[None]:
    """While the block runs, PyTorch's and the course's ready-made attention layers and functions raise
    ReadyMadeCalled, however the learner's code reached them; everything is put back afterwards."""
    places = [(sys.modules.get(name), attrs) for name, attrs in _READY_MADE_PLACES.items()]
    places += [(module, _SA_READY_MADE) for name, module in list(sys.modules.items())
               if (name == "selfattention" or name.startswith("selfattention."))
               and not name.startswith("selfattention.checks")]
    return stand_ins(places, ReadyMadeCalled)


#: (B, T, h, d_k, padded tokens per sequence): B differs from h and T from both, so a wrong axis shows.
_LAYER_SIZES = ((2, 5, 3, 4, (0, 2)), (3, 4, 2, 3, (1, 0, 2)))


def layer_case(B: int, T: int, h: int, d_k: int, padded: tuple[int, ...], seed: int = 7
               ) -> tuple[np.ndarray, ...]:
    """A batch and a layer's weights as nn.MultiheadAttention stores them: X (B, T, d_model), W_in
    (3 d_model, d_model), b_in (3 d_model,), W_out (d_model, d_model), b_out (d_model,), pad (B, T), True at
    the last ``padded[b]`` tokens of sequence b."""
    d = h * d_k
    rng = np.random.default_rng(seed)
    X, W_in, b_in = rng.normal(size=(B, T, d)), rng.normal(size=(3 * d, d)) / np.sqrt(d), rng.normal(size=3 * d)
    W_out, b_out = rng.normal(size=(d, d)) / np.sqrt(d), rng.normal(size=d)
    pad = np.arange(T)[None, :] >= T - np.array(padded)[:, None]
    return X, W_in, b_in, W_out, b_out, pad


def _layer(X: np.ndarray, W_in: np.ndarray, b_in: np.ndarray, W_out: np.ndarray, b_out: np.ndarray,
           pad: np.ndarray, h: int, order: tuple[int, int, int] = (0, 1, 2), in_T: bool = True,
           split: str = "right", divisor: str = "sqrt d_k", mask: str = "keys", out: str = "right",
           in_bias: bool | tuple[bool, bool, bool] = True, out_bias: bool = True, axis: int = -1) -> np.ndarray:
    """The layer, one head at a time (a loop over heads), with one mistake chosen by the keywords."""
    B, T, d = X.shape
    d_k = d // h
    W = [W_in[i * d:(i + 1) * d] for i in order]
    kept = in_bias if isinstance(in_bias, tuple) else (in_bias,) * 3      # which of q, k, v get their bias
    b = [b_in[i * d:(i + 1) * d] * keep for i, keep in zip(order, kept, strict=True)]
    q, k, v = (X @ (Wi.T if in_T else Wi) + bi for Wi, bi in zip(W, b, strict=True))

    def head(Y: np.ndarray, i: int) -> np.ndarray:       # head i's (B, T, d_k) block
        if split == "no transpose":
            return Y.reshape(B, h, T, d_k)[:, i]
        return Y[:, :, i * d_k:(i + 1) * d_k]

    scale = {"sqrt d_k": np.sqrt(d_k), "none": 1.0, "d_k": float(d_k), "sqrt d_model": np.sqrt(d)}[divisor]
    heads = []
    with np.errstate(all="ignore"):
        for i in range(h):
            s = head(q, i) @ np.swapaxes(head(k, i), 1, 2) / scale          # (B, T, T)
            if mask == "keys":
                s = np.where(pad[:, None, :], -np.inf, s)
            elif mask == "zero":
                s = np.where(pad[:, None, :], 0.0, s)
            elif mask == "kept":
                s = np.where(~pad[:, None, :], -np.inf, s)
            elif mask == "queries":
                s = np.where(pad[:, :, None], -np.inf, s)
            elif mask == "queries, finite":
                s = np.where(pad[:, :, None], -1e9, s)
            e = np.exp(s - s.max(axis=axis, keepdims=True))
            a = e / e.sum(axis=axis, keepdims=True)
            if mask == "zeroed after":                                     # weights of padding keys set to 0
                a = np.where(pad[:, None, :], 0.0, a)
            heads.append(a @ head(v, i))
    Z = np.stack(heads, axis=2)                                            # (B, T, h, d_k)
    Z = Z.transpose(0, 2, 1, 3).reshape(B, T, d) if split == "no transpose back" else Z.reshape(B, T, d)
    if out == "missing":
        return Z
    return Z @ (W_out.T if out == "right" else W_out) + b_out * out_bias


_ORDER = "the queries use W_in[:d_model], the keys W_in[d_model:2*d_model], the values W_in[2*d_model:]"
_MASK_ROWS = ("the padding mask was applied to the queries (the rows of the scores) instead of the keys (the "
              "columns): for scores of shape (B, h, T, T) the mask goes in as pad[:, None, None, :]")
#: (what the learner did, the keywords of _layer that do it): each wrong output is compared with each.
_LAYER_MISTAKES: list[tuple[str, dict[str, Any]]] = [
    (f"the in_proj blocks are read in the order {''.join('QKV'[o.index(i)] for i in range(3))}: PyTorch stacks "
     f"W_Q^T, W_K^T, W_V^T (d_model rows each) in that order, so {_ORDER}", {"order": o})
    for o in ((0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0))] + [
    ("the projections multiply by the stored block itself (X @ W): PyTorch stores each weight as nn.Linear "
     "does, (out, in), so the queries are X @ W_in[:d_model].T + b_in[:d_model]", {"in_T": False}),
    ("the heads were split by a reshape straight to (B, h, T, d_k), without the transpose: reshape reads each "
     "sequence row after row, so a head gets pieces of several tokens. Reshape to (B, T, h, d_k), then swap "
     "axes 1 and 2", {"split": "no transpose"}),
    ("the heads were merged by a reshape of (B, h, T, d_k) straight to (B, T, d_model): a token's row gets "
     "pieces of other tokens. Swap axes 1 and 2 back to (B, T, h, d_k) first, then reshape",
     {"split": "no transpose back"}),
    ("the scores were not divided by sqrt(d_k)", {"divisor": "none"}),
    ("the scores were divided by d_k instead of sqrt(d_k)", {"divisor": "d_k"}),
    ("the scores were divided by sqrt(d_model) instead of sqrt(d_k), the width of one head",
     {"divisor": "sqrt d_model"}),
    ("the padding mask is not applied: the keys where pad is True must get -inf before the softmax",
     {"mask": "none"}),
    ("the padding mask is inverted: pad is True at the padding, whose keys get -inf; the real tokens keep "
     "their scores", {"mask": "kept"}),
    ("the padding keys' scores were set to 0, not -inf: a score of 0 still gets exp(0 - max) > 0 in the "
     "softmax, so the padding keeps some weight. Put -inf (np.where(pad[:, None, None, :], -np.inf, scores)) "
     "before the softmax", {"mask": "zero"}),
    ("the padding keys' weights were set to 0 after the softmax, so each row of weights with padding sums to "
     "less than 1: the padding's share is lost, not shared out among the real keys. Put -inf into the scores "
     "of the padding keys before the softmax (or divide each row of weights by its new sum)",
     {"mask": "zeroed after"}),
    (_MASK_ROWS, {"mask": "queries"}),
    (_MASK_ROWS, {"mask": "queries, finite"}),
    ("W_O is applied as stored, Z @ W_out: out_proj is an nn.Linear too, (out, in), so the output is "
     "Z @ W_out.T + b_out", {"out": "transposed"}),
    ("W_O is missing: after merging the heads, apply out_proj, Z @ W_out.T + b_out", {"out": "missing"}),
    ("the in_proj bias is left out: add b_in's blocks to the projections (b_in[:d_model] to the queries, ...)",
     {"in_bias": False}),
    ("the out_proj bias is left out: the output is Z @ W_out.T + b_out", {"out_bias": False}),
    ("both biases are left out: add b_in's blocks to the projections and b_out to the output",
     {"in_bias": False, "out_bias": False}),
    ("the softmax runs down the columns (over the queries, axis -2); each query's weights over the keys must "
     "sum to 1: softmax along the last axis", {"axis": -2}),
] + [
    (f"the in_proj bias is added to the {' and '.join(n for n, k in zip(('queries', 'keys', 'values'), kept, strict=True) if k)} "
     f"only: b_in[:d_model] goes to the queries, b_in[d_model:2*d_model] to the keys, b_in[2*d_model:] to the "
     f"values", {"in_bias": kept})
    for kept in ((True, False, False), (False, True, False), (False, False, True), (True, True, False),
                 (True, False, True), (False, True, True))]


def _as_array(got: Any, name: str) -> np.ndarray:
    if hasattr(got, "detach"):
        got = got.detach().cpu().numpy()
    try:
        return np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        raise ExerciseError(f"{name} should be an array of numbers; got {type(got).__name__}: {got!r:.60}") from None


def _torch_layer(X: np.ndarray, W_in: np.ndarray, b_in: np.ndarray, W_out: np.ndarray, b_out: np.ndarray,
                 pad: np.ndarray, h: int) -> np.ndarray:
    """torch.nn.MultiheadAttention(batch_first=True) with these weights (run outside the stand-ins)."""
    import torch

    d = X.shape[-1]
    mha = torch.nn.MultiheadAttention(d, h, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.as_tensor(W_in))
        mha.in_proj_bias.copy_(torch.as_tensor(b_in))
        mha.out_proj.weight.copy_(torch.as_tensor(W_out))
        mha.out_proj.bias.copy_(torch.as_tensor(b_out))
        x = torch.as_tensor(X)
        out, _ = mha(x, x, x, key_padding_mask=torch.as_tensor(pad), need_weights=False)
    return out.numpy()


def counted_call(fn: Callable[..., Any], case: tuple[np.ndarray, ...], h: int) -> tuple[Any, int]:
    """``fn(*case, h)``, after one warm-up call, with how many lines of Python ran in it: (its result, lines).
    A layer that works on every head at once runs the same lines whatever h; a loop over heads (for, a
    comprehension, map; with ``@``, einsum, np.dot or torch) runs more when h grows."""
    return lines_run(fn, [(*case, h)])[0]


#: (B, T, d_model) and the numbers of heads of the loop test: the same batch and width, only h changes.
_LOOP_CASE, _LOOP_HEADS = (2, 5, (0, 2)), (1, 3, 2, 4)


def _lines_per_h(fn: Callable[..., Any]) -> dict[int, int] | None:
    """{h: lines of Python that ``fn`` runs} on one batch of d_model = 12 for each h of :data:`_LOOP_HEADS`
    (after a warm-up call); None when it raises."""
    B, T, padded = _LOOP_CASE
    calls = [(*layer_case(B, T, h, 12 // h, padded), h) for h in _LOOP_HEADS]

    def guard() -> contextlib.AbstractContextManager[None]:
        stack = contextlib.ExitStack()
        stack.enter_context(np.errstate(all="ignore"))
        stack.enter_context(ready_made_blocked())
        return stack

    try:
        counts = lines_run(fn, calls, guard)
    except Exception:   # noqa: BLE001 - the right outputs were already checked; say nothing more here
        return None
    return {h: n for h, (_, n) in zip(_LOOP_HEADS, counts, strict=True)}


def _shape_hint(text: str, B: int, T: int, d: int, h: int) -> str:
    """What a numpy or torch shape error says about the learner's mistake, from the sizes it names."""
    shapes = re.findall(r"\(([\d, ]*)\)", text)
    sizes = {int(n) for shape in shapes for n in re.findall(r"\d+", shape)}
    sizes |= {int(n) for n in re.findall(r"size (\d+)", text)}
    if 3 * d in sizes or 0 in sizes:
        met = f"{3 * d} = 3 d_model" if 3 * d in sizes else "0 (an empty slice)"
        return (f" A product met a size of {met} where d_model = {d} should be: W_in holds three blocks, and "
                f"they are its rows, not its columns. W_in is (3 d_model, d_model) = ({3 * d}, {d}): "
                f"W_in[:d_model] is W_Q^T, W_in[d_model:2*d_model] W_K^T, W_in[2*d_model:] W_V^T, so the "
                f"queries are X @ W_in[:d_model].T + b_in[:d_model].")
    if "broadcast" in text or "must match the size" in text:
        return (f" The scores are (B, h, T, T) = ({B}, {h}, {T}, {T}) and pad is (B, T) = ({B}, {T}): to "
                f"reach every head and every query, the mask needs the shape (B, 1, 1, T), pad[:, None, "
                f"None, :].")
    if "axes don't match" in text or "number of dims" in text:
        return " The arrays have 4 axes here, (B, h, T, d_k): transpose takes 4, the batch axis staying first."
    return ""


def _run_layer(fn: Callable[..., Any], case: tuple[np.ndarray, ...], h: int) -> np.ndarray:
    given = tuple(a.copy() for a in case)
    try:
        with ready_made_blocked(), np.errstate(all="ignore"):
            got = fn(*given, h)
    except ReadyMadeCalled:
        raise ExerciseError("mha_forward called a ready-made attention (PyTorch's nn.MultiheadAttention, "
                            "F.multi_head_attention_forward, F.scaled_dot_product_attention or the course's "
                            "layers): writing the layer is the exercise. sa.softmax and torch.softmax are "
                            "allowed.") from None
    except NotImplementedError:
        raise ExerciseError("mha_forward still raises NotImplementedError: replace that line.") from None
    except Exception as exc:
        B, T, d = case[0].shape
        hint = _shape_hint(str(exc), B, T, d, h)
        raise ExerciseError(f"mha_forward raised {type(exc).__name__} with B = {B}, T = {T}, d_model = {d}, "
                            f"h = {h}: {exc}.{hint}") from None
    if any(not np.array_equal(a, b) for a, b in zip(given, case, strict=True)):
        raise ExerciseError("mha_forward changed one of its inputs in place: return a new array and leave "
                            "X, the weights and pad as they were.")
    if got is None:
        raise ExerciseError("mha_forward returned None: return the (B, T, d_model) output.")
    if isinstance(got, tuple):
        raise ExerciseError(f"mha_forward returned a tuple of {len(got)}: return only the (B, T, d_model) "
                            f"output (PyTorch's layer also returns the weights; this exercise does not).")
    return _as_array(got, "mha_forward's output")


def _same(got: np.ndarray, slip: np.ndarray) -> bool:
    """Whether ``got`` is the output of that slip: equal wherever the slip's output is a number (where a whole
    row of scores is -inf its softmax is undefined, and a softmax may give NaN, 0 or uniform weights there)."""
    finite = np.isfinite(slip)
    return bool(finite.any()) and np.allclose(got[finite], slip[finite], atol=1e-6)


def check_mha_layer(mha_forward: Any) -> None:
    """Exercise 2: ``mha_forward(X, W_in, b_in, W_out, b_out, pad, h)`` is the multi-head layer of
    torch.nn.MultiheadAttention(batch_first=True) with those weights (in_proj_weight, in_proj_bias,
    out_proj.weight, out_proj.bias) and key_padding_mask ``pad``, for a batch X (B, T, d_model). It runs with
    the ready-made attentions switched off; its output must match PyTorch's and a loop over heads."""
    if mha_forward is None or mha_forward is Ellipsis or not callable(mha_forward):
        raise ExerciseError("mha_forward is not a function yet: write it in the answer cell above.")
    for B, T, h, d_k, padded in _LAYER_SIZES:
        case = layer_case(B, T, h, d_k, padded)
        right = _torch_layer(*case, h)
        if not np.allclose(right, _layer(*case, h), atol=1e-9):      # the loop over heads agrees with PyTorch
            raise AssertionError("lesson 07's reference layer disagrees with torch.nn.MultiheadAttention")
        sizes = f"B = {B}, T = {T}, h = {h}, d_k = {d_k}, d_model = {h * d_k}"
        got = _run_layer(mha_forward, case, h)
        if got.shape != right.shape:
            hint = ""
            if got.shape == (B, h, T, d_k):
                hint = ": these are the heads' outputs before the merge; merge them to (B, T, d_model), then apply W_O"
            raise ExerciseError(f"mha_forward with {sizes} returned shape {got.shape}; it should be (B, T, "
                                f"d_model) = {right.shape}{hint}.")
        if np.allclose(got, right, atol=1e-6):
            continue
        why = next((text for text, kw in _LAYER_MISTAKES if _same(got, _layer(*case, h, **kw))), None)
        if why is None and np.allclose(got, case[4], atol=1e-6):
            why = ("every token's output is b_out alone: every weight came out 0 (or NaN), so no value reached "
                   "the output. A mask built as pad * -inf does this: 0 * inf is NaN, which spoils the real "
                   "keys' scores too. Use np.where(pad[:, None, None, :], -np.inf, scores)")
        if why is None:
            ok = np.isclose(got, right, atol=1e-6).all(axis=(1, 2))
            padded_seq = case[5].any(axis=1)
            if ok.any() and np.array_equal(ok, ~padded_seq):
                why = ("the sequences without padding are right, those with padding are not: recheck the mask "
                       "(True in pad marks a padding key, which gets -inf in every head and every query's row)")
            else:
                i = tuple(int(j) for j in np.argwhere(~np.isclose(got, right, atol=1e-6))[0])
                why = (f"at [{i[0]}, {i[1]}, {i[2]}] (sequence {i[0]}, token {i[1]}, feature {i[2]}) you have "
                       f"{got[i]:.4f}, nn.MultiheadAttention gives {right[i]:.4f}; no single slip the check "
                       f"knows explains it. Go step by step: in_proj (W_in rows: W_Q^T, W_K^T, W_V^T), split, "
                       f"scores / sqrt(d_k), mask on the keys, softmax, weighted values, merge, out_proj")
        raise ExerciseError(f"mha_forward with {sizes} is not right yet: {why}.")
    lines = _lines_per_h(mha_forward)
    grows = [(a, b) for a, b in ((1, 3), (2, 4)) if lines is not None and lines[b] > lines[a]]
    if grows:
        a, b = grows[0]
        raise ExerciseError(
            f"mha_forward's output is right, but it loops over heads: on the same batch and d_model = 12 it ran "
            f"{lines[a]} lines of Python with h = {a} and {lines[b]} with h = {b}, so some of its work repeats "
            f"once per head (a for, a comprehension or map, whatever multiplies inside: @, einsum, np.dot or "
            f"torch). The exercise asks for no loop over heads: split with reshape and transpose, and each "
            f"step is one product for every head.")
    passed("mha_forward matches torch.nn.MultiheadAttention(batch_first=True) and a loop over heads for "
           f"(B, T, h, d_k) = {_LAYER_SIZES[0][:4]} and {_LAYER_SIZES[1][:4]}, padding included: one batched "
           "product per step replaces the loop over heads, and the weights are read as PyTorch stores them.")
