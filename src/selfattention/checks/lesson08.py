"""Checks for lesson 08 (why several heads): silencing a head, PyTorch's weights in NumPy's layout, the
parameters of grouped-query heads and of keys and values of another width."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from ._engine import ExerciseError, _to_array, check_array, passed

__all__ = ["check_silence_head", "check_torch_to_numpy", "check_attention_param_count"]


# ------------------------------------------------------------------ exercise 1: silence one head
def _model(num_heads: int = 2, d_k: int = 4, seed: int = 3):
    """A lookup-task model as lesson 08 builds it: ``num_heads`` single heads side by side, a readout."""
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
    zero = lambda head, X: torch.zeros_like(head(X)[0])  # noqa: E731
    uniform = lambda head, X: head.W_value(X).mean(dim=1, keepdim=True).expand_as(head(X)[0])  # noqa: E731
    for h in (0, 1):
        try:
            got = silence_head(model, h, X.clone())
        except NotImplementedError:
            raise ExerciseError("silence_head still raises NotImplementedError: replace that line.") from None
        except Exception as exc:
            if "mat1 and mat2 shapes" in str(exc):
                raise ExerciseError("silence_head raised a shape error: the readout expects 2 d_k features, "
                                    "one block per head. Zero the head's output, don't remove the head.") from None
            raise ExerciseError(f"silence_head raised {type(exc).__name__} for head={h}: {exc}") from None
        changed = [k for k, v in model.state_dict().items() if not torch.equal(v, before[k])]
        if changed:
            raise ExerciseError(f"silence_head changed the model itself ({', '.join(changed)}): every later "
                                f"use of it would run with a head missing. Silence a copy "
                                f"(copy.deepcopy(model)), or leave the weights alone and zero the head's output.")
        if isinstance(got, (tuple, list)) and len(got) == 2 and hasattr(got[1], "shape"):
            raise ExerciseError("silence_head returned a pair (what the model returns: logits and weights); "
                                "return the logits only.")
        right = _logits_with(model, X, {h: zero})
        mistakes = {
            "nothing was silenced: these are the model's own logits. Set head's output to zeros (zero its "
            "W_value, or its block of the concatenation) before the readout.": _logits_with(model, X, {}),
            f"you silenced the other head: head={h} is an index into model.attention.heads, 0 for head 1 and "
            f"1 for head 2.": _logits_with(model, X, {1 - h: zero}),
            "this head's weights became uniform (zeroed W_query or W_key make every score 0), so it still passes "
            "on the mean of its values. Silencing means its output is 0: zero W_value, or its output block.":
                _logits_with(model, X, {h: uniform}),
            "both heads were silenced; only head number `head` should be.":
                _logits_with(model, X, {0: zero, 1: zero}),
        }
        check_array(got, right, f"the logits of silence_head(model, head={h}, X)", mistakes=mistakes, atol=1e-5)
    passed("silence_head zeroes one head's output, leaves the other and the model itself as they were.")


# ------------------------------------------------------------------ exercise 2: PyTorch's weights in NumPy
_NAMES = ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O")


def _reference_layer(seed: int = 4, d_model: int = 6, num_heads: int = 2):
    import torch

    torch.manual_seed(seed)
    mha = torch.nn.MultiheadAttention(d_model, num_heads, batch_first=True)
    with torch.no_grad():  # PyTorch starts its biases at 0: give them values, so a missing one shows
        mha.in_proj_bias.normal_()
        mha.out_proj.bias.normal_()
    return mha


def _numpy_weights(mha) -> dict[str, np.ndarray]:
    w = mha.in_proj_weight.detach().numpy().astype(float)
    b = mha.in_proj_bias.detach().numpy().astype(float)
    d = w.shape[1]
    return {"W_Q": w[:d].T, "W_K": w[d:2 * d].T, "W_V": w[2 * d:].T,
            "W_O": mha.out_proj.weight.detach().numpy().astype(float).T,
            "b_Q": b[:d], "b_K": b[d:2 * d], "b_V": b[2 * d:],
            "b_O": mha.out_proj.bias.detach().numpy().astype(float)}


def check_torch_to_numpy(torch_to_numpy: Callable[..., Any]) -> None:
    """Exercise 2: ``torch_to_numpy(mha)`` -> (W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O) of a
    ``torch.nn.MultiheadAttention``, matrices (d_model, d_model) in (in, out) order, so that
    ``X @ W_Q + b_Q`` are the queries."""
    if torch_to_numpy is None or torch_to_numpy is Ellipsis or not callable(torch_to_numpy):
        raise ExerciseError("torch_to_numpy is not a function yet: write it in the answer cell above.")
    mha = _reference_layer()
    try:
        got = torch_to_numpy(mha)
    except NotImplementedError:
        raise ExerciseError("torch_to_numpy still raises NotImplementedError: replace that line.") from None
    except Exception as exc:
        raise ExerciseError(f"torch_to_numpy raised {type(exc).__name__}: {exc}") from None
    if got is None or got is Ellipsis:
        raise ExerciseError("torch_to_numpy returns nothing yet: `return W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O`.")
    if not isinstance(got, (tuple, list)) or len(got) != 8:
        raise ExerciseError(f"torch_to_numpy should return 8 arrays (W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O), "
                            f"but it returned {type(got).__name__}"
                            + (f" of length {len(got)}." if isinstance(got, (tuple, list)) else "."))
    right = _numpy_weights(mha)
    d = right["W_Q"].shape[0]
    for name, value in zip(_NAMES, got, strict=True):
        arr = _to_array(value, name)
        if name.startswith("W") and arr.shape == (3 * d, d):
            raise ExerciseError(f"{name} has shape {arr.shape}: that is the whole in_proj_weight. It stacks "
                                f"W_Q, W_K and W_V, {d} rows each: cut it into three along its rows (dim 0).")
        if name.startswith("W") and arr.shape == (3 * d, d // 3):
            raise ExerciseError(f"{name} has shape {arr.shape}: in_proj_weight was cut along its columns. It "
                                f"stacks W_Q, W_K, W_V one above the other: cut its rows (dim 0) into three.")
        if name.startswith("b") and arr.shape == (3 * d,):
            raise ExerciseError(f"{name} has shape {arr.shape}: that is the whole in_proj_bias (b_Q, b_K, b_V "
                                f"one after the other); cut it into three pieces of {d}.")
        mistakes = {}
        if name.startswith("W"):
            mistakes[f"it is in nn.Linear's (out, in) order; in NumPy's X @ {name} the matrix is (in, out): "
                     f"transpose it (.T)."] = right[name].T
        if name.startswith("b") and np.any(right[name] != 0):
            mistakes["the biases are missing: these are zeros; PyTorch keeps them in in_proj_bias (b_Q, b_K, "
                     "b_V in that order) and out_proj.bias."] = np.zeros_like(right[name])
        others = [n for n in _NAMES if n[0] == name[0] and n != name and right[n].shape == right[name].shape]
        for other in others:
            where = ("in_proj_weight stacks W_Q, W_K, W_V in that order (rows 0 to d_model - 1 are W_Q)"
                     if name[0] == "W" else "in_proj_bias holds b_Q, b_K, b_V in that order")
            mistakes[f"these are the numbers of {other}: {where}; W_O and b_O are out_proj's."] = right[other]
            if name[0] == "W":
                mistakes[f"these are {other}'s numbers, transposed or not: {where}."] = right[other].T
        check_array(arr, right[name], name, mistakes=mistakes)
    passed("in_proj_weight (3 d_model, d_model) holds W_Q^T, W_K^T, W_V^T one above the other, out_proj.weight "
           "is W_O^T, and in_proj_bias holds b_Q, b_K, b_V: transposed, they give X @ W_Q + b_Q, ...")


# ------------------------------------------------------------------ exercise 3: the parameter count
def _count(d_model: int, num_heads: int, num_kv_heads: int, kdim: int, bias: bool) -> int:
    d_k = d_model // num_heads
    kv = num_kv_heads * d_k  # the width of all key heads together (and of all value heads)
    return 2 * d_model * d_model + 2 * kdim * kv + ((2 * d_model + 2 * kv) if bias else 0)


_CASES = [(8, 4, 4, 8, True), (8, 4, 4, 8, False), (8, 4, 2, 8, True), (12, 6, 3, 12, False),
          (8, 2, 2, 5, True), (16, 8, 2, 10, True), (4096, 32, 8, 4096, False)]


def _wrong_counts() -> dict[str, Callable[[int, int, int, int, bool], int]]:
    def c(d, h, g, kdim, bias, *, q=None, kvw=None, kin=None, out=True, kv_bias=None, use_bias=None, kv_n=2):
        d_k = d // h
        kv = g * d_k if kvw is None else kvw(d, h, g, kdim)
        b = bias if use_bias is None else use_bias(bias)
        k_in = kdim if kin is None else kin(d, kdim)
        kv_b = kv if kv_bias is None else kv_bias(d, kv)
        total = d * d + kv_n * k_in * kv + (d * d if out else 0)
        return total + ((d + kv_n * kv_b + (d if out else 0)) if b else 0)

    return {
        "this is the plain layer's count, 4 d_model^2 + 4 d_model, shown above; here W_K and W_V change: "
        "they read kdim features and have num_kv_heads heads of d_k.":
            lambda d, h, g, k, b: c(d, h, g, k, b, kvw=lambda d, h, g, kdim: d, kin=lambda d, kdim: d),
        "this is the plain layer's count, 4 d_model^2 + 4 d_model, whatever `bias`; here W_K and W_V change "
        "(kdim inputs, num_kv_heads heads of d_k), and bias=False means no bias vectors.":
            lambda d, h, g, k, b: c(d, h, g, k, b, kvw=lambda d, h, g, kdim: d, kin=lambda d, kdim: d,
                                    use_bias=lambda b: True),
        "the count does not change with `bias`: with bias=False there is no bias vector at all, with "
        "bias=True each of the four projections has one (as long as its output).":
            lambda d, h, g, k, b: c(d, h, g, k, b, use_bias=lambda b: True),
        "the count never includes the biases: with bias=True each projection adds a bias vector as long as "
        "its output (d_model for W_Q and W_O, num_kv_heads * d_k for W_K and W_V).":
            lambda d, h, g, k, b: c(d, h, g, k, b, use_bias=lambda b: False),
        "the biases are counted the wrong way round: bias=True means a bias vector for each projection, "
        "bias=False none.": lambda d, h, g, k, b: c(d, h, g, k, b, use_bias=lambda b: not b),
        "W_K and W_V have num_heads heads here; with grouped-query heads they have only num_kv_heads heads of "
        "d_k = d_model / num_heads each: num_kv_heads * d_k outputs.":
            lambda d, h, g, k, b: c(d, h, g, k, b, kvw=lambda d, h, g, kdim: d),
        "W_K and W_V read d_model input features here; keys and values are computed from a sequence with "
        "kdim features per token, so they have kdim rows.":
            lambda d, h, g, k, b: c(d, h, g, k, b, kin=lambda d, kdim: d),
        "W_K and W_V are counted as kdim x kdim; they map the kdim input features to num_kv_heads * d_k "
        "outputs (the keys must meet d_k-wide queries).":
            lambda d, h, g, k, b: c(d, h, g, k, b, kvw=lambda d, h, g, kdim: kdim),
        "W_O (d_model x d_model, plus its bias) is missing from the count.":
            lambda d, h, g, k, b: c(d, h, g, k, b, out=False),
        "the biases of W_K and W_V are counted with d_model numbers each; a bias is as long as its "
        "projection's output, num_kv_heads * d_k.":
            lambda d, h, g, k, b: c(d, h, g, k, b, kv_bias=lambda d, kv: d),
        "only one of W_K and W_V is counted; a grouped-query layer still has both, each num_kv_heads * d_k "
        "wide.": lambda d, h, g, k, b: c(d, h, g, k, b, kv_n=1),
    }


def check_attention_param_count(attention_param_count: Callable[..., Any]) -> None:
    """Exercise 3: ``attention_param_count(d_model, num_heads, num_kv_heads, kdim, bias)``: W_Q and W_O of
    d_model x d_model, W_K and W_V from kdim features to num_kv_heads heads of d_k = d_model / num_heads,
    and a bias vector per projection when ``bias``."""
    if attention_param_count is None or attention_param_count is Ellipsis or not callable(attention_param_count):
        raise ExerciseError("attention_param_count should be a function: write it in the answer cell above.")
    got = {}
    for case in _CASES:
        what = "d_model={}, num_heads={}, num_kv_heads={}, kdim={}, bias={}".format(*case)
        try:
            value = attention_param_count(*case)
        except NotImplementedError:
            raise ExerciseError("attention_param_count still raises NotImplementedError: replace that line.") from None
        except Exception as exc:
            raise ExerciseError(f"attention_param_count raised {type(exc).__name__} for {what}: {exc}") from None
        if value is None or value is Ellipsis:
            raise ExerciseError("attention_param_count returns nothing yet: `return` the number of parameters.")
        try:
            got[case] = float(value)
        except (TypeError, ValueError):
            raise ExerciseError(f"attention_param_count should return a number, but for {what} it returned "
                                f"{type(value).__name__} {value!r:.60}") from None
    if all(got[case] == _count(*case) for case in _CASES):
        passed("2 d_model^2 for W_Q and W_O, 2 kdim num_kv_heads d_k for W_K and W_V, and with biases "
               "2 d_model + 2 num_kv_heads d_k: right for plain, grouped-query and kdim layers.")
        return
    for explanation, wrong in _wrong_counts().items():
        if all(got[case] == wrong(*case) for case in _CASES):
            raise ExerciseError(f"attention_param_count is not right yet: {explanation}")
    case = next(case for case in _CASES if got[case] != _count(*case))
    what = "d_model={}, num_heads={}, num_kv_heads={}, kdim={}, bias={}".format(*case)
    raise ExerciseError(f"for {what} you count {got[case]:g} parameters; the right number is "
                        f"{_count(*case)}. Count W_Q ({case[0]} x {case[0]}), W_K and W_V ({case[3]} x "
                        f"num_kv_heads * d_k each), W_O ({case[0]} x {case[0]}) and, with bias=True, one bias "
                        f"vector per projection, as long as its output.")
