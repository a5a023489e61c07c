"""Checks for lesson 08 (why several heads): silencing a head, two heads designed by hand, the
shape and parameter count of a grouped-query layer."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from ._engine import ExerciseError, _to_array, as_predicted_number, check_array, passed

__all__ = ["check_silence_head", "check_two_head_design", "check_gqa_prediction"]


# ------------------------------------------------------------------ exercise 1: silence one head
def _model(num_heads: int = 2, d_k: int = 16, seed: int = 3):
    """A lookup-task model as lesson 08 builds it: ``num_heads`` single heads side by side, a readout.

    ``d_k`` is the lesson's 16, so an answer that slices the concatenation with a hard-coded 16 is right here
    as it is on the lesson's model."""
    import torch
    from torch import nn

    from .. import layers, tasks

    class Heads(nn.Module):  # the lesson's class, same attributes
        def __init__(self) -> None:
            super().__init__()
            self.heads = nn.ModuleList(layers.SelfAttention(tasks.D_IN, d_k) for _ in range(num_heads))

        def forward(self, x):
            outputs, weights = zip(*(head(x) for head in self.heads), strict=True)
            return torch.cat(outputs, dim=-1), torch.stack(weights, dim=1)

    torch.manual_seed(seed)
    return tasks.ReadoutModel(Heads(), num_heads * d_k, answers=2)


def _logits_with(model, X, replace: dict[int, Callable[[Any, Any], Any]]):
    """The model's logits with head h's output replaced by ``replace[h](head, X)``."""
    import torch

    from .. import tasks

    with torch.no_grad():
        outs = [replace[h](head, X) if h in replace else head(X)[0]
                for h, head in enumerate(model.attention.heads)]
        return model.readout(torch.cat(outs, dim=-1)[:, -1]).view(len(X), -1, tasks.N_SYM)


_RERUN = (" If your answer cell already ran it on `two_heads`, that trained model (it sits in `runs`) is "
          "changed too: re-run the training cell under \"One head against two, the same size\", then the "
          "`two_heads = ...` cell.")


def _try(f: Callable[..., Any], *args: Any) -> Any:
    """f(*args), or None if it raises."""
    try:
        return f(*args)
    except Exception:
        return None


def _same(a: Any, b: Any) -> bool:
    """Whether two answers are arrays of the same shape and values (within 1e-6)."""
    import torch

    try:
        a, b = (np.asarray(v.detach() if isinstance(v, torch.Tensor) else v, dtype=float) for v in (a, b))
    except (TypeError, ValueError):
        return False
    return a.ndim > 0 and a.shape == b.shape and np.allclose(a, b, atol=1e-6)


def check_silence_head(silence_head: Callable[..., Any]) -> None:
    """Exercise 1: ``silence_head(model, head, X)`` -> the (n, 2, 8) logits of ``model`` with head number
    ``head`` (0 for head 1) giving an output of zeros; ``model`` itself unchanged."""
    import torch

    from .. import tasks

    if silence_head is None or silence_head is Ellipsis or not callable(silence_head):
        raise ExerciseError("silence_head is not a function yet: write it in the answer cell above.")
    model = _model()
    X, _ = tasks.make_lookup_data(40, seed=11, offsets=(1, -1))
    before = copy.deepcopy(model.state_dict())
    with torch.no_grad():
        own = model(X)[0]
    zero = lambda head, X: torch.zeros_like(head(X)[0])  # noqa: E731
    uniform = lambda head, X: head.W_value(X).mean(dim=1, keepdim=True).expand_as(head(X)[0])  # noqa: E731

    def mean_over(dims):
        return lambda head, X: head(X)[0].mean(dim=dims, keepdim=True).expand_as(head(X)[0])

    mean_ablation = ("you replaced the head's output by its mean (mean-ablation, another way to remove a head); "
                     "this exercise silences a head as the lesson states: its output becomes zeros.")
    right_of = [_logits_with(model, X, {k: zero}) for k in (0, 1)]
    for h in (0, 1):
        try:
            got = silence_head(model, h, X.clone())
        except NotImplementedError:
            raise ExerciseError("silence_head still raises NotImplementedError: replace that line.") from None
        except Exception as exc:
            if "leaf Variable that requires grad" in str(exc):
                raise ExerciseError("silence_head changed a weight in place while PyTorch records gradients "
                                    "(the leaf-variable error): make that change inside `with torch.no_grad():`, "
                                    "on a copy of the model.") from None
            if "mat1 and mat2 shapes" in str(exc):
                raise ExerciseError("silence_head raised a shape error: the readout expects 2 d_k features, "
                                    "one block per head. Zero the head's output, don't remove the head.") from None
            raise ExerciseError(f"silence_head raised {type(exc).__name__} for head={h}: {exc}") from None
        hooked = [name or "the model" for name, m in model.named_modules()
                  if m._forward_hooks or m._forward_pre_hooks]
        if hooked:
            raise ExerciseError(f"silence_head left a forward hook on {', '.join(hooked)}: every later use of "
                                f"the model would still run with the head silenced. Remove it before "
                                f"returning (handle = ...register_forward_hook(...); ...; handle.remove()).")
        changed = [k for k, v in model.state_dict().items() if not torch.equal(v, before[k])]
        if changed:
            raise ExerciseError(f"silence_head changed the model itself ({', '.join(changed)}): every later "
                                f"use of it would run with a head missing. Silence a copy "
                                f"(copy.deepcopy(model)), or leave the weights alone and zero the head's output."
                                f"{_RERUN}")
        with torch.no_grad():
            if not torch.allclose(model(X)[0], own, atol=1e-6):
                raise ExerciseError("after silence_head the model gives other logits than before: it changed "
                                    "the model itself. Silence a copy (copy.deepcopy(model)), or zero the "
                                    "head's output without touching the model." + _RERUN)
        if isinstance(got, (tuple, list)) and len(got) == 2 and hasattr(got[1], "shape"):
            raise ExerciseError("silence_head returned a pair (what the model returns: logits and weights); "
                                "return the logits only.")
        if hasattr(got, "shape") and tuple(got.shape) == (len(X), 2, X.shape[1], X.shape[1]):
            raise ExerciseError(f"silence_head returned an array of shape {tuple(got.shape)}: the attention "
                                f"weights (model(X)[1], one (T, T) map per head). Return the logits, model(X)[0], "
                                f"shape (n, 2, 8).")
        shape = tuple(getattr(got, "shape", ()))
        if len(shape) == 3 and shape[1:] == (2, tasks.N_SYM) and shape[0] != len(X):
            raise ExerciseError(f"silence_head returned {shape[0]} rows for the {len(X)} sequences it was given: "
                                f"it runs the model on another array (X_test?). Use its argument X.")
        if len(shape) == 4 and shape[0] == len(X) and shape[1] == X.shape[1] and shape[2:] == (2, tasks.N_SYM):
            raise ExerciseError(f"silence_head returned logits for every position, shape {shape}: the readout "
                                f"reads only the query token, the last position (Z[:, -1]), as the model does.")
        if (h == 0 and any(_same(got, r) for r in right_of)
                and _same(got, _try(silence_head, copy.deepcopy(model), 1, X.clone()))):
            raise ExerciseError("silence_head gives the same logits for head=0 and head=1: it ignores the "
                                "`head` argument (a fixed head, or a fixed block of columns). Silence head "
                                "number `head`: model.attention.heads[head], or columns head * d_k to "
                                "(head + 1) * d_k of the concatenation.")
        right = right_of[h]
        answer_rows = own.clone()                                          # the readout's rows for answer h zeroed
        answer_rows[:, h] = model.readout.bias.detach().view(2, -1)[h]
        no_bias = right - model.readout.bias.detach().view(1, 2, -1)         # the readout's bias zeroed as well
        mistakes = {
            "nothing was silenced: these are the model's own logits. Set head's output to zeros (zero its "
            "W_value, or its block of the concatenation) before the readout.": _logits_with(model, X, {}),
            f"you silenced the other head: head={h} is an index into model.attention.heads, 0 for head 1 and "
            f"1 for head 2.": _logits_with(model, X, {1 - h: zero}),
            "this head's weights became uniform (zeroed W_query or W_key make every score 0), so it still passes "
            "on the mean of its values. Silencing means its output is 0: zero W_value, or its output block.":
                _logits_with(model, X, {h: uniform}),
            "these are probabilities (a softmax of the logits): return the logits, the readout's raw scores, "
            "as the model itself does.": torch.softmax(right, dim=-1),
            "these are log-probabilities (a log_softmax of the logits): return the logits themselves, the "
            "readout's raw scores, as the model itself does.": torch.log_softmax(right, dim=-1),
            ("both heads were silenced; only head number `head` should be. If you zeroed a block of the "
             "concatenation, a head's block is d_k = 16 columns wide (head * 16 to head * 16 + 16), not the "
             "whole 32 of the concatenation; if you zeroed model.readout.weight, its rows are the 16 logits and "
             "its columns the concatenation's 32 features: a head's block is columns head * 16 to "
             "head * 16 + 16, not rows."): _logits_with(model, X, {0: zero, 1: zero}),
            "you zeroed the readout's rows for one answer (its 8 logits): that silences an answer, not a head, and "
            "leaves that answer only the readout's bias. Zero the head's output, or its block of the readout's "
            "columns (the features it reads), and keep every row.": answer_rows,
            "you zeroed the readout's bias as well: silencing a head changes only that head's output (zeros); "
            "the readout, bias included, stays as it is.": no_bias,
        }
        try:
            check_array(got, right, f"the output of silence_head(model, head={h}, X)", mistakes=mistakes, atol=1e-5)
        except ExerciseError:
            try:
                arr = np.asarray(got.detach() if isinstance(got, torch.Tensor) else got, dtype=float)
            except (TypeError, ValueError):
                arr = np.zeros(0)
            base, full = right.numpy(), _logits_with(model, X, {}).numpy()     # head at 0 and at 1 times
            if arr.shape == base.shape and np.abs(full - base).max() > 1e-6:
                c = float(np.sum((arr - base) * (full - base)) / np.sum((full - base) ** 2))
                if abs(c) > 0.05 and abs(c - 1) > 0.05 and np.allclose(arr, base + c * (full - base), atol=1e-5):
                    raise ExerciseError(f"the output of silence_head(model, head={h}, X) is not right yet: you "
                                        f"multiplied the head's output by {c:.2f} instead of setting it to zeros."
                                        ) from None
            for dims in ((0, 1), 0, 1):     # over sequences and positions, over sequences, over positions
                mean = _logits_with(model, X, {h: mean_over(dims)}).numpy()
                if arr.shape == mean.shape and np.allclose(arr, mean, atol=1e-5):
                    raise ExerciseError(f"the output of silence_head(model, head={h}, X) is not right yet: "
                                        f"{mean_ablation}") from None
            raise
    passed("silence_head zeroes one head's output, leaves the other and the model itself as they were.")


# ------------------------------------------------------------------ exercise 2: two heads designed by hand
_ROLES = ("next", "previous", "own letter", "other", "query")
_ROLE_TEXT = {"next": "the item under the next letter", "previous": "the item under the previous letter",
              "own letter": "the distractor item (the query's own letter)", "other": "the other item",
              "query": "the query token itself"}


def _design_data(seed: int = 2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The lesson's held-out sequences (offsets +1, -1): X (n, 5, 17), y (n, 2), role (n, 5) of each position."""
    from .. import tasks

    X, y = (t.numpy().astype(float) for t in tasks.make_lookup_data(500, seed=seed, offsets=(1, -1)))
    s = X[:, -1, :8].argmax(-1)
    letters = X[:, :-1, :8].argmax(-1)
    role = np.full(X.shape[:2], 3)
    role[:, :-1][letters == ((s + 1) % 8)[:, None]] = 0
    role[:, :-1][letters == ((s - 1) % 8)[:, None]] = 1
    role[:, :-1][letters == s[:, None]] = 2
    role[:, -1] = 4
    return X, y, role


def _head_weights(X: np.ndarray, W_Q: np.ndarray, W_K: np.ndarray, query: np.ndarray | None = None) -> np.ndarray:
    """(n, 5): the query token's weights over the sequence, scores divided by sqrt(d_k) (over the keys of ``X``
    only, for a ``query`` given apart)."""
    q = (X[:, -1] if query is None else query) @ W_Q
    scores = np.einsum("nd,ntd->nt", q, X @ W_K) / np.sqrt(W_Q.shape[1])
    scores = scores - scores.max(-1, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(-1, keepdims=True)


def _design_matrix(value: Any, name: str) -> np.ndarray:
    W = _to_array(value, name, empty=f"{name} is still empty: give a NumPy array of shape (17, d_k).",
                  not_numbers=f"{name} should be an array of numbers, shape (17, d_k); got {value!r:.60}")
    if W.ndim != 2 or W.shape[0] != 17:
        hint = (" It looks transposed: rows are the 17 input features, columns the d_k outputs."
                if W.ndim == 2 and W.shape[1] == 17 else
                " A token has 17 features: 8 letters (0-7), 8 digits (8-15) and the query flag (16).")
        raise ExerciseError(f"{name} has shape {W.shape}; it should be (17, d_k).{hint}")
    if not np.all(np.isfinite(W)):
        raise ExerciseError(f"{name} contains NaN or infinite values.")
    return W


def design_results(W_Q1: Any, W_K1: Any, W_Q2: Any, W_K2: Any, seed: int = 2) -> dict[str, Any]:
    """Both heads on the held-out sequences: their weights, the role each puts its largest weight on, the
    answers read from the digits of each head's output, and the one-head control."""
    mats = [_design_matrix(v, n) for v, n in ((W_Q1, "W_Q1"), (W_K1, "W_K1"), (W_Q2, "W_Q2"), (W_K2, "W_K2"))]
    for k, (W_Q, W_K) in enumerate((mats[:2], mats[2:]), start=1):
        if W_Q.shape != W_K.shape:
            raise ExerciseError(f"W_Q{k} has shape {W_Q.shape} and W_K{k} {W_K.shape}: a head's queries and "
                                f"keys must have the same width d_k to meet in a dot product.")
    X, y, role = _design_data(seed)
    weights = [_head_weights(X, *mats[:2]), _head_weights(X, *mats[2:])]
    answers = np.stack([(w[:, :, None] * X[:, :, 8:16]).sum(1).argmax(-1) for w in weights], axis=1)
    top_role = [np.take_along_axis(role, w.argmax(-1)[:, None], 1)[:, 0] for w in weights]
    one = _head_weights(X, np.hstack([mats[0], mats[2]]), np.hstack([mats[1], mats[3]]))
    digits = (one[:, :, None] * X[:, :, 8:16]).sum(1)
    order = -np.sort(-digits, axis=1)
    tied = (np.isclose(order[:, 0], order[:, 1]) | np.isclose(order[:, 1], order[:, 2]))   # no order decides
    two_largest = np.argsort(-digits, axis=1, kind="stable")[:, :2]
    return {"one_head_tied": float(np.mean(tied)),"weights": weights, "role": role, "top_role": top_role, "answers": answers, "y": y,
            "both_right": float(np.mean(np.all(answers == y, axis=1))),
            "one_head_on": [float(np.mean(one[role == r])) for r in range(5)],
            "one_head_both_right": float(np.mean(np.all(two_largest == y, axis=1) & ~tied)), "mats": mats}


def one_head_distractor_weight(mats: list[np.ndarray], X: np.ndarray, role: np.ndarray) -> dict[str, float]:
    """The one-head control's mean weight on the distractor item, and what typical slips give instead."""
    one = _head_weights(X, np.hstack([mats[0], mats[2]]), np.hstack([mats[1], mats[3]]))
    narrow = _head_weights(X, np.hstack([mats[0], mats[2]]) * np.sqrt(
        (mats[0].shape[1] + mats[2].shape[1]) / mats[0].shape[1]), np.hstack([mats[1], mats[3]]))
    heads = [_head_weights(X, *mats[:2]), _head_weights(X, *mats[2:])]
    unscaled = _head_weights(X, np.hstack([mats[0], mats[2]]) * np.sqrt(mats[0].shape[1] + mats[2].shape[1]),
                             np.hstack([mats[1], mats[3]]))
    Q, K = np.hstack([mats[0], mats[2]]), np.hstack([mats[1], mats[3]])
    items_only = _head_weights(X[:, :-1], Q, K, query=X[:, -1])        # the softmax over the four items alone
    items_raw = _head_weights(X[:, :-1], Q * np.sqrt(Q.shape[1]), K, query=X[:, -1])
    return {"right": float(np.mean(one[role == 2])), "items only": float(np.mean(items_only[role[:, :-1] == 2])),
            "items only, no scale": float(np.mean(items_raw[role[:, :-1] == 2])), "quarter": 1 / 4, "fifth": 1 / 5,
            "even": 1 / 3, "next item": float(np.mean(one[role == 0])),
            "no scale": float(np.mean(unscaled[role == 2])),
            "two heads": float(np.mean([np.mean(w[role == 2]) for w in heads])),
            "scale": float(np.mean(narrow[role == 2])),
            "with query": float(np.mean(one[role == 2]) + np.mean(one[role == 4]))}


DISTRACTOR_TOL = 0.0005   # the exercise asks for 4 decimals: a computed value passes, a slip 0.001 away does not
SLIP_NEAR = 0.001         # a slip is named only for a guess this close to its value
MARGIN = 0.1              # each head's target must beat every other position by this much, on every sequence


def target_margin(r: dict[str, Any], k: int) -> float:
    """Head k's smallest margin over the held-out sequences: its weight on its target item minus its largest
    weight on any other position."""
    w, target = r["weights"][k], r["role"] == k
    on = (w * target).sum(-1)
    rest = np.where(target, -np.inf, w).max(-1)
    return float(np.min(on - rest))

_DISTRACTOR_SLIPS = {
    "two heads": "that is the mean of the two heads' own weights on the distractor; ONE head adds the two "
                 "lookups' scores, q1 . k1 + q2 . k2, before its one softmax",
    "scale": "that divides the summed scores by the square root of ONE head's d_k; the single head is "
             "d_k1 + d_k2 wide, so divide by sqrt(d_k1 + d_k2)",
    "even": "a third each is the even-blend guess, not the computed weight: work out the summed scores and "
            "take their softmax",
    "next item": "that is ONE head's mean weight on the item under the next letter; the distractor is the item "
                 "whose letter is s (where[:, 2])",
    "no scale": "that leaves out the division by sqrt(d_k1 + d_k2): the single head divides its summed scores "
                "by the square root of its width, as each head does",
    "items only": "that takes the softmax over the four items only; the query token is a key too (the last "
                  "position, where[:, 4]) and takes its share: the softmax runs over all five positions",
    "items only, no scale": "that takes the softmax over the four items only, of scores not divided by "
                            "sqrt(d_k1 + d_k2); the query token is a key too (the last position), and the "
                            "summed scores are divided by the square root of the single head's width",
    "quarter": "a quarter each is an even split over the four items, not the computed weight: work out the "
               "summed scores and take their softmax over all five positions",
    "fifth": "a fifth each is an even split over the five positions, not the computed weight: work out the "
             "summed scores and take their softmax",
    "with query": "that adds the query token's own weight; the distractor is the item whose letter is s, not "
                  "the query token (it carries letter s too, and gets the same weight)",
}


def distractor_verdict(mats: list[np.ndarray], guess: float, X: np.ndarray | None = None,
                       role: np.ndarray | None = None) -> tuple[bool, str | None, dict[str, float]]:
    """Whether ``guess`` passes as the one-head control's distractor weight: within DISTRACTOR_TOL of the right
    value of the learner's own design. Outside it, a slip is named when the guess is within SLIP_NEAR of the
    slip's value and that value itself lies outside the tolerance. Returns (passes, the named slip or None, all
    the values)."""
    if X is None or role is None:
        X, _, role = _design_data()
    v = one_head_distractor_weight(mats, X, role)
    if abs(guess - v["right"]) <= DISTRACTOR_TOL + 1e-9:
        return True, None, v
    slips = [k for k in _DISTRACTOR_SLIPS
             if abs(v[k] - v["right"]) > DISTRACTOR_TOL and abs(guess - v[k]) <= SLIP_NEAR]
    return False, min(slips, key=lambda k: abs(guess - v[k]), default=None), v


def check_two_head_design(W_Q1: Any, W_K1: Any, W_Q2: Any, W_K2: Any, one_head_distractor: Any = None) -> None:
    """Exercise 2: (17, d_k) arrays W_Q1, W_K1 (head 1: the next letter's item) and W_Q2, W_K2 (head 2: the
    previous letter's); each head's W_V copies the 8 digit features, answer k is the largest digit in head k's
    output; right when both answers are right on all 500 held-out sequences. Then ``one_head_distractor``:
    the computed mean weight (to 4 decimals, checked to within 0.0005) that ONE head of columns [W_Q1 | W_Q2], [W_K1 | W_K2] gives the
    distractor item."""
    r = design_results(W_Q1, W_K1, W_Q2, W_K2)
    n = len(r["y"])
    names = ("W_Q1", "W_K1", "W_Q2", "W_K2")
    digit_rows = [name for name, W in zip(names, r["mats"], strict=True) if not np.allclose(W[8:16], 0)]
    keys_by_digit = [k for k in (0, 1)
                     if np.allclose(r["mats"][2 * k + 1][:8], 0) and f"W_K{k + 1}" in digit_rows]
    if digit_rows and (not keys_by_digit or r["both_right"] == 1.0):
        raise ExerciseError(f"rows 8-15 of {', '.join(digit_rows)} are not zero: those rows read the digit features, "
                            f"and the task asks each head to look by letter only (the digit is the answer to find, "
                            f"not a clue). Weights copied from a trained model read digits too; set those rows to 0.")
    if r["both_right"] == 1.0:
        for k in (0, 1):
            margin = target_margin(r, k)
            if margin < MARGIN:
                raise ExerciseError(
                    f"both answers are right, but head {k + 1} barely singles out "
                    f"{_ROLE_TEXT[('next', 'previous')[k]]}: on some held-out sequences its weight there is only "
                    f"{margin:.3f} above another position's (the exercise asks for at least {MARGIN}). Its weights "
                    f"are nearly even; make q . k larger for the target's letter (scale the query up).")
        guess = as_predicted_number(
            one_head_distractor,
            "both heads are right; one_head_distractor is still empty: predict the mean weight ONE head with "
            "columns [W_Q1 | W_Q2] and [W_K1 | W_K2] gives the distractor item.",
            f"one_head_distractor should be one number, a weight between 0 and 1; got {one_head_distractor!r:.60}",
        )
        X, _, role = _design_data()
        ok, slip, v = distractor_verdict(r["mats"], guess, X, role)
        if not ok and 1 < guess <= 100 and distractor_verdict(r["mats"], guess / 100, X, role)[0]:
            raise ExerciseError(f"both heads are right; one_head_distractor = {guess:.3f} looks like a percentage: "
                                f"give the weight itself, between 0 and 1 ({guess / 100:.4f}).")
        if not ok:
            shown = f"{guess:.4f}"
            raise ExerciseError(f"both heads are right; one_head_distractor = {shown} is not right yet: "
                                + (f"{_DISTRACTOR_SLIPS[slip]}." if slip else
                                   "ONE head scores each key by q1 . k1 + q2 . k2 (the two lookups' scores "
                                   "added), divided by sqrt(d_k1 + d_k2), then one softmax; average its weight on "
                                   "the distractor item over the 500 held-out sequences."))
        on = [float(np.mean(w[r["role"] == k])) for k, w in enumerate(r["weights"])]
        c = r["one_head_on"]
        top = int(np.argmax(c))
        if top not in (0, 1):
            why = (f"one softmax over the two lookups' summed scores puts the most weight on {_ROLE_TEXT[_ROLES[top]]}"
                   f", so the answers' digits do not stand out")
        elif abs(c[0] - c[1]) < 0.05:
            why = "an even blend of the two items does not say which digit sits under which letter"
        else:
            why = f"one blend favours {_ROLE_TEXT[_ROLES[top]]}, and its digit comes first whichever answer it is"
        passed(f"both answers right on all {n} held-out sequences; head 1 gives the next letter's item {on[0]:.2f} "
               f"of its weight on average, head 2 the previous letter's {on[1]:.2f}. Control: the same two "
               f"lookups in ONE head ([W_Q1 | W_Q2], [W_K1 | W_K2], one softmax) weight, on average, the next "
               f"letter's item {c[0]:.2f}, the previous letter's {c[1]:.2f}, the distractor {c[2]:.2f}, the other "
               f"item {c[3]:.2f}, the query token {c[4]:.2f}; reading the two digits with the largest features as "
               f"(next, previous) gets both right on {r['one_head_both_right']:.3f}"
               + (f" and leaves {r['one_head_tied']:.3f} tied (two digit features equal: nothing orders them)"
                  if r["one_head_tied"] else "") + f": {why}.")
        return
    dominant = [_ROLES[int(np.bincount(t, minlength=5).argmax())] for t in r["top_role"]]
    spread = [float(np.mean(w.max(-1) - w.min(-1))) for w in r["weights"]]
    for k in (0, 1):
        W_K = r["mats"][2 * k + 1]
        if np.allclose(W_K[:8], 0) and not np.allclose(W_K[8:16], 0):
            raise ExerciseError(f"head {k + 1}'s keys read only the digit features (rows 8-15 of W_K{k + 1}): "
                                f"the item to find is known by its letter, not its digit; the keys must read "
                                f"the letter features, rows 0-7.")
        if spread[k] < 0.01:
            raise ExerciseError(f"head {k + 1}'s weights are even (largest minus smallest {spread[k]:.3f} on "
                                f"average): its scores are the same for every key; q . k must be large only "
                                f"where the key's letter (rows 0-7 of W_K{k + 1}) is the one the query's letter "
                                f"(rows 0-7 of W_Q{k + 1}) asks for.")
        low = float(np.mean(np.take_along_axis(r["role"], r["weights"][k].argmin(-1)[:, None], 1)[:, 0] == k))
        if low > 0.5:
            raise ExerciseError(f"head {k + 1} gives {_ROLE_TEXT[('next', 'previous')[k]]} its SMALLEST weight "
                                f"(in {low:.3f} of the sequences): a sign slip; its score there must be the "
                                f"largest, not the smallest.")
    if dominant == ["previous", "next"]:
        raise ExerciseError("your heads are swapped: head 1 finds the item under the previous letter and head 2 "
                            "the next; head 1 must give answer 1, the digit under the NEXT letter (s + 1).")
    if dominant[0] == dominant[1]:
        raise ExerciseError(f"both heads put their largest weight on {_ROLE_TEXT[dominant[0]]}: the two heads "
                            f"must look two ways, head 1 at letter s + 1, head 2 at letter s - 1 (after H "
                            f"comes A).")
    for k in (0, 1):
        if dominant[k] in ("own letter", "query"):
            raise ExerciseError(f"head {k + 1} finds the query's own letter s (the distractor item, or the query "
                                f"token itself): its query for letter s must match the key of letter "
                                f"{'s + 1' if k == 0 else 's - 1'}, a shifted pattern, not the same letter.")
    for k in (0, 1):
        shift = _looks_at(r["mats"][2 * k], r["mats"][2 * k + 1])
        if shift is not None and shift not in (0, (1, -1)[k]):
            raise ExerciseError(f"head {k + 1} looks at letter s {'+' if shift > 0 else '-'} {abs(shift)} for "
                                f"every query letter s (its query of s matches the key of s {'+' if shift > 0 else '-'}"
                                f" {abs(shift)}); it must look at s {('+ 1', '- 1')[k]}.")
    raise ExerciseError(_missed_letters(r))


def _looks_at(W_Q: np.ndarray, W_K: np.ndarray) -> int | None:
    """The one letter offset (-3..4) at which a head's query of letter s meets its best-matching key for every
    s, from the letter rows of W_Q and W_K; None when the offset differs by letter or a row ties."""
    scores = W_Q[:8] @ W_K[:8].T                                     # (query letter, key letter)
    best = scores.argmax(-1)
    if np.any(np.sum(np.isclose(scores, scores.max(-1, keepdims=True)), -1) > 1):
        return None
    offsets = {int((b - s) % 8) for s, b in enumerate(best)}
    if len(offsets) != 1:
        return None
    off = offsets.pop()
    return off - 8 if off > 4 else off


_LETTERS = "ABCDEFGH"


def _missed_letters(r: dict[str, Any]) -> str:
    """The message for a design whose heads find their items for most query letters but not all: which head
    gives wrong digits, for which query letters, and what it weights most there."""
    n = len(r["y"])
    wrong = r["answers"] != r["y"]                                    # (n, 2)
    k = int(np.argmax(wrong.sum(0)))                                  # the head with more wrong digits
    s = _design_data()[0][:, -1, :8].argmax(-1)                       # each sequence's query letter
    bad = wrong[:, k]
    letters = sorted({int(v) for v in s[bad]})
    step = 1 if k == 0 else -1
    asks = ", ".join(f"{_LETTERS[v]} asks for {_LETTERS[(v + step) % 8]}" for v in letters)
    w = r["weights"][k][bad]
    top = np.bincount(r["top_role"][k][bad], minlength=5)
    on_target = (w * (r["role"][bad] == k)).sum(-1)
    if np.all(w.max(-1) - w.min(-1) < 1e-6):
        there = "there its weights are all equal: its query gives every key the same score"
    elif np.mean(np.abs(w.max(-1) - on_target) < 1e-9) > 0.5:
        there = (f"there its largest weight, on {_ROLE_TEXT[_ROLES[k]]}, is tied with another item's, so that "
                 f"item's digit can come out instead")
    else:
        there = f"there it weights most {_ROLE_TEXT[_ROLES[int(top.argmax())]]}, in {top.max()} of them"
    wraps = (7 if k == 0 else 0) in letters
    wrap = (" The letters wrap around: after H comes A, so the query of H must match the key of A." if k == 0
            else " The letters wrap around: before A comes H, so the query of A must match the key of H.")
    which = ("whatever the query's letter" if len(letters) == 8 else
             f"all of them with query letter {' or '.join(_LETTERS[v] for v in letters)}")
    return (f"head {k + 1} gives the wrong digit on {int(bad.sum())} of the {n} held-out sequences, {which}; "
            f"{there}. Head {k + 1} must weight most the item under letter {'s + 1' if k == 0 else 's - 1'}: "
            f"{asks}.{wrap if wraps else ''} Both answers are right on {r['both_right']:.3f}"
            + (f"; head {2 - k} gives the wrong digit on {int(wrong[:, 1 - k].sum())} too." if wrong[:, 1 - k].any()
               else "."))


# ------------------------------------------------------------------ exercise 3: predict a grouped-query layer
GQA = {"d_model": 4096, "num_heads": 32, "num_kv_heads": 8}   # Llama 3-8B's attention layers, no biases


def _gqa_right() -> tuple[tuple[int, int], int]:
    d, h, g = GQA["d_model"], GQA["num_heads"], GQA["num_kv_heads"]
    kv = g * (d // h)
    return (d, kv), 2 * d * d + 2 * d * kv


def _merged(slips: list[tuple[Any, str]]) -> dict[Any, str]:
    """Each wrong value with its message; where two slips give the same value, the message names both."""
    texts: dict[Any, list[str]] = {}
    for value, text in slips:
        texts.setdefault(value, []).append(text)
    return {value: t[0] if len(t) == 1 else "two slips give this; either " + " Or ".join(t)
            for value, t in texts.items()}


def _gqa_shape_mistakes() -> dict[tuple[int, int], str]:
    d, h, g = GQA["d_model"], GQA["num_heads"], GQA["num_kv_heads"]
    d_k = d // h
    return _merged([(k, v) for k, v in {
        (d, d): f"that is W_K with all {h} heads; with grouped-query heads it has only g = {g} key heads of d_k = "
                f"{d_k}, side by side: {g} x {d_k} columns.",
        (g * d_k, d): f"it is transposed: W_K is stored so that X @ W_K projects, so its rows are the {d} input "
                      f"features and its columns the {g} key heads of d_k = {d_k}.",
        (d, g * d): f"each key head is counted d_model wide; a head is d_k = d_model / num_heads = {d_k} wide.",
        (d, d_k): f"that is one key head; W_K holds all g = {g} key heads side by side.",
        (d, d // g): f"that is d_model / g columns; W_K holds g = {g} key heads of d_k = d_model / num_heads = "
                     f"{d_k} (a key meets a query of the same width): g d_k columns.",
    }.items()] + [((d, (h // g) * d_k), f"that is h / g = {h // g} key heads, how many query heads share each "
                                        f"one; there are g = {g} key heads of d_k = {d_k}: g d_k columns.")])


def _gqa_count_mistakes() -> dict[int, str]:
    d, h, g = GQA["d_model"], GQA["num_heads"], GQA["num_kv_heads"]
    kv = g * (d // h)
    return _merged([(k, v) for k, v in {
        4 * d * d: "that is the plain layer, 4 d_model^2; here W_K and W_V have only g key/value heads of d_k.",
        2 * d * d + d * kv: "only one of W_K and W_V is counted; the layer has both, each d_model x g d_k.",
        d * d + 2 * d * kv: "one of the two d_model x d_model matrices (W_Q or W_O) is missing; both keep "
                            "their full size.",
        2 * d * d + 2 * d * (d // h): "that is multi-query attention (g = 1: one key/value head of d_k); this "
                                      f"layer has g = {g} key/value heads, each d_k = {d // h} wide.",
        32 * (2 * d * d + 2 * d * kv): "that is 32 layers' worth; give the parameters of one attention layer.",
        2 * d * kv: "only W_K and W_V are counted; W_Q and W_O (d_model x d_model each) belong to the layer too.",
        4 * d * kv: "W_Q and W_O are shrunk too; only keys and values are shared, W_Q and W_O keep d_model x "
                    "d_model.",
        2 * d * d + 2 * d * kv + 2 * d + 2 * kv: "biases are counted; this layer has none.",
    }.items()] + [(2 * d * d + 2 * d * (h // g) * (d // h),
                   f"that counts h / g = {h // g} key/value heads, how many query heads share each one; there "
                   f"are g = {g} key/value heads of d_k = {d // h}.")])


def check_gqa_prediction(shape_W_K: Any, gqa_params: Any) -> None:
    """Exercise 3: for GQA's layer (d_model 4096, 32 query heads, 8 key/value heads, no biases): the shape
    (rows, columns) of W_K as the course stores it (X @ W_K), and the parameters of W_Q, W_K, W_V, W_O."""
    right_shape, right_count = _gqa_right()
    if shape_W_K is None or shape_W_K is Ellipsis:
        raise ExerciseError("shape_W_K is still empty: give (rows, columns) of W_K.")
    try:
        shape = tuple(int(v) for v in shape_W_K)
        if any(float(v) != int(v) for v in shape_W_K):
            raise ExerciseError(f"shape_W_K = {tuple(shape_W_K)} has a number that is not whole: a matrix has a "
                                f"whole number of rows and of columns (use // for d_model / h).")
    except (TypeError, ValueError):
        raise ExerciseError(f"shape_W_K should be two whole numbers, (rows, columns); got {shape_W_K!r:.60}") from None
    if len(shape) != 2:
        raise ExerciseError(f"shape_W_K should be two numbers, (rows, columns); got {shape}.")
    if shape != right_shape:
        why = _gqa_shape_mistakes().get(shape, f"W_K reads the {GQA['d_model']} input features and writes g "
                                               f"key heads of d_k = d_model / num_heads each.")
        raise ExerciseError(f"shape_W_K = {shape} is not right yet: {why}")
    if gqa_params is None or gqa_params is Ellipsis:
        raise ExerciseError("shape_W_K is right; gqa_params is still empty: give the number of parameters.")
    try:
        count = int(gqa_params)
        whole = float(gqa_params) == count
    except (TypeError, ValueError):
        raise ExerciseError(f"gqa_params should be a whole number; got {gqa_params!r:.60}") from None
    for unit, scale in (("millions", 1e6), ("billions", 1e9)):
        if abs(float(gqa_params)) < 1e4 and abs(float(gqa_params) * scale - right_count) < 0.02 * right_count:
            raise ExerciseError(f"shape_W_K is right; gqa_params = {float(gqa_params)} looks like {unit}: give "
                                f"the number of parameters itself, not {unit} (rows times columns of each "
                                f"matrix, added).")
    if not whole:
        raise ExerciseError(f"shape_W_K is right; gqa_params = {float(gqa_params)} is not a whole number: count "
                            f"parameters, rows times columns of each matrix (use // for d_model / h).")
    if count != right_count:
        why = _gqa_count_mistakes().get(count, f"add W_Q ({GQA['d_model']} x {GQA['d_model']}), W_K and W_V "
                                               f"({right_shape[0]} x {right_shape[1]} each) and W_O "
                                               f"({GQA['d_model']} x {GQA['d_model']}).")
        raise ExerciseError(f"shape_W_K is right; gqa_params = {count:,} is not right yet: {why}")
    plain = 4 * GQA["d_model"] ** 2
    passed(f"W_K and W_V are {right_shape[0]} x {right_shape[1]} ({GQA['num_kv_heads']} key/value heads of d_k = "
           f"{right_shape[1] // GQA['num_kv_heads']}), W_Q and W_O {GQA['d_model']} x {GQA['d_model']}: "
           f"{right_count:,} parameters, {right_count / plain:.3f} of the plain layer's {plain:,}. Every query head "
           f"still looks its own way; {GQA['num_heads'] // GQA['num_kv_heads']} query heads share each key/value "
           f"head (lesson 13: the cache shrinks {GQA['num_heads'] // GQA['num_kv_heads']} times).")
