"""Checks for lesson 12 (inside a real transformer): remove one head by its dataset mean (mean-ablation), the
feed-forward half of an encoder layer (GELU, the two matrix products, the residual; the LayerNorm is given), and
how large one head's output is against the residual it is added to (the learner's prediction of it is printed
next to the measurement, never graded).

Each check's own inputs make every named mistake give a result different from the right answer and from every
other named mistake (``tests/test_mistakes_lesson12.py`` feeds each one): no two sizes coincide
(T != d_model != d_ff, num_heads != d_k, d_k != 32, this model's), the removed head is never head 0, W_O is
square but not symmetric (so its transpose is told apart), huge values in the context are included, and the
given LayerNorm has its own gamma and beta (so one written without them is told apart).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ._engine import (
    ExerciseError,
    check_function,
    is_learners,
    learners_functions,
    passed,
    stand_ins,
    used_objects,
)

__all__ = [
    "check_mean_ablated_output",
    "check_feed_forward_block",
    "check_head_to_residual",
]

_erf = np.vectorize(math.erf)


def gelu(z: np.ndarray) -> np.ndarray:
    """The exact GELU of BERT (hidden_act "gelu"): 0.5 z (1 + erf(z / sqrt(2))), any shape."""
    return 0.5 * z * (1.0 + _erf(z / math.sqrt(2.0)))


def _layer_norm(h: np.ndarray, gamma: Any, beta: Any, eps: float, *, axis: int = -1,
                ddof: int = 0) -> np.ndarray:
    mean = h.mean(axis=axis, keepdims=True)
    var = h.var(axis=axis, keepdims=True, ddof=ddof)
    return gamma * (h - mean) / np.sqrt(var + eps) + beta


# ---------------------------------------------------------------- exercise 1: mean-ablation
def _ablated(context: np.ndarray, pool: np.ndarray, W_O: np.ndarray, b_O: np.ndarray, head: int,
             num_heads: int, *, how: str = "mean", width: int | None = None, start: int | None = None,
             bias: bool = True, transposed: bool = False, project: bool = True,
             strided: bool = False) -> np.ndarray:
    d_k = context.shape[-1] // num_heads
    width = d_k if width is None else width
    start = head * width if start is None else start
    part: Any = slice(head, None, num_heads) if strided else slice(start, start + width)
    c = np.array(context, dtype=float)
    P = np.array(pool, dtype=float)
    if how == "mean":                                   # the slice's mean over the pool's tokens, for every token
        c[:, part] = P[:, part].mean(axis=0)
    elif how == "own sentence":                         # the mean over this sentence's own T tokens
        c[:, part] = c[:, part].mean(axis=0)
    elif how == "centred":                              # the mean subtracted from the slice, not put in its place
        c[:, part] = c[:, part] - P[:, part].mean(axis=0)
    elif how == "both":                                 # the mean over the sentence's and the pool's tokens
        c[:, part] = np.concatenate([c[:, part], P[:, part]]).mean(axis=0)
    elif how == "added":
        c[:, part] = c[:, part] + P[:, part].mean(axis=0)
    elif how == "zero":
        c[:, part] = 0.0
    elif how == "median":
        c[:, part] = np.median(P[:, part], axis=0)
    elif how == "scalar":
        c[:, part] = P[:, part].mean()
    elif how == "all heads":
        c[:] = P.mean(axis=0)
    elif how == "own features":                       # each token's slice averaged over its own features
        c[:, part] = c[:, part].mean(axis=1, keepdims=True)
    elif how == "first features":                     # the pool's mean of the first d_k features (head 0's)
        c[:, part] = P.mean(axis=0)[:width]
    elif how == "first rows":                         # only the first T rows of the pool
        c[:, part] = P[: c.shape[0], part].mean(axis=0)
    elif how == "keep only":
        kept = P[:, part].mean(axis=0)
        c[:] = 0.0
        c[:, part] = kept
    if not project:
        return c
    return c @ (W_O.T if transposed else W_O) + (b_O if bias else 0.0)


def _columns_block(context: np.ndarray, pool: np.ndarray, W_O: np.ndarray, b_O: np.ndarray, head: int,
                   num_heads: int) -> np.ndarray:
    """The head's mean sent through W_O's columns instead of its rows: the other heads @ W_O, plus the mean
    slice @ W_O[:, columns].T (W_O is square, so the shapes fit), plus b_O."""
    d_k = context.shape[-1] // num_heads
    part = slice(head * d_k, (head + 1) * d_k)
    rest = np.array(context, dtype=float)
    rest[:, part] = 0.0
    mean = np.array(pool, dtype=float)[:, part].mean(axis=0)
    return rest @ W_O + mean @ W_O[:, part].T + b_O


def _ablation_mistakes(case: tuple) -> dict[str, np.ndarray]:
    d_k = case[0].shape[1] // case[5]
    return {
        "that is zero-ablation (section 4): the head's slice set to 0. Mean-ablation replaces it, for every "
        "token, by its mean over the pool's tokens (pool, axis=0).": _ablated(*case, how="zero"),
        "you took the mean over this sentence's own T tokens (context); the mean comes from the dataset: "
        "pool's rows, pool[:, columns].mean(axis=0).": _ablated(*case, how="own sentence"),
        "the slice was replaced by a single number, the mean of all its entries; average over the pool's "
        "tokens only (axis=0), keeping the d_k features apart.": _ablated(*case, how="scalar"),
        "every head was replaced by its mean; replace only head `head`'s slice, columns head*d_k to "
        "(head+1)*d_k - 1.": _ablated(*case, how="all heads"),
        "the other heads were removed (set to 0); keep them, and replace only the one head's slice by its "
        "mean.": _ablated(*case, how="keep only"),
        "you took the mean over the sentence's tokens and the pool's together; the mean comes from the dataset "
        "alone: pool[:, columns].mean(axis=0).": _ablated(*case, how="both"),
        "you cut head `head`'s block of W_O by columns (W_O[:, columns]); in context @ W_O the head's features "
        "meet W_O's rows: the output is the whole context, the slice replaced, @ W_O + b_O.":
            _columns_block(*case),
        "the pool's mean was added to the head's slice; mean-ablation puts it in the slice's place: "
        "kept[:, columns] = pool[:, columns].mean(axis=0).": _ablated(*case, how="added"),
        "you multiplied by W_O transposed (context @ W_O.T, the layout nn.Linear stores); W_O is given in the "
        "course's layout: context @ W_O.": _ablated(*case, transposed=True),
        "the bias b_O is missing: the attention output is context @ W_O + b_O.": _ablated(*case, bias=False),
        "b_O was added twice; the attention output is context @ W_O + b_O, with the bias once.":
            _ablated(*case) + case[3],
        "the slice is num_heads wide; each head has d_k = d_model // num_heads features.":
            _ablated(*case, width=case[5]),
        "you replaced head head-1: heads are counted from 0, so head h holds features h*d_k to (h+1)*d_k - 1.":
            _ablated(*case, start=(case[4] - 1) * d_k),
        "you replaced head head+1, as if the heads were counted from 1; they are counted from 0: head h holds "
        "features h*d_k to (h+1)*d_k - 1.": _ablated(*case, start=(case[4] + 1) * d_k),
        f"d_k was computed from the pool's number of tokens (pool.shape[0] // num_heads = "
        f"{case[1].shape[0] // case[5]}); d_k is d_model // num_heads = {d_k}, context.shape[1] // num_heads.":
            _ablated(*case, width=case[1].shape[0] // case[5]),
        "you put the pool's mean of the first d_k features (head 0's) into the head's slice; take the mean of "
        "the head's own columns: pool[:, head*d_k:(head+1)*d_k].mean(axis=0).": _ablated(*case, how="first features"),
        "you replaced head num_heads-1-head, counting the heads from the last one; head h is counted from the "
        "first, features h*d_k to (h+1)*d_k - 1.": _ablated(*case, start=(case[5] - 1 - case[4]) * d_k),
        "you returned the context with the head replaced, without W_O: the attention output is that context "
        "@ W_O + b_O.": _ablated(*case, project=False),
        "you took the median over the pool's tokens; mean-ablation uses their mean, pool[:, columns].mean(axis=0).":
            _ablated(*case, how="median"),
        "the slice is one column too wide (d_k + 1 features): head h's slice is head*d_k:(head+1)*d_k, whose end "
        "is excluded.": _ablated(*case, width=d_k + 1, start=case[4] * d_k),
        f"d_k was computed from the number of tokens (context.shape[0] // num_heads = {case[0].shape[0] // case[5]}); "
        f"d_k is d_model // num_heads = {d_k}, context.shape[1] // num_heads.":
            _ablated(*case, width=case[0].shape[0] // case[5]),
        "the slice was centred (the pool's mean subtracted); mean-ablation puts the mean in the slice's "
        "place, the same d_k vector for every token.": _ablated(*case, how="centred"),
        f"no feature was replaced: your slice of context is empty, as when d_k is hard-coded to 32 (this model's "
        f"value); these inputs have d_k = {d_k}: compute d_k = context.shape[1] // num_heads.":
            _ablated(*case, width=32),
        "each token's slice was averaged over its own d_k features (a mean over axis 1); the mean is over the "
        "pool's tokens, pool[:, columns].mean(axis=0), one d_k vector.": _ablated(*case, how="own features"),
        f"the mean was taken over only the first T = {case[0].shape[0]} rows of the pool (as many as the sentence "
        "has tokens); average over all N of its rows: pool[:, columns].mean(axis=0).":
            _ablated(*case, how="first rows"),
        "the slice starts at column head; head h's d_k features start at column h*d_k: "
        "context[:, head*d_k:(head+1)*d_k].": _ablated(*case, start=case[4]),
        "you took every num_heads-th column (head::num_heads); the heads are side by side, head h in the "
        "d_k consecutive columns head*d_k to (head+1)*d_k - 1.": _ablated(*case, strided=True),
    }


def _ablation_cases() -> list[tuple]:
    rng = np.random.default_rng(120)
    cases = []
    # head is never 0; in the second case head - 1, head, head + 1 and num_heads - 1 - head are four different
    # heads; d_k, num_heads, T // num_heads and N // num_heads differ in every case.
    for T, N, d_model, num_heads, head, scale in ((4, 16, 6, 3, 1, 1.0), (6, 13, 15, 5, 1, 1.0),
                                                  (3, 7, 12, 2, 1, 1e6)):
        context = rng.normal(size=(T, d_model)) * scale
        pool = (rng.normal(size=(N, d_model)) + rng.normal(size=d_model)) * scale   # its mean is not context's
        W_O = rng.normal(size=(d_model, d_model)) / np.sqrt(d_model)
        b_O = rng.normal(size=d_model)
        cases.append((context, pool, W_O, b_O, head, num_heads))
    return cases


def check_mean_ablated_output(mean_ablated_output: Callable[..., Any]) -> None:
    """Exercise 1: the attention output with head ``head`` replaced by its mean over a pool of tokens,
    (T, d_model)."""
    if callable(mean_ablated_output):
        case = _ablation_cases()[0]
        context, pool = case[0].copy(), case[1].copy()
        try:
            mean_ablated_output(context, pool, *[np.copy(a) if isinstance(a, np.ndarray) else a
                                                 for a in case[2:]])
        except Exception:
            pass                                        # check_function below reports the error in words
        if not (np.array_equal(context, case[0]) and np.array_equal(pool, case[1])):
            raise ExerciseError("mean_ablated_output changed `context` or `pool` itself; the model (and the "
                                "hidden test) still needs them. Work on a copy: np.array(context, "
                                "dtype=float) or context.copy().")
    for case in _ablation_cases():     # float32 arithmetic is accepted, as the hidden test accepts it
        check_function(
            mean_ablated_output, _ablated, [case], "mean_ablated_output",
            mistakes=_ablation_mistakes, atol=1e-6 * float(np.abs(_ablated(*case)).max()),
            any_scale=True,
            describe=lambda c: (f"context of shape {c[0].shape}, pool of shape {c[1].shape}, num_heads={c[5]} "
                                f"(d_k={c[0].shape[1] // c[5]}), head={c[4]}"
                                + (", huge values" if np.abs(c[0]).max() > 1e3 else "")),
        )
    passed("the head's d_k features replaced by their mean over the pool's tokens, the other heads kept, "
           "then W_O and its bias.")


# ---------------------------------------------------------------- exercise 2: feed-forward block
def _norm_with(gamma: Any, beta: Any, eps: float) -> Callable[[np.ndarray], np.ndarray]:
    """A LayerNorm over the last axis with these gamma, beta and eps: the ``layer_norm`` argument the exercise
    gets (the learner does not write it)."""
    def layer_norm(h: Any) -> np.ndarray:
        return _layer_norm(np.asarray(h, dtype=float), gamma, beta, eps)

    return layer_norm


def _ffn_block(x1: np.ndarray, W_1: np.ndarray, b_1: np.ndarray, W_2: np.ndarray, b_2: np.ndarray,
               layer_norm: Callable[[np.ndarray], np.ndarray], *, act: Callable = gelu, residual: bool = True,
               pre_norm: bool = False, bias_2: bool = True, residual_after: bool = False, norm: bool = True,
               act_last: bool = False, b_1_after: bool = False, norm_x1: bool = False,
               norm_ffn_input: bool = False, own_norm: bool = False, bias_1: bool = True,
               b_2_after: bool = False) -> np.ndarray:
    if own_norm:                                        # a LayerNorm of one's own, without gamma and beta
        layer_norm = _norm_with(1.0, 0.0, 1e-12)
    if not bias_1:
        b_1 = 0.0 * b_1
    if b_2_after:                                       # b_2 added after the LayerNorm
        return layer_norm(x1 + act(x1 @ W_1 + b_1) @ W_2) + b_2
    if norm_x1:                                         # LN(LN(x1) + FFN(.)): a LayerNorm too many
        n1 = layer_norm(x1)
        return layer_norm(n1 + act((n1 if norm_ffn_input else x1) @ W_1 + b_1) @ W_2 + b_2)
    if b_1_after:
        return layer_norm(x1 + (act(x1 @ W_1) + b_1) @ W_2 + b_2)
    b_2 = b_2 if bias_2 else 0.0
    if pre_norm:
        return x1 + act(layer_norm(x1) @ W_1 + b_1) @ W_2 + b_2
    h = act((x1 @ W_1 + b_1) @ W_2 + b_2) if act_last else act(x1 @ W_1 + b_1) @ W_2 + b_2
    if not norm:
        return x1 + h
    if residual_after:
        return x1 + layer_norm(h)
    return layer_norm(x1 + h if residual else h)


def _relu(z: np.ndarray) -> np.ndarray:
    return np.maximum(z, 0.0)


def _gelu_sigmoid(z: np.ndarray) -> np.ndarray:
    return z / (1.0 + np.exp(-1.702 * z))


def _gelu_tanh(z: np.ndarray) -> np.ndarray:
    return 0.5 * z * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (z + 0.044715 * z**3)))


def _gelu_no_sqrt2(z: np.ndarray) -> np.ndarray:
    return 0.5 * z * (1.0 + _erf(z))


def _gelu_half(z: np.ndarray) -> np.ndarray:
    return 0.5 * z * (1.0 + _erf(z / 2.0))


def _ffn_mistakes(case: tuple) -> dict[str, np.ndarray]:
    return {
        "that GELU uses erf(z); the exact GELU is 0.5 z (1 + erf(z / sqrt(2))), with z divided by sqrt(2).":
            _ffn_block(*case, act=_gelu_no_sqrt2),
        "that GELU uses erf(z / 2); the exact GELU divides by the square root of 2: 0.5 z (1 + erf(z / sqrt(2))).":
            _ffn_block(*case, act=_gelu_half),
        "that GELU lacks the factor 1/2: the exact GELU is 0.5 z (1 + erf(z / sqrt(2))).":
            _ffn_block(*case, act=lambda z: 2.0 * gelu(z)),
        "b_1 was added after the GELU (GELU(x1 W_1) + b_1); it goes inside: GELU(x1 W_1 + b_1).":
            _ffn_block(*case, b_1_after=True),
        "the residual is missing: layer_norm(x1 + FFN(x1)), not layer_norm(FFN(x1)).":
            _ffn_block(*case, residual=False),
        "layer_norm was applied before the feed-forward (x1 + FFN(layer_norm(x1)), the pre-norm arrangement); "
        "this model is post-norm: layer_norm(x1 + FFN(x1)).": _ffn_block(*case, pre_norm=True),
        "that is ReLU; this model's activation is GELU, 0.5 z (1 + erf(z / sqrt(2))).": _ffn_block(*case, act=_relu),
        "that is the tanh approximation of GELU; this model (hidden_act \"gelu\") uses the exact form "
        "0.5 z (1 + erf(z / sqrt(2))).": _ffn_block(*case, act=_gelu_tanh),
        "layer_norm was applied to x1 before the residual as well, layer_norm(layer_norm(x1) + FFN(x1)); x1 "
        "already leaves the attention block normalised, and post-norm normalises once, after the addition: "
        "layer_norm(x1 + FFN(x1)).": _ffn_block(*case, norm_x1=True),
        "layer_norm was applied to x1 before the feed-forward and the residual, layer_norm(layer_norm(x1) + "
        "FFN(layer_norm(x1))); post-norm normalises once, after the addition: layer_norm(x1 + FFN(x1)).":
            _ffn_block(*case, norm_x1=True, norm_ffn_input=True),
        "that is the sigmoid approximation of GELU, z sigmoid(1.702 z); this model uses the exact form "
        "0.5 z (1 + erf(z / sqrt(2))).": _ffn_block(*case, act=_gelu_sigmoid),
        "the bias b_1 is missing: the first linear map is x1 W_1 + b_1, inside the GELU.":
            _ffn_block(*case, bias_1=False),
        "that GELU lacks its factor z: 0.5 (1 + erf(z / sqrt(2))) is only the weight GELU gives z; the exact GELU "
        "is 0.5 z (1 + erf(z / sqrt(2))).": _ffn_block(*case, act=lambda z: 0.5 * (1.0 + _erf(z / math.sqrt(2.0)))),
        "b_2 was added after the LayerNorm (layer_norm(x1 + GELU(x1 W_1 + b_1) W_2) + b_2); it belongs to the "
        "second linear map, inside: layer_norm(x1 + GELU(x1 W_1 + b_1) W_2 + b_2).":
            _ffn_block(*case, b_2_after=True),
        "the bias b_2 is missing: the feed-forward is GELU(x1 W_1 + b_1) W_2 + b_2.": _ffn_block(*case, bias_2=False),
        "the residual was added after the LayerNorm (x1 + layer_norm(FFN(x1))); it is added first: "
        "layer_norm(x1 + FFN(x1)).": _ffn_block(*case, residual_after=True),
        "the final LayerNorm is missing: the block returns layer_norm(x1 + FFN(x1)), not x1 + FFN(x1).":
            _ffn_block(*case, norm=False),
        "the GELU is missing: the feed-forward is GELU(x1 W_1 + b_1) W_2 + b_2, with GELU between the two "
        "linear maps.": _ffn_block(*case, act=lambda z: z),
        "the GELU was applied after W_2 (GELU((x1 W_1 + b_1) W_2 + b_2)); it comes between the two linear "
        "maps: GELU(x1 W_1 + b_1) W_2 + b_2.": _ffn_block(*case, act_last=True),
        "you normalised with a LayerNorm of your own, without the model's gamma and beta; call the layer_norm "
        "you are given: layer_norm(x1 + FFN(x1)).": _ffn_block(*case, own_norm=True),
    }


def _ffn_cases() -> list[tuple]:
    rng = np.random.default_rng(71)
    cases = []
    for T, d, d_ff, eps in ((3, 4, 7, 1e-12), (5, 6, 10, 1e-2)):
        x1 = rng.normal(size=(T, d))
        W_1, b_1 = rng.normal(size=(d, d_ff)) / np.sqrt(d), rng.normal(size=d_ff)
        W_2, b_2 = rng.normal(size=(d_ff, d)) / np.sqrt(d_ff), rng.normal(size=d)
        gamma, beta = 1.0 + 0.5 * rng.normal(size=d), rng.normal(size=d)
        cases.append((x1, W_1, b_1, W_2, b_2, _norm_with(gamma, beta, eps)))
    return cases


def _layer_arguments(bert_layer: Any) -> tuple:
    """``W_1, b_1, W_2, b_2, layer_norm`` of a BERT layer's second half, as float64 NumPy in the course's layout
    (``x1 @ W_1``; an ``nn.Linear`` weight is stored transposed), ``layer_norm`` with the layer's own gamma,
    beta and eps."""
    def p(t: Any) -> np.ndarray:
        return np.asarray(t.detach().numpy(), dtype=float)

    norm = bert_layer.output.LayerNorm
    return (p(bert_layer.intermediate.dense.weight).T, p(bert_layer.intermediate.dense.bias),
            p(bert_layer.output.dense.weight).T, p(bert_layer.output.dense.bias),
            _norm_with(p(norm.weight), p(norm.bias), float(norm.eps)))


class _ShortcutCalled(Exception):
    """Raised by the stand-ins of the course's reference answer while a learner's feed_forward_block runs."""


#: What must not do the exercise's work: PyTorch's GELU and linear layers (those of the model included), its
#: LayerNorm (the learner is given one), by the name torch's function dispatch gives them.
_TORCH_SHORTCUTS = {"gelu": "GELU", "linear": "linear layer", "layer_norm": "LayerNorm"}
_REFERENCE_NAMES = ("_ffn_block", "gelu", "_erf")   # not _layer_norm: the given layer_norm runs it


def _ffn_shortcut(fn: Callable[..., Any], case: tuple) -> str | None:
    """Which shortcut ``fn`` takes, in words, or None: the course's reference answer (a name bound to an object
    of ``selfattention.checks``, or a call to it reached at run time), a module of the model (a name bound to
    an ``nn.Module``), or PyTorch's GELU, linear layers or LayerNorm, seen by running ``fn`` once under a
    torch function mode (which sees ``bert_layer.intermediate.intermediate_act_fn`` too, whose GELU was bound
    when the model was built)."""
    import sys

    import torch
    from torch.overrides import TorchFunctionMode

    reference = ("the course's reference answer (selfattention.checks); write the feed-forward block "
                 "yourself")
    home = getattr(fn, "__module__", None)
    for f in learners_functions(fn):
        for g in used_objects(f).values():
            if is_learners(g, home):
                continue
            where = g.__name__ if isinstance(g, type(sys)) else getattr(g, "__module__", None)
            if isinstance(where, str) and where.startswith("selfattention.checks"):
                return reference
            if isinstance(g, torch.nn.Module):
                return ("a module of the model or of PyTorch (an nn.Module such as bert_layer.intermediate "
                        "or its intermediate_act_fn); write the GELU and the two matrix products with NumPy")
    seen: list[str] = []

    class _Record(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            seen.append(getattr(func, "__name__", ""))
            return func(*args, **(kwargs or {}))

    places = [(sys.modules[__name__], _REFERENCE_NAMES)]
    try:
        with np.errstate(all="ignore"), stand_ins(places, _ShortcutCalled), _Record():
            fn(*[np.copy(a) if isinstance(a, np.ndarray) else a for a in case])
    except _ShortcutCalled:
        return reference
    except Exception:   # noqa: BLE001 - check_function reports the error in words
        pass
    used = [name for name in _TORCH_SHORTCUTS if name in seen]
    if used:
        return (f"PyTorch's {_TORCH_SHORTCUTS[used[0]]} (F.{used[0]}, an nn module, or the model's own "
                "bert_layer.intermediate, bert_layer.output or intermediate_act_fn); write the GELU and the two "
                "matrix products with NumPy (erf as the exercise says)")
    return None


def check_feed_forward_block(feed_forward_block: Callable[..., Any], attention_out: Any = None,
                             bert_layer: Any = None, target: Any = None) -> None:
    """Exercise 2: layer_norm(x1 + GELU(x1 W_1 + b_1) W_2 + b_2), (T, d_model), with ``layer_norm`` given.
    Given ``attention_out`` (T, d_model), section 1's attention block rebuilt with the course's code, the
    model's ``bert_layer`` and its real output ``target``, a right answer then finishes the layer, and the
    check prints whether the whole rebuilt layer matches the model to float32 rounding."""
    cases = _ffn_cases()
    if callable(feed_forward_block):
        shortcut = _ffn_shortcut(feed_forward_block, cases[0])
        if shortcut:
            raise ExerciseError(f"feed_forward_block uses {shortcut}: the GELU, the two matrix products and "
                                "the residual are the exercise.")
        try:
            feed_forward_block(*[np.copy(a) if isinstance(a, np.ndarray) else a for a in cases[0]])
        except TypeError as error:
            if "converted to Python scalars" in str(error) or "must be real number" in str(error):
                raise ExerciseError(f"feed_forward_block raised TypeError: {error}. A function of the math module "
                                    "(math.erf?) got an array; it takes one number at a time: use "
                                    "np.vectorize(math.erf)(z) or scipy.special.erf(z).") from None
        except Exception:   # noqa: BLE001 - check_function reports the error in words
            pass
    check_function(
        feed_forward_block, _ffn_block, cases, "feed_forward_block", mistakes=_ffn_mistakes, any_scale=True,
        describe=lambda c: f"x1 of shape {c[0].shape}, d_ff={c[1].shape[1]}",
    )
    passed("GELU between the two matrix products, the residual, then the given layer_norm (post-norm).")
    if attention_out is not None and bert_layer is not None and target is not None:
        x1 = np.asarray(attention_out.detach().numpy() if hasattr(attention_out, "detach") else attention_out,
                        dtype=float)
        got = np.asarray(feed_forward_block(x1, *_layer_arguments(bert_layer)), dtype=float)
        want = np.asarray(target.detach().numpy() if hasattr(target, "detach") else target, dtype=float)
        print("The whole layer rebuilt (our attention, the model's LayerNorm, your feed_forward_block) against "
              f"the model's output: max |ours - model| < 1e-5: {float(np.abs(got - want).max()) < 1e-5}")


# ---------------------------------------------------------------- exercise 3: one head against the residual
def _head_ratio(weights: Any, vW: Any, x: Any) -> np.ndarray:
    o = np.asarray(weights, dtype=float) @ np.asarray(vW, dtype=float)          # (heads, T, d_model): o_i^h
    return np.linalg.norm(o, axis=-1) / np.linalg.norm(np.asarray(x, dtype=float), axis=-1)


def _head_ratio_mistakes(case: tuple) -> dict[str, np.ndarray]:
    weights, vW, x = (np.asarray(a, dtype=float) for a in case)
    norm = lambda v: np.linalg.norm(v, axis=-1)  # noqa: E731
    return {
        "you returned ||o_i^h|| without dividing by ||x_i||: the exercise asks for the length of what head h "
        "adds as a fraction of token i's own length, np.linalg.norm(x, axis=-1).": norm(weights @ vW),
        "that is ||x_i|| / ||o_i^h||, the ratio upside down: the head's output goes on top.":
            norm(x) / norm(weights @ vW),
        "those are squared norms (sums of squares); take the square root, np.linalg.norm.":
            ((weights @ vW) ** 2).sum(-1) / (x**2).sum(-1),
        "that is ||v_i W_O^h|| / ||x_i||, what token i would send, without the weights: the head adds "
        "o_i^h = sum_j alpha_ij v_j W_O^h, weights @ vW.": norm(vW) / norm(x),
        "that is sum_j alpha_ij ||v_j W_O^h|| / ||x_i||, a sum of lengths (section 3's shares), blind to how "
        "the vectors cancel: what is added to x_i is the vector o_i^h, so take the length of the sum.":
            (weights * norm(vW)[:, None, :]).sum(-1) / norm(x),
        "the weights are transposed (alpha_ji): row i of a head's weights belongs to token i, so "
        "o^h = weights @ vW.": norm(np.swapaxes(weights, 1, 2) @ vW) / norm(x),
        "that divides by the norm of the whole x (all T tokens at once, one number): divide by each token's "
        "own length ||x_i||, np.linalg.norm(x, axis=-1).": norm(weights @ vW) / np.linalg.norm(x),
        "that divides by the mean length of x's tokens (one number); divide each token's ratio by its own "
        "length ||x_i||, np.linalg.norm(x, axis=-1).": norm(weights @ vW) / norm(x).mean(),
        "that is how much token i's length changes, (||x_i + o_i^h|| - ||x_i||) / ||x_i||; the exercise asks "
        "for the length of the vector the head adds, ||o_i^h|| / ||x_i||.":
            (norm(x + weights @ vW) - norm(x)) / norm(x),
        "that is ||x_i + o_i^h|| / ||x_i||, the length after the head is added; the exercise asks for the "
        "length of the vector the head adds, ||o_i^h|| / ||x_i||.": norm(x + weights @ vW) / norm(x),
        "that divides by the longest token's length (one number, ||x||.max()); divide each token's ratio by "
        "its own length ||x_i||, np.linalg.norm(x, axis=-1).": norm(weights @ vW) / norm(x).max(),
        "that is a percentage (the ratio times 100); the exercise asks for the fraction itself, ||o_i^h|| / "
        "||x_i||.": 100.0 * norm(weights @ vW) / norm(x),
        "the heads were summed before the norm (the whole attention output); the exercise asks for each head "
        "h apart, ||o_i^h||.": np.broadcast_to(norm((weights @ vW).sum(0)) / norm(x), weights.shape[:2]),
    }


def _tensors_or_arrays(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Call ``fn`` with torch tensors, as section 3's ``weights``, ``vW`` and ``x`` are; an answer written for
    NumPy arrays that fails on tensors is called again with arrays (the hidden test does the same)."""
    import torch

    def call(*args: Any) -> Any:
        try:
            with warnings.catch_warnings():       # NumPy's note on tensors passed through its functions
                warnings.simplefilter("ignore", DeprecationWarning)
                got = fn(*[torch.as_tensor(np.asarray(a, dtype=float)) for a in args])
        except Exception as first:
            try:
                got = fn(*[np.asarray(a, dtype=float) for a in args])
            except Exception:
                raise first from None
        return got.detach().numpy() if isinstance(got, torch.Tensor) else got

    call.__name__ = getattr(fn, "__name__", "head_to_residual")
    return call


def _head_ratio_cases() -> list[tuple]:
    rng = np.random.default_rng(123)
    out = []
    for heads, T, d, scale in [(3, 5, 7, 1.0), (4, 6, 9, 1e3)]:
        scores = rng.normal(size=(heads, T, T)) * 2.0
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        weights /= weights.sum(-1, keepdims=True)
        vW = rng.normal(size=(heads, T, d)) * rng.uniform(0.2, 3.0, size=(heads, T, 1)) * scale
        x = 10.0 * rng.normal(size=(T, d)) * scale
        out.append((weights, vW, x))
    return out


def _number(value: Any) -> float | None:
    try:
        v = float(np.asarray(value, dtype=float))
    except (TypeError, ValueError):
        return None
    return v if np.isfinite(v) else None


def check_head_to_residual(head_to_residual: Callable[..., Any], predicted_parked: Any, predicted_other: Any,
                           weights: Any = None, vW: Any = None, x: Any = None,
                           heads: tuple[int, int] = (7, 10)) -> None:
    """Exercise 3: ``head_to_residual(weights, vW, x)`` -> (heads, T) ratios ||o_i^h|| / ||x_i||, graded; the
    two predictions are not graded, only printed next to what was measured (given section 3's ``weights``,
    ``vW`` and ``x``, the medians of ``heads``)."""
    if callable(head_to_residual):
        head_to_residual = _tensors_or_arrays(head_to_residual)
    check_function(
        head_to_residual, _head_ratio, _head_ratio_cases(), "head_to_residual", mistakes=_head_ratio_mistakes,
        any_scale=True,
        describe=lambda c: f"weights of shape {c[0].shape}, vW of shape {c[1].shape}, x of shape {c[2].shape}",
    )
    passed("one ratio per head and token, ||o_i^h|| / ||x_i||, with o^h = weights @ vW: the length of the "
           "vector added to x_i, which the sum of the shares overstates, since the vectors partly cancel.")
    if weights is not None and vW is not None and x is not None:
        measured = np.median(_head_ratio(weights, vW, x), axis=-1)
        for head, guess, name in ((heads[0], predicted_parked, "predicted_parked"),
                                  (heads[1], predicted_other, "predicted_other")):
            v = _number(guess)
            if v is None:
                said = f"no prediction recorded in {name}"
            elif v == 0:
                said = "your prediction 0: a head that adds nothing"
            else:
                said = f"your prediction {v:.3f} ({v / measured[head]:.1f} times the measured value)"
            print(f"Head {head}: measured median {measured[head]:.3f}; {said}.")
        print("One sentence, one layer: a size, not a law.")
