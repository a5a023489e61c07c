"""Checks for lesson 07 (multi-head attention): the factor on head 2's W_Q that sharpens its row of "apple", the heads
read off a packed layer, a W_O designed to mix the heads."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._engine import ExerciseError, _to_array, passed, reference_softmax

__all__ = ["check_head2_sharpen", "check_mixing_W_O", "check_packed_heads", "PACKED_W_Q", "PACKED_W_K"]

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


# ------------------------------------------------------------------ Exercise 2: read the heads off a packed layer
PACKED_W_Q = np.array([[-1, 1, 2, 0], [-1, 0, 0, 0], [2, 0, 0, 2], [2, 0, -1, 2]], dtype=float)
PACKED_W_K = np.array([[2, 1, -1, 0], [2, 0, 2, 0], [2, 1, -1, 1], [-1, 1, -1, 0]], dtype=float)


def _packed_weights(reading: str = "right") -> np.ndarray:
    """(2, T, T): each head's weights on the worked example's X for the packed W_Q, W_K above, the heads read
    the right way (head i: columns 2(i-1) and 2(i-1)+1) or, through ``reading``, a typical wrong way."""
    T, h, d_k = 4, 2, 2
    Q, K = _X @ PACKED_W_Q, _X @ PACKED_W_K

    def blocks(M: np.ndarray) -> np.ndarray:
        return M.reshape(T, h, d_k).transpose(1, 0, 2)

    if reading in ("argmax axis 0", "weights axis 0"):
        S = blocks(Q) @ blocks(K).transpose(0, 2, 1)
        return S if reading == "argmax axis 0" else reference_softmax(S / np.sqrt(d_k), axis=-1)
    if reading == "input split":   # each head reads only d_k input features: X[:, s] @ W_Q_packed[s][:, s]
        cols = (slice(0, d_k), slice(d_k, 2 * d_k))
        return np.stack([reference_softmax((_X[:, s] @ PACKED_W_Q[s][:, s]) @ (_X[:, s] @ PACKED_W_K[s][:, s]).T
                                           / np.sqrt(d_k), axis=-1) for s in cols])
    if reading == "softmax axis 0":   # each column normalised over the queries, then each row's largest
        return reference_softmax(blocks(Q) @ blocks(K).transpose(0, 2, 1) / np.sqrt(d_k), axis=1)
    if reading == "transposed":   # X @ W_Q_packed.T and X @ W_K_packed.T
        Q, K = _X @ PACKED_W_Q.T, _X @ PACKED_W_K.T
    if reading == "queries as keys":
        K = Q
    if reading == "interleaved":
        Qs, Ks = (M.reshape(T, d_k, h).transpose(2, 0, 1) for M in (Q, K))
    elif reading == "straight":
        Qs, Ks = Q.reshape(h, T, d_k), K.reshape(h, T, d_k)
    elif reading == "full width":
        full = reference_softmax(Q @ K.T / np.sqrt(4), axis=-1)
        return np.stack([full, full])
    else:
        Qs, Ks = blocks(Q), blocks(K)
    weights = reference_softmax(Qs @ Ks.transpose(0, 2, 1) / np.sqrt(d_k), axis=-1)
    return weights[::-1] if reading == "swapped" else weights


def packed_top_keys(reading: str = "right") -> list[list[str]]:
    """[[head 1's top key for each query], [head 2's]] as token names, read as ``reading`` says."""
    if reading == "argmin":
        return [[_TOKENS[j] for j in head.argmin(-1)] for head in _packed_weights()]
    if reading in ("argmax axis 0", "weights axis 0"):   # the largest of each column: over the queries
        return [[_TOKENS[j] for j in head.argmax(0)] for head in _packed_weights(reading)]
    return [[_TOKENS[j] for j in head.argmax(-1)] for head in _packed_weights(reading)]


_AXIS_0 = ("you took the largest entry of each column (argmax over axis 0, which runs over the queries; "
           "scoring keys against queries, K Q^T, gives the same), "
           "not of each row: query i's most weighted key is the largest entry of row i of its head's q_i . k_j "
           "or weights, argmax over axis 1 (the keys).")
_PACKED_MISTAKES = {
    "argmax axis 0": _AXIS_0,   # the same answer as scoring keys against queries: K Q^T is (Q K^T)^T
    "weights axis 0": _AXIS_0,
    "argmin": "every entry is the key each query weights least (argmin instead of argmax): the exercise asks "
              "for the most weighted key of each query, the largest entry of its row.",
    "swapped": "your two rows are the heads swapped: head 1 owns the first d_k = 2 columns of the packed W_Q and "
               "W_K (columns 0-1), head 2 the next two (columns 2-3).",
    "interleaved": "you gave head 1 columns 0 and 2 and head 2 columns 1 and 3 (every other column, as a reshape "
                   "to (T, d_k, h) would): a head owns d_k = 2 neighbouring columns, head 1 columns 0-1, head 2 "
                   "columns 2-3.",
    "straight": "these are the heads of a reshape straight to (h, T, d_k), which cuts the flat list of numbers "
                "across tokens: split each token's row into heads, head 1 columns 0-1 and head 2 columns 2-3 of "
                "X W_Q and X W_K.",
    "input split": "each head read only d_k = 2 input features (X[:, s] @ W_Q_packed[s][:, s]): only the "
                   "projected columns are split. Every head's W_Q reads all d_model = 4 features of a token: "
                   "X @ W_Q_packed[:, s], with s the head's columns (0-1 or 2-3), and likewise for W_K.",
    "softmax axis 0": "you normalised each column (softmax over axis 0, the queries) and then took each row's "
                      "largest: a query's weights are the softmax of its own row of q_i . k_j, over the keys "
                      "(axis -1); with that softmax, or none, the row's argmax is its top key.",
    "transposed": "you multiplied by the transposed matrices (X @ W_Q_packed.T): the packed W_Q is "
                  "(d_model, h d_k), so X @ W_Q_packed gives the queries, whose columns 0-1 are head 1's; likewise X @ W_K_packed.",
    "queries as keys": "you scored the queries against themselves (Q @ Q.T): the keys are X @ W_K_packed, so each "
                       "head's scores are its columns of Q times the transpose of the same columns of K.",
    "full width": "both rows are the same one full-width head (all 4 columns of W_Q and W_K, divided by sqrt(4)): "
                  "each head uses only its own d_k = 2 columns, divided by sqrt(2).",
}


def check_packed_heads(top_keys: Any) -> None:
    """Exercise 2: for the packed PACKED_W_Q, PACKED_W_K (num_heads = 2, d_k = 2) on the worked example's X,
    ``top_keys[h][i]``: the token that query i weights most in head h + 1, as a token name."""
    if top_keys is None or top_keys is Ellipsis:
        raise ExerciseError("top_keys is still empty: give two lists of four token names, one per head.")
    if not isinstance(top_keys, str) and hasattr(top_keys, "__len__") and all(
            isinstance(t, str) for t in top_keys):
        raise ExerciseError(f"top_keys should be two lists (head 1, head 2) of four token names, a list of h = "
                            f"2 lists, one per head; got a flat list of {len(top_keys)} names. Group them: "
                            f"[[head 1's top key for I, love, apple, phones], [head 2's]].")
    try:
        rows = [[str(t) for t in row] for row in top_keys]
    except TypeError:
        raise ExerciseError(f"top_keys should be two lists of four token names; got {top_keys!r}.") from None
    if len(rows) != 2 or any(len(row) != 4 for row in rows):
        raise ExerciseError(f"top_keys should be two lists (head 1, head 2) of four token names (one per query: "
                            f"I, love, apple, phones); got lengths {[len(r) for r in rows]}.")
    unknown = sorted({t for row in rows for t in row} - set(_TOKENS))
    if unknown:
        raise ExerciseError(f"top_keys holds {unknown}: write each key as one of the token names {list(_TOKENS)}.")
    right = packed_top_keys()
    if rows == right:
        w = _packed_weights()
        shown = "; ".join(f"head {h + 1}: " + ", ".join(f"{_TOKENS[i]} -> {right[h][i]} ({w[h, i].max():.2f})"
                                                         for i in range(4)) for h in range(2))
        passed(f"{shown}. Head i is the d_k = 2 columns (i-1) d_k to i d_k - 1 of the packed W_Q and W_K: "
               f"the split keeps those columns together, and each head looks its own way.")
        return
    for reading, text in _PACKED_MISTAKES.items():
        if rows == packed_top_keys(reading):
            raise ExerciseError(f"top_keys is not right yet: {text}")
    wrong = [f"head {h + 1}, query \"{_TOKENS[i]}\"" for h in range(2) for i in range(4) if rows[h][i] != right[h][i]]
    raise ExerciseError(f"top_keys is not right yet at {', '.join(wrong)}. Take head h's columns of X W_Q and X W_K "
                        f"(head 1: columns 0-1, head 2: columns 2-3); in row i of q_i . k_j the largest score "
                        f"gets the largest weight.")
