"""Checks for lesson 07 (multi-head attention): "apple" through the two-head layer by hand, heads
the whole layer batched as PyTorch stores it, a W_O designed to mix the heads."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ._engine import ExerciseError, _to_array, lines_run, passed, reference_softmax
from ._ready_made import ReadyMadeCalled, ready_made
from ._ready_made import ready_made_blocked as _blocked

__all__ = ["check_apple_output", "check_mha_layer", "check_mixing_W_O"]

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
_HAND_TOL = 0.01  # a hand computation to 2 decimals
_OUT_TOL = 0.005  # out_apple: tight enough that z^(1) of "I" (0.007 off in feature 0) is not "apple"'s


def _hand_array(got: Any, name: str, size: int) -> np.ndarray:
    arr = _to_array(got, name)
    if arr.size != size:
        raise ExerciseError(f"{name} has shape {arr.shape}; it should hold {size} numbers.")
    arr = arr.reshape(-1)
    if not np.all(np.isfinite(arr)):
        raise ExerciseError(f"{name} contains NaN or infinite values.")
    return arr


def _head(W: tuple[np.ndarray, ...], divisor: float = np.sqrt(2), axis: int = -1) -> np.ndarray:
    """A head's outputs Z (T, d_k) on the worked example, its softmax over ``axis`` of Omega / ``divisor``."""
    Q, K, V = (_X @ m for m in W)
    return reference_softmax(Q @ K.T / divisor, axis=axis) @ V


#: Exercise 1's output projection (rows: the 4 concatenated features, columns: the 4 output features):
#: output 0 = head 1's feature 0 + head 2's tech, 1 = head 2's fruit, 2 = head 1's feature 1, 3 = fruit - tech.
W_O_EX = np.array([[1, 0, 0, 0], [0, 0, 1, 0], [0, 1, 0, 1], [1, 0, 0, -1]], dtype=float)


def _apple_right() -> tuple[np.ndarray, np.ndarray]:
    """(z_apple^(2) (2,), the layer's output row of "apple" after W_O_EX (4,))."""
    z1, z2 = _head(_HEAD1)[_APPLE], _head(_HEAD2)[_APPLE]
    return z2, np.concatenate([z1, z2]) @ W_O_EX


def apple_out_from(z2_apple: Any) -> np.ndarray:
    """The output row of "apple" that carries the learner's own (accepted, maybe rounded) z2_apple:
    [z^(1)_apple | z2_apple] @ W_O_EX, z^(1)_apple from head 1's printed table. Exercise 1's hidden test
    accepts it as the check does, so a z2_apple right to 2 decimals, carried on, is not marked wrong."""
    return np.concatenate([_head(_HEAD1)[_APPLE], _hand_array(z2_apple, "z2_apple", 2)]) @ W_O_EX


def _z2_mistakes() -> dict[str, np.ndarray]:
    """{mistake: the z_apple^(2) it gives}."""
    V2 = _X @ _HEAD2[2]
    A2 = reference_softmax((_X @ _HEAD2[0]) @ (_X @ _HEAD2[1]).T / np.sqrt(2), axis=-1)
    return {
        "this is head 1's output for \"apple\" (the rows of head 1's table); head 2 averages its own values "
        "V2 with its own weights.": _head(_HEAD1)[_APPLE],
        "these weights come from the raw scores, not divided by sqrt(d_k) = sqrt(2) before the softmax.":
            _head(_HEAD2, divisor=1.0)[_APPLE],
        "this softmax ran down a column (over the queries, axis 0); each query's weights are a softmax along "
        "its row, over the keys, and sum to 1.": _head(_HEAD2, axis=0)[_APPLE],
        "this uses the column of \"apple\" in head 2's weights (how much each word attends to \"apple\"); "
        "z_apple averages the values with the row of \"apple\", alpha_apple,j.": A2[:, _APPLE] @ V2,
        "the two features are in reverse order (or the weights averaged the keys K2, not the values V2): "
        "z_apple = sum_j alpha_apple,j v_j, with v_j the rows of V2, [fruit, tech].": _head(_HEAD2)[_APPLE][::-1],
        "the weights were rounded to 1 decimal before averaging; keep the printed 3 decimals.":
            A2[_APPLE].round(1) @ V2,
        "this averages the queries Q2 with the weights; z_apple averages the values, the rows of V2.":
            A2[_APPLE] @ (_X @ _HEAD2[0]),
        "these weights come from scores divided by d_k = 2; the scaling is sqrt(d_k) = sqrt(2) = 1.414.":
            _head(_HEAD2, divisor=2.0)[_APPLE],
        "this is the plain mean of head 2's values, every word weighted 1/4; z_apple weights each value v_j "
        "by alpha_apple,j, the row of \"apple\" in head 2's weights.": V2.mean(axis=0),
        "this is the output row of \"phones\" (token 3); \"apple\" is token 2, the third row of head 2's "
        "weights.": _head(_HEAD2)[3],
        "this uses head 2's row of weights of \"love\" (token 1); \"apple\" is token 2, the third row.":
            _head(_HEAD2)[1],
        "these are head 2's weights applied to head 1's values V1; head 2 averages its own values V2, "
        "[fruit, tech] of each word.": A2[_APPLE] @ (_X @ _HEAD1[2]),
    }


def _out_mistakes(z2: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """{mistake: the output row of "apple" it gives}, carrying ``z2`` (the learner's accepted z2_apple, or
    by default the exact one) wherever the right z^(2)_apple would go."""
    z1 = _head(_HEAD1)[_APPLE]
    z2 = _head(_HEAD2)[_APPLE] if z2 is None else np.asarray(z2, dtype=float)
    c = np.concatenate([z1, z2])
    W1, W2 = W_O_EX[:2], W_O_EX[2:]
    return {
        "the heads are swapped in the concatenation: head 1's output fills features 0-1 and head 2's 2-3, "
        "so head 2 meets rows 2-3 of W_O.": np.concatenate([z2, z1]) @ W_O_EX,
        "this is concat @ W_O^T: the rows of W_O are the inputs (the concatenated features) and its columns "
        "the outputs; PyTorch stores W_O as (out, in), but here it is (in, out).": c @ W_O_EX.T,
        "this is head 1's part alone, z^(1) W_O^(1); the output is the sum over heads, "
        "z^(1) W_O^(1) + z^(2) W_O^(2).": z1 @ W1,
        "this is head 2's part alone, z^(2) W_O^(2); the output is the sum over heads, "
        "z^(1) W_O^(1) + z^(2) W_O^(2).": z2 @ W2,
        "each head went only through its diagonal 2 x 2 block of W_O; head m's rows W_O^(m) write into all 4 "
        "output features.": np.concatenate([z1 @ W1[:, :2], z2 @ W2[:, 2:]]),
        "this is the concatenation, before W_O; the layer's output is the concatenation times W_O.": c,
        "the heads' weights come from the raw scores, not divided by sqrt(d_k) = sqrt(2) before the softmax.":
            np.concatenate([_head(_HEAD1, divisor=1.0)[_APPLE], _head(_HEAD2, divisor=1.0)[_APPLE]]) @ W_O_EX,
        "the heads' softmax ran down a column (over the queries, axis 0), not along each row.":
            np.concatenate([_head(_HEAD1, axis=0)[_APPLE], _head(_HEAD2, axis=0)[_APPLE]]) @ W_O_EX,
        "the concatenated row was rounded to 1 decimal; keep 3 decimals until the end.": c.round(1) @ W_O_EX,
        "the concatenation was multiplied entry by entry with W_O's diagonal; W_O is a matrix product: output "
        "feature c is sum_r concat_r W_O[r, c].": c * np.diag(W_O_EX),
        "the heads' scores were divided by d_k = 2; the scaling is sqrt(d_k) = sqrt(2) = 1.414.":
            np.concatenate([_head(_HEAD1, divisor=2.0)[_APPLE], _head(_HEAD2, divisor=2.0)[_APPLE]]) @ W_O_EX,
        "head 2's part used \"phones\"'s output row (token 3) instead of \"apple\"'s (token 2).":
            np.concatenate([z1, _head(_HEAD2)[3]]) @ W_O_EX,
        "head 1's part used the row of \"I\" (token 0), [0.917, 1.331]; \"apple\"'s, token 2, is "
        "[0.924, 1.333].": np.concatenate([_head(_HEAD1)[0], z2]) @ W_O_EX,
        "head 1's part used the row of \"love\" (token 1), [0.942, 1.336]; \"apple\"'s, token 2, is "
        "[0.924, 1.333].": np.concatenate([_head(_HEAD1)[1], z2]) @ W_O_EX,
        "head 1's part used the row of \"phones\" (token 3), [0.963, 1.351]; \"apple\"'s, token 2, is "
        "[0.924, 1.333].": np.concatenate([_head(_HEAD1)[3], z2]) @ W_O_EX,
        "this multiplies the slide deck's \"Final Multi-Head Output\" for \"apple\", [1.124, 1.035, 1.02, 1.02], "
        "by W_O; its numbers do not follow from the deck's own matrices: use z^(1)_apple from head 1's table, "
        "[0.924, 1.333], and your z2_apple.": np.array([1.124, 1.035, 1.02, 1.02]) @ W_O_EX,
        "head 1's part used the slide deck's numbers for \"apple\", [1.124, 1.035], which do not follow from "
        "its own matrices; use the lesson's recomputed z^(1)_apple, [0.924, 1.333].":
            np.concatenate([[1.124, 1.035], z2]) @ W_O_EX,
        "head 2's fruit feature (concatenated feature 2) was dropped; both of head 2's features meet their rows "
        "of W_O.": np.concatenate([z1, [0.0, z2[1]]]) @ W_O_EX,
    }


def _name_mistake(name: str, got: np.ndarray, mistakes: dict[str, np.ndarray] | list[dict[str, np.ndarray]],
                  right: np.ndarray | list[np.ndarray], tol: float = _HAND_TOL) -> None:
    """Raise the message of the mistake ``got`` matches, else a generic one; return if ``got`` matches one
    of the ``right`` values (several when a rounded earlier answer may be carried on)."""
    rights = right if isinstance(right, list) else [right]
    if any(np.allclose(got, r, atol=tol, rtol=0) for r in rights):
        return
    right = rights[0]
    for table in mistakes if isinstance(mistakes, list) else [mistakes]:
        for explanation, wrong in table.items():
            if np.allclose(got, wrong, atol=tol, rtol=0):
                raise ExerciseError(f"{name} is not right yet: {explanation}")
    i = int(np.argmax(np.abs(got - right)))
    raise ExerciseError(f"{name} is not right yet: its entry {i} is {got[i]:.3f}, more than {tol} off, and "
                        f"no single slip the check knows explains it. Recheck that entry step by step.")


#: Exercise 1's wrong head2_columns that a learner is likely to give, and what each one got wrong.
_COLUMN_SLIPS = {
    (0, 1): "features 0-1 hold head 1's output; the heads are concatenated in order, head 1 first.",
    (2, 4): "head 2 fills columns 2 and 3; a slice 2:4 ends before 4, so its indices are 2 and 3, not 2 and 4.",
    (1, 2): "off by one; head 1 fills features 0 and 1, so head 2 starts at 2.",
    (3, 4): "features count from 0 (heads from 1), so the 4 concatenated features are 0, 1, 2, 3.",
}


def check_apple_output(z2_apple: Any, head2_columns: Any, out_apple: Any, leans_to_tech: Any = None) -> None:
    """Exercise 1, "apple" through the two-head layer by hand: head 2's output row of "apple" (2 numbers,
    within 0.01), the concatenated features head 2's output fills (two indices from 0), the layer's output
    row of "apple" with W_O = ``W_O_EX`` (4 numbers, within 0.005 of the exact row or of the row that carries
    the learner's own accepted z2_apple), and the prediction ``leans_to_tech`` (True: z_apple^(2)'s tech feature
    beats its fruit feature): True, False or None (not made), never graded; the success line says, after the
    numbers, whether it matched."""
    right_z, right_out = _apple_right()
    own_z = _hand_array(z2_apple, "z2_apple", 2)
    _name_mistake("z2_apple", own_z, _z2_mistakes(), right_z)
    cols = _hand_array(head2_columns, "head2_columns", 2)
    if not np.array_equal(cols, [2, 3]):
        why = _COLUMN_SLIPS.get(tuple(int(c) for c in cols) if np.all(cols == np.round(cols)) else None,
                                "give the two feature indices, from 0, that head 2's output fills in "
                                "[z^(1) | z^(2)].")
        raise ExerciseError(f"head2_columns is not right yet: {why}")
    own_out = apple_out_from(z2_apple)
    _name_mistake("out_apple", _hand_array(out_apple, "out_apple", 4), [_out_mistakes(), _out_mistakes(own_z)],
                  [right_out, own_out], _OUT_TOL)
    if leans_to_tech is not None and not isinstance(leans_to_tech, bool | np.bool_):
        raise ExerciseError(f"z2_apple, head2_columns and out_apple are right; leans_to_tech is "
                            f"{leans_to_tech!r}: set it to True or False, as you predicted (or leave it None).")
    if leans_to_tech is None:
        verdict = "you left leans_to_tech as None, so there is no prediction to compare."
    elif leans_to_tech:
        verdict = "your prediction, True, matched."
    else:
        verdict = ("you predicted False (not graded): \"apple\"'s own value is fruit-heavy, [1.0, 0.5], but it "
                   "has weight 0.252; \"phones\", [0.4, 1.2], has 0.549.")
    passed(f"head 2's output for \"apple\" is {np.round(right_z, 3).tolist()}, pulled to tech by its weight "
           f"0.549 on \"phones\"; it fills features 2-3 of the concatenation, and after W_O the row is "
           f"{np.round(right_out, 3).tolist()}. Head 2's tech (row 3 of W_O_ex) reaches outputs 0 and 3; output "
           f"3, fruit - tech, is {right_out[3]:.3f} < 0: tech beats fruit; {verdict}")


# ------------------------------------------------------------------ exercise 3: a W_O that routes the heads
def check_mixing_W_O(W_O_mix: Any) -> None:
    """Exercise 3: a (4, 4) W_O for two heads of d_k = 2 (concatenation [head 1's 2 features | head 2's fruit,
    tech]) such that, for every token, output features 0-1 are head 1's output unchanged and output features
    2-3 depend on head 2 only through its tech feature (concatenation feature 3), not always 0. Many W_O do."""
    W = _to_array(W_O_mix, "W_O_mix")
    if W.shape != (4, 4):
        raise ExerciseError(f"W_O_mix has shape {W.shape}; W_O maps the 4 concatenated features to 4 output "
                            f"features: shape (4, 4).")
    if not np.all(np.isfinite(W)):
        raise ExerciseError("W_O_mix contains NaN or infinite values.")

    def problems(M: np.ndarray, brief: bool = False) -> list[str]:
        """What is wrong with M, block by block (rows: head 1's features 0-1, head 2's fruit 2, tech 3);
        ``brief``: without the asides (said once, plainly, when M's transpose is right)."""
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
        if brief:                               # the transpose sentence says what rows and columns are
            rows = ""
        else:
            rows = (" (Row r of W_O is what concatenated feature r writes; column c is the output feature it "
                    "writes into.)")
        if fruit and not tech:
            out.append("output features 2-3 read head 2's fruit feature (its feature 0, the concatenation's "
                       "feature 2, row 2 of W_O), not its tech feature: that is its feature 1, the "
                       "concatenation's feature 3, row 3 of W_O." + rows)
        elif fruit:
            out.append("output features 2-3 change with head 2's fruit feature: row 2 of W_O (the "
                       "concatenation's feature 2) must write nothing into columns 2-3." + rows)
        elif not tech:
            out.append("output features 2-3 never see head 2's tech feature (they are always 0 or depend on "
                       "nothing): row 3 of W_O (the concatenation's feature 3) must write into column 2 or 3.")
        return out

    # What the matrix does comes first; that its transpose would be right is a fact about it, said after.
    wrong = problems(W)
    if wrong and not problems(W.T):
        raise ExerciseError(f"W_O_mix is not right yet: {problems(W, brief=True)[0]} Its transpose would be right: in "
                            f"concat(heads) W_O the rows of W_O are the inputs (the 4 concatenated head features) "
                            f"and the columns the outputs, so a design written as (output, input) must be "
                            f"transposed.")
    if wrong:
        raise ExerciseError(f"W_O_mix is not right yet: {wrong[0]}")
    passed("rows 0-1 of W_O pass head 1 on, row 3 carries head 2's tech, and row 2, head 2's fruit, writes "
           "nothing.")


# ------------------------------------------------------------------ Exercise 2: the whole layer, batched
#: (B, T, h, d_k, padded tokens per sequence): B differs from h and T from both, so a wrong axis shows.
_LAYER_SIZES = ((2, 5, 3, 4, (0, 2)), (3, 4, 2, 3, (1, 0, 2)))


def ready_made_blocked() -> contextlib.AbstractContextManager[None]:
    """The shared gate (:mod:`._ready_made`) with the layers blocked too: Exercise 2 asks for the layer."""
    return _blocked(layers=True)


def ready_made_shortcut(fn: Callable[..., Any]) -> str | None:
    """The message for an ``mha_forward`` that uses a ready-made attention, under whatever name, or None."""
    shortcut = ready_made(fn) if callable(fn) else None
    if shortcut is None:
        return None
    return (f"mha_forward uses {shortcut}, a ready-made attention: writing the layer (split, scores, mask, "
            f"softmax, merge, W_O) is the exercise. sa.softmax and torch.softmax are allowed.")


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
        if split in ("no transpose", "no transpose either way"):
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
    Z = Z.transpose(0, 2, 1, 3).reshape(B, T, d) if split in ("no transpose back", "no transpose either way") else Z.reshape(B, T, d)
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
    ("the heads were split and merged by reshapes alone, to (B, h, T, d_k) and back, with no transpose "
     "either way: reshape reads each sequence row after row, so each head gets pieces of several "
     "tokens, and the merge only undoes the reshape. Split: reshape to (B, T, h, d_k), then swap axes 1 and 2; "
     "merge: swap them back, then reshape", {"split": "no transpose either way"}),
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
    """``fn(*case, h)`` (h: the number of heads, passed as ``num_heads``), after one warm-up call, with how many lines of the learner's own Python ran in it
    (NumPy's and PyTorch's own lines not counted): (its result, lines).
    A layer that works on every head at once runs the same lines whatever h; a loop over heads (for, a
    comprehension, map; with ``@``, einsum, np.dot or torch) runs more when h grows."""
    return lines_run(fn, [(*case, h)], learner_only=True)[0]


#: (B, T, d_model) and the numbers of heads of the loop test: the same batch and width, only h changes.
_LOOP_CASE, _LOOP_HEADS = (2, 5, (0, 2)), (1, 3, 2, 4)


def _lines_per_h(fn: Callable[..., Any]) -> dict[int, int] | None:
    """{h: lines of the learner's own Python that ``fn`` runs} on one batch of d_model = 12 for each h of :data:`_LOOP_HEADS`
    (after a warm-up call); None when it raises."""
    B, T, padded = _LOOP_CASE
    calls = [(*layer_case(B, T, h, 12 // h, padded), h) for h in _LOOP_HEADS]

    def guard() -> contextlib.AbstractContextManager[None]:
        stack = contextlib.ExitStack()
        stack.enter_context(np.errstate(all="ignore"))
        stack.enter_context(ready_made_blocked())
        return stack

    try:
        counts = lines_run(fn, calls, guard, learner_only=True)
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
    """Exercise 2: ``mha_forward(X, W_in, b_in, W_out, b_out, pad, num_heads)`` is the multi-head layer of
    torch.nn.MultiheadAttention(batch_first=True) with those weights (in_proj_weight, in_proj_bias,
    out_proj.weight, out_proj.bias) and key_padding_mask ``pad``, for a batch X (B, T, d_model). A ready-made
    attention its code reaches under any name is refused first (:func:`ready_made_shortcut`); it then runs with
    the ready-made attentions switched off; its output must match PyTorch's and a loop over heads."""
    if mha_forward is None or mha_forward is Ellipsis or not callable(mha_forward):
        raise ExerciseError("mha_forward is not a function yet: write it in the answer cell above.")
    shortcut = ready_made_shortcut(mha_forward)
    if shortcut is not None:
        raise ExerciseError(shortcut)
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
