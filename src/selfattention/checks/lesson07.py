"""Checks for lesson 07 (multi-head attention): the factor on head 2's W_Q that sharpens its row of "apple", heads
split and merged for a batch, a W_O designed to mix the heads."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._engine import ExerciseError, _to_array, passed, reference_softmax

__all__ = ["check_head2_sharpen", "check_mixing_W_O", "check_split_merge"]

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


def check_head2_sharpen(apple_scores_2: Any, c_phones: Any) -> None:
    """Exercise 1: head 2's raw scores of "apple" against the four keys (4 numbers, within 0.01), and the
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
                            f"exp(c s_j / sqrt(2)) over the four raw scores s_j; it grows with c.")
    approx = np.sqrt(2) * np.log(9) / (right_s[3] - right_s[2])
    passed(f"apple's raw scores in head 2 are {np.round(right_s, 2).tolist()}; at c = 1 \"phones\" gets "
           f"{_weight_on_phones(1.0, right_s):.3f}, and c = {right_c:.3f} lifts it to 0.9. \"apple\"'s own key "
           f"alone would give c = {approx:.3f}; the keys of \"I\" and \"love\" ask for a little more. A head "
           f"is sharpened by the size of its scores, which training sets through W_Q and W_K.")


# ------------------------------------------------------------------ exercise 3: a W_O that routes the heads
def check_mixing_W_O(W_O_mix: Any, can_recover_fruit: Any = None) -> None:
    """Exercise 3: a (4, 4) W_O for two heads of d_k = 2 (concatenation [head 1's 2 features | head 2's fruit,
    tech]) such that, for every token, output features 0-1 are head 1's output unchanged and output features
    2-3 depend on head 2 only through its tech feature (concatenation feature 3), not always 0. Many W_O do.
    ``can_recover_fruit`` (True/False): can a later layer recover head 2's fruit feature from the output? No:
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

    # A right design written in (out, in) order: the order is named first, then what it does as written.
    wrong = problems(W)
    if wrong and not problems(W.T):
        raise ExerciseError(f"W_O_mix is not right yet, but its transpose is: it reads as written in (out, in) order. In "
                            f"concat(heads) W_O the rows of W_O are the inputs (the 4 concatenated head "
                            f"features) and the columns the outputs; as written, {wrong[0]}")
    if wrong:
        raise ExerciseError(f"W_O_mix is not right yet: {wrong[0]}")
    rank = int(np.linalg.matrix_rank(W))
    if not isinstance(can_recover_fruit, bool | np.bool_):
        raise ExerciseError(f"W_O_mix is right; can_recover_fruit is {can_recover_fruit!r}: answer True or "
                            f"False.")
    if can_recover_fruit:
        raise ExerciseError(
            f"your W_O_mix is right, but can_recover_fruit is not: row 2 of W_O, the only row head 2's fruit "
            f"feature meets, is 0, so two tokens that differ only there get the same output, and no later "
            f"layer can tell them apart (W_O_mix has rank {rank}, less than 4).")
    passed(f"rows 0-1 (head 1's block W_O^(1)) write [I | 0], row 2 (head 2's fruit) writes nothing and row 3 "
           f"(head 2's tech) writes only into outputs 2-3: each head reaches the output through its own block "
           f"of rows. Your W_O has rank {rank}: head 2's fruit feature is gone for good.")


# ------------------------------------------------------------------ Exercise 2: split and merge heads in a batch
_SIZES = ((2, 3, 4, 5), (3, 5, 2, 4))     # (B, T, h, d_k): every size different, so a wrong axis shows


def _as_array(got: Any, name: str) -> np.ndarray:
    if hasattr(got, "detach"):
        got = got.detach().cpu().numpy()
    try:
        return np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        raise ExerciseError(f"{name} should be an array of numbers; got {type(got).__name__}: {got!r:.60}") from None


def _call(fn: Callable[..., Any], name: str, *args: Any) -> np.ndarray:
    try:
        got = fn(*args)
    except NotImplementedError:
        raise ExerciseError(f"{name} still raises NotImplementedError: replace that line.") from None
    except ValueError as exc:
        if "axes don't match" in str(exc):
            raise ExerciseError(f"{name} raised \"{exc}\": the array has 4 axes here, (B, ...), so transpose "
                                f"takes 4 (the batch axis 0 stays in front).") from None
        if "reshape" in str(exc):
            raise ExerciseError(f"{name} raised \"{exc}\": read the sizes from the array's shape (and h) "
                                f"rather than typing them.") from None
        raise ExerciseError(f"{name} raised ValueError: {exc}") from None
    except Exception as exc:
        raise ExerciseError(f"{name} raised {type(exc).__name__}: {exc}") from None
    if got is None:
        raise ExerciseError(f"{name} returned None: return the new array.")
    return _as_array(got, name)


def _split_shape_hint(shape: tuple[int, ...], B: int, T: int, h: int, d_k: int) -> str:
    known = {(B, T, h, d_k): "the reshape to (B, T, h, d_k) is there, but not the transpose that makes the "
                             "head axis 1",
             (h, B, T, d_k): "the head axis came first: the batch axis must stay axis 0, so swap axes 1 and 2 "
                             "only: transpose(0, 2, 1, 3)",
             (B, h, d_k, T): "the last two axes are (d_k, T): swap axes 1 and 2 of (B, T, h, d_k), not more",
             (B, d_k, T, h): "the reshape was (B, T, d_k, h): each token's row is cut into h blocks OF d_k "
                             "features, so the reshape is (B, T, h, d_k)",
             (h, T, d_k): "the batch axis is gone: this is lesson 07's (h, T, d_k) for one sequence; the batch "
                          "axis stays in front"}
    return known.get(shape, "")


def check_split_merge(split_heads: Any, merge_heads: Any) -> None:
    """Exercise 2: ``split_heads(Y, h)`` turns (B, T, d_model) into (B, h, T, d_k), head i holding the d_k
    neighbouring columns i d_k .. (i+1) d_k - 1 of each token's row; ``merge_heads(Z)`` undoes it."""
    for fn, name in ((split_heads, "split_heads"), (merge_heads, "merge_heads")):
        if fn is None or fn is Ellipsis or not callable(fn):
            raise ExerciseError(f"{name} is not a function yet: write it in the answer cell above.")
    for B, T, h, d_k in _SIZES:
        Y = np.arange(B * T * h * d_k, dtype=float).reshape(B, T, h * d_k)   # each entry names its place
        right = Y.reshape(B, T, h, d_k).transpose(0, 2, 1, 3)
        sizes = f"B = {B}, T = {T}, h = {h}, d_k = {d_k}"
        given = Y.copy()
        got = _call(split_heads, "split_heads", given, h)
        if not np.array_equal(given, Y):
            raise ExerciseError("split_heads changed its input Y in place: return a new array, leave Y as it was.")
        if got.shape != right.shape:
            hint = _split_shape_hint(got.shape, B, T, h, d_k)
            first = _SIZES[0]
            if (B, T, h, d_k) != first and got.shape == (first[0], first[2], first[1], first[3]):
                hint = ("that is the shape for the first sizes tried: take B, T and d_model from Y.shape and "
                        "d_k = d_model // h rather than typing numbers")
            raise ExerciseError(f"split_heads(Y, h) with Y of shape {Y.shape} ({sizes}) returned shape "
                                f"{got.shape}; it should be (B, h, T, d_k) = {right.shape}"
                                + (f": {hint}." if hint else "."))
        if not np.allclose(got, right):
            wrong = {
                "reshaped straight to (B, h, T, d_k), without the transpose: reshape reads the numbers row "
                "after row, so this cuts them in the wrong places and a head gets pieces of several tokens. "
                "Reshape to (B, T, h, d_k) first, then swap axes 1 and 2":
                    Y.reshape(B, h, T, d_k),
                "head i got every h-th column (i, i + h, ...) instead of its d_k neighbouring columns "
                "i d_k to (i+1) d_k - 1: the reshape must be (B, T, h, d_k), head before feature":
                    Y.reshape(B, T, d_k, h).transpose(0, 3, 1, 2),
                "the heads are in reverse order: head 0 must hold the first d_k columns":
                    right[:, ::-1],
            }
            why = next((text for text, arr in wrong.items() if arr.shape == got.shape and np.allclose(got, arr)),
                       None)
            if why is None and len(_SIZES) and (B, T, h, d_k) != _SIZES[0]:
                why = (f"right for the first sizes tried, wrong for {sizes}: take B, T and d_model from "
                       f"Y.shape and d_k = d_model // h rather than typing numbers")
            if why is None:
                i = tuple(int(j) for j in np.argwhere(~np.isclose(got, right))[0])
                why = (f"at index {i} (batch {i[0]}, head {i[1]}, token {i[2]}, feature {i[3]}) you have "
                       f"{got[i]:g}, the right value is {right[i]:g}: head i holds columns i d_k to "
                       f"(i+1) d_k - 1 of each token's row")
            raise ExerciseError(f"split_heads(Y, h) with {sizes} is not right yet: {why}.")
        Z = right.copy()
        back = _call(merge_heads, "merge_heads", Z)
        if back.shape != Y.shape:
            hint = (": the transpose back is there, not the reshape that joins the heads' d_k features"
                    if back.shape == (B, T, h, d_k) else
                    ": merge_heads must read h and d_k from Z's shape (B, h, T, d_k)")
            raise ExerciseError(f"merge_heads(Z) with Z of shape {Z.shape} ({sizes}) returned shape "
                                f"{back.shape}; it should be (B, T, h d_k) = {Y.shape}{hint}.")
        if not np.allclose(back, Y):
            wrong = {
                "it reshaped (B, h, T, d_k) straight to (B, T, h d_k) without transposing back: a token's row "
                "gets pieces of other tokens. Transpose to (B, T, h, d_k) first, then reshape":
                    right.reshape(B, T, h * d_k),
                "each token's row interleaves the heads' features (head 0's first, head 1's first, ...): "
                "transpose to (B, T, h, d_k), head before feature, then reshape":
                    right.transpose(0, 2, 3, 1).reshape(B, T, h * d_k),
            }
            why = next((text for text, arr in wrong.items() if np.allclose(back, arr)), None)
            if why is None:
                why = ("it is not the inverse of split_heads: merge_heads(split_heads(Y, h)) must give Y back; "
                       "transpose to (B, T, h, d_k), then reshape to (B, T, h d_k)")
            raise ExerciseError(f"merge_heads(Z) with {sizes} is not right yet: {why}.")
    passed(f"split_heads and merge_heads are right for (B, T, h, d_k) = {_SIZES[0]} and {_SIZES[1]}: head i "
           f"holds columns i d_k to (i+1) d_k - 1 of every token in every sequence, and merging gives Y back.")
