"""Checks for lesson 08 (why several heads): silencing a head, a cross-attention call in NumPy, the
parameters of grouped-query heads and of keys and values of another width."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from ._engine import ExerciseError, check_array, passed

__all__ = ["check_silence_head", "check_cross_attention_numpy", "check_attention_param_count",
           "check_two_head_design", "check_gqa_prediction"]


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
                                f"(copy.deepcopy(model)), or leave the weights alone and zero the head's output.")
        with torch.no_grad():
            if not torch.allclose(model(X)[0], own, atol=1e-6):
                raise ExerciseError("after silence_head the model gives other logits than before: it changed "
                                    "the model itself. Silence a copy (copy.deepcopy(model)), or zero the "
                                    "head's output without touching the model.")
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
        check_array(got, right, f"the output of silence_head(model, head={h}, X)", mistakes=mistakes, atol=1e-5)
    passed("silence_head zeroes one head's output, leaves the other and the model itself as they were.")


# ------------------------------------------------------------------ exercise 2: cross-attention in NumPy
def _cross_layer(seed: int = 4, d_model: int = 6, num_heads: int = 2, kdim: int = 5):
    """A cross-attention layer (keys and values of ``kdim`` features) with nonzero biases, and its inputs."""
    import torch

    torch.manual_seed(seed)
    mha = torch.nn.MultiheadAttention(d_model, num_heads, kdim=kdim, vdim=kdim, batch_first=True)
    with torch.no_grad():  # PyTorch starts its biases at 0: give them values, so a missing one shows
        mha.in_proj_bias.normal_()
        mha.out_proj.bias.normal_()
        mha.q_proj_weight.mul_(3.0)  # larger scores: a missing or wrong scale shows clearly
    x = torch.randn(4, d_model)
    memory = torch.randn(5, kdim)
    return mha, x.numpy().astype(float), memory.numpy().astype(float)


def _cross_numpy(mha, x, memory, *, q_t: bool = True, o_t: bool = True, scale: str = "d_k", split: str = "heads",
                 bias: bool = True, axis: int = -1, w_o: bool = True) -> np.ndarray:
    """``mha(x, memory, memory)`` in NumPy (x: (T, d_model), memory: (S, kdim)); the keywords make the mistakes
    the check names: W_Q or W_O in (out, in) order, another scale, heads split by a plain reshape or not at all,
    no biases, the softmax over the queries, no W_O."""
    def arr(t):
        return t.detach().numpy().astype(float)

    d, h = mha.embed_dim, mha.num_heads
    d_k = d // h
    W_Q, W_K, W_V = arr(mha.q_proj_weight), arr(mha.k_proj_weight), arr(mha.v_proj_weight)
    b = arr(mha.in_proj_bias) if bias else np.zeros(3 * d)
    W_O, b_O = arr(mha.out_proj.weight), arr(mha.out_proj.bias) if bias else np.zeros(d)
    Q = x @ (W_Q.T if q_t else W_Q) + b[:d]
    K = memory @ W_K.T + b[d:2 * d]
    V = memory @ W_V.T + b[2 * d:]

    def heads(M):
        if split == "reshape":
            return M.reshape(h, len(M), d_k)
        if split == "none":
            return M[None]
        return M.reshape(len(M), h, d_k).transpose(1, 0, 2)

    Qh, Kh, Vh = heads(Q), heads(K), heads(V)
    S = Qh @ Kh.transpose(0, 2, 1) / {"d_k": np.sqrt(d_k), "d_model": np.sqrt(d), "none": 1.0,
                                      "one head": np.sqrt(d)}[scale]
    A = np.exp(S - S.max(axis, keepdims=True))
    A /= A.sum(axis, keepdims=True)
    Z = A @ Vh                                                   # (h, T, d_k)
    Z = Z.reshape(len(x), d) if split == "reshape" else Z.transpose(1, 0, 2).reshape(len(x), d)
    return Z @ (W_O.T if o_t else W_O) + b_O if w_o else Z


def _cross_mistakes(mha, x, memory) -> dict[str, np.ndarray]:
    def f(**kw):
        return _cross_numpy(mha, x, memory, **kw)

    return {
        "W_Q is used in PyTorch's (out, in) order: q_proj_weight holds W_Q^T. Transpose it (x @ "
        "q_proj_weight.T), as for the other projections.": f(q_t=False),
        "W_O is used in PyTorch's (out, in) order: out_proj.weight holds W_O^T. Transpose it.": f(o_t=False),
        "W_Q and W_O are used in PyTorch's (out, in) order: q_proj_weight and out_proj.weight hold the "
        "transposes. Transpose them.": f(q_t=False, o_t=False),
        "the scores are not scaled: divide each head's q k^T by sqrt(d_k) (lesson 06).": f(scale="none"),
        "the scores are divided by sqrt(d_model); each head's scores are divided by sqrt(d_k), the width of "
        "one head (d_model / num_heads).": f(scale="d_model"),
        "the heads were split with a plain reshape to (num_heads, T, d_k): that cuts the rows, not the "
        "columns. Head i is columns i d_k to (i + 1) d_k: reshape to (T, num_heads, d_k), then transpose to "
        "(num_heads, T, d_k) (and back before the concatenation).": f(split="reshape"),
        "this is one head over all d_model features; the layer has num_heads heads, each on its own d_k "
        "columns of Q, K and V, concatenated before W_O.": f(split="none", scale="one head"),
        "the biases are missing: in_proj_bias holds b_Q, b_K, b_V (d_model each), out_proj.bias b_O.":
            f(bias=False),
        "the softmax runs over the queries (axis -2); each query's weights over the memory's tokens must sum "
        "to 1: softmax over the last axis.": f(axis=-2),
        "W_O is missing: this is the concatenation of the heads; the layer ends with out_proj (W_O and b_O).":
            f(w_o=False),
    }


_FINISHED = {"multi_head_attention_forward": "the layer's functional form",
             "_native_multi_head_attention": "the layer's functional form",
             "scaled_dot_product_attention": "F.scaled_dot_product_attention",
             "linear": "F.linear (or a Linear module)"}


def _refuse(*args: Any, **kwargs: Any) -> None:
    raise ExerciseError("cross_attention_numpy called the PyTorch layer (or its functional form): the "
                        "exercise is to compute it yourself in NumPy from its parameters.")


class _NoFinishedPieces:
    """A context in which PyTorch's finished pieces (the layer's functional form,
    ``F.scaled_dot_product_attention``, ``F.linear``) raise an ExerciseError that names the one called."""

    def __enter__(self) -> _NoFinishedPieces:
        from torch.overrides import TorchFunctionMode

        class Mode(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
                name = getattr(func, "__name__", "")
                if name in _FINISHED:
                    if name in ("multi_head_attention_forward", "_native_multi_head_attention"):
                        _refuse()
                    raise ExerciseError(
                        f"cross_attention_numpy calls {_FINISHED[name]}: that does for you what the exercise "
                        "asks you to write. Compute it yourself in NumPy from the parameters: x @ W^T + b for "
                        "each projection, the scaled scores, the softmax, the heads, W_O.")
                return func(*args, **(kwargs or {}))

        self._mode = Mode()
        self._mode.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._mode.__exit__(*exc)


def uses_finished_pieces(fn: Callable[..., Any], *args: Any) -> str | None:
    """The ExerciseError message if ``fn(*args)`` calls PyTorch's finished attention pieces, else None."""
    try:
        with _NoFinishedPieces():
            fn(*args)
    except ExerciseError as exc:
        return str(exc)
    except Exception:  # another failure is judged elsewhere
        return None
    return None


def check_cross_attention_numpy(cross_attention_numpy: Callable[..., Any]) -> None:
    """Exercise 2: ``cross_attention_numpy(mha, x, memory)`` -> what ``mha(x, memory, memory)`` returns (one
    sequence, no batch axis), computed in NumPy from the parameters of a ``torch.nn.MultiheadAttention`` with
    ``kdim = vdim`` other than ``embed_dim``."""
    if cross_attention_numpy is None or cross_attention_numpy is Ellipsis or not callable(cross_attention_numpy):
        raise ExerciseError("cross_attention_numpy is not a function yet: write it in the answer cell above.")
    # the second layer has other widths and 4 heads (as the hidden test's): an answer that reads them from the
    # example instead of from mha passes the first and is named on the second
    for case, (mha, x, memory) in enumerate([_cross_layer(), _cross_layer(seed=5, d_model=8, num_heads=4, kdim=3)]):
        right = _cross_numpy(mha, x, memory)
        shapes = (f"x {tuple(x.shape)} (d_model = {mha.embed_dim}), memory {tuple(memory.shape)} "
                  f"(kdim = {mha.kdim}), {mha.num_heads} heads")
        mha.forward = _refuse  # the shortcut: let PyTorch do it
        try:
            with _NoFinishedPieces():
                got = cross_attention_numpy(mha, x.copy(), memory.copy())
        except ExerciseError:
            raise
        except NotImplementedError:
            raise ExerciseError("cross_attention_numpy still raises NotImplementedError: replace that line.") \
                from None
        except Exception as exc:
            if isinstance(exc, (AttributeError, TypeError)) and "NoneType" in str(exc):
                raise ExerciseError("cross_attention_numpy used a parameter that is None here, most likely "
                                    "in_proj_weight: with kdim set, the layer has no in_proj_weight (it is None) "
                                    "and keeps W_Q, W_K, W_V apart in q_proj_weight, k_proj_weight and "
                                    "v_proj_weight, each in (out, in) layout; in_proj_bias still holds b_Q, b_K, "
                                    "b_V.") from None
            if case:
                raise ExerciseError(f"cross_attention_numpy works on the layer above but raised "
                                    f"{type(exc).__name__} on another one ({shapes}): read the number of heads "
                                    f"and the widths from mha (mha.num_heads, mha.embed_dim), not from the "
                                    f"example.") from None
            raise ExerciseError(f"cross_attention_numpy raised {type(exc).__name__}: {exc}. Inputs: {shapes}; "
                                f"q_proj_weight {tuple(mha.q_proj_weight.shape)}, k_proj_weight "
                                f"{tuple(mha.k_proj_weight.shape)} (out, in).") from None
        if got is None or got is Ellipsis:
            raise ExerciseError("cross_attention_numpy returns nothing yet: return the output, (T, d_model).")
        if case and not (np.shape(got) == right.shape and np.allclose(got, right, atol=1e-6)):
            raise ExerciseError(f"cross_attention_numpy is right on the layer above but not on another one "
                                f"({shapes}): read the number of heads and the widths from mha (mha.num_heads, "
                                f"mha.embed_dim), not from the example's 2 heads.")
        check_array(got, right, "the output of cross_attention_numpy(mha, x, memory)",
                    mistakes=_cross_mistakes(mha, x, memory), atol=1e-6)
    passed("queries from x, keys and values from memory (W^T from PyTorch's (out, in) layout, plus biases), "
           "each head on its d_k columns, scaled by 1/sqrt(d_k), softmax over the memory, concatenated, W_O: "
           "what mha(x, memory, memory) computes.")


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
        "d_k is taken as kdim / num_heads here; d_k is d_model / num_heads, the queries' width per head, "
        "whatever kdim: a key must meet a query of the same width. kdim only sets W_K's and W_V's inputs.":
            lambda d, h, g, k, b: c(d, h, g, k, b, kvw=lambda d, h, g, kdim: g * (kdim // h)),
        "each key/value head is counted d_model wide here; a head is d_k = d_model / num_heads wide, so "
        "W_K and W_V have num_kv_heads * d_k outputs, not num_kv_heads * d_model.":
            lambda d, h, g, k, b: c(d, h, g, k, b, kvw=lambda d, h, g, kdim: g * d),
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


def _head_weights(X: np.ndarray, W_Q: np.ndarray, W_K: np.ndarray) -> np.ndarray:
    """(n, 5): the query token's weights over the sequence, scores divided by sqrt(d_k)."""
    q = X[:, -1] @ W_Q
    scores = np.einsum("nd,ntd->nt", q, X @ W_K) / np.sqrt(W_Q.shape[1])
    scores = scores - scores.max(-1, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(-1, keepdims=True)


def _design_matrix(value: Any, name: str) -> np.ndarray:
    if value is None or value is Ellipsis:
        raise ExerciseError(f"{name} is still empty: give a NumPy array of shape (17, d_k).")
    try:
        W = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ExerciseError(f"{name} should be an array of numbers, shape (17, d_k); got {value!r:.60}") from None
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
    two_largest = np.argsort(-digits, axis=1, kind="stable")[:, :2]
    return {"weights": weights, "role": role, "top_role": top_role, "answers": answers, "y": y,
            "both_right": float(np.mean(np.all(answers == y, axis=1))),
            "one_head_on": [float(np.mean(one[role == r])) for r in (0, 1)],
            "one_head_both_right": float(np.mean(np.all(two_largest == y, axis=1))), "mats": mats}


def check_two_head_design(W_Q1: Any, W_K1: Any, W_Q2: Any, W_K2: Any) -> None:
    """Exercise 2: (17, d_k) arrays W_Q1, W_K1 (head 1: the next letter's item) and W_Q2, W_K2 (head 2: the
    previous letter's); each head's W_V copies the 8 digit features, answer k is the largest digit in head k's
    output; right when both answers are right on all 500 held-out sequences."""
    r = design_results(W_Q1, W_K1, W_Q2, W_K2)
    n = len(r["y"])
    if r["both_right"] == 1.0:
        on = [float(np.mean(w[r["role"] == k])) for k, w in enumerate(r["weights"])]
        a, b = r["one_head_on"]
        passed(f"both answers right on all {n} held-out sequences; head 1 gives the next letter's item {on[0]:.2f} "
               f"of its weight on average, head 2 the previous letter's {on[1]:.2f}. Control: the same two "
               f"lookups in ONE head ([W_Q1 | W_Q2], [W_K1 | W_K2], one softmax) give the two items {a:.2f} and "
               f"{b:.2f} of one blend; reading its two largest digits as (next, previous) gets both right on "
               f"{r['one_head_both_right']:.3f} (about 0.5 at best when the two weights are equal: an even blend does "
               f"not say which digit sits under which letter).")
        return
    dominant = [_ROLES[int(np.bincount(t, minlength=5).argmax())] for t in r["top_role"]]
    share = [float(np.mean(t == k)) for k, t in enumerate(r["top_role"])]
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
    k = 0 if share[0] < 1 else 1
    target = ("next", "previous")[k]
    raise ExerciseError(f"head {k + 1} puts its largest weight on {_ROLE_TEXT[target]} in only {share[k]:.3f} of "
                        f"the {n} sequences, most often on {_ROLE_TEXT[dominant[k]]}; both answers are right on "
                        f"{r['both_right']:.3f}. Make q . k largest where the key's letter is "
                        f"{'s + 1' if k == 0 else 's - 1'}.")


# ------------------------------------------------------------------ exercise 3: predict a grouped-query layer
GQA = {"d_model": 4096, "num_heads": 32, "num_kv_heads": 8}   # Llama 3-8B's attention layers, no biases


def _gqa_right() -> tuple[tuple[int, int], int]:
    d, h, g = GQA["d_model"], GQA["num_heads"], GQA["num_kv_heads"]
    kv = g * (d // h)
    return (d, kv), 2 * d * d + 2 * d * kv


def _gqa_shape_mistakes() -> dict[tuple[int, int], str]:
    d, h, g = GQA["d_model"], GQA["num_heads"], GQA["num_kv_heads"]
    d_k = d // h
    return {
        (d, d): f"that is W_K with all {h} heads; with grouped-query heads it has only g = {g} key heads of d_k = "
                f"{d_k}, side by side: {g} x {d_k} columns.",
        (g * d_k, d): f"it is transposed: W_K is stored so that X @ W_K projects, so its rows are the {d} input "
                      f"features and its columns the {g} key heads of d_k = {d_k}.",
        (d, g * d): f"each key head is counted d_model wide; a head is d_k = d_model / num_heads = {d_k} wide.",
        (d, d_k): f"that is one key head; W_K holds all g = {g} key heads side by side.",
        (d, d // g): f"that is d_model / g columns; W_K holds g = {g} key heads of d_k = d_model / num_heads = "
                     f"{d_k} (a key meets a query of the same width): g d_k columns.",
    }


def _gqa_count_mistakes() -> dict[int, str]:
    d, h, g = GQA["d_model"], GQA["num_heads"], GQA["num_kv_heads"]
    kv = g * (d // h)
    return {
        4 * d * d: "that is the plain layer, 4 d_model^2; here W_K and W_V have only g key/value heads of d_k.",
        2 * d * d + d * kv: "only one of W_K and W_V is counted; the layer has both, each d_model x g d_k.",
        d * d + 2 * d * kv: "one of the two d_model x d_model matrices (W_Q or W_O) is missing; both keep "
                            "their full size.",
        4 * d * kv: "W_Q and W_O are shrunk too; only keys and values are shared, W_Q and W_O keep d_model x "
                    "d_model.",
        2 * d * d + 2 * d * kv + 2 * d + 2 * kv: "biases are counted; this layer has none.",
    }


def check_gqa_prediction(shape_W_K: Any, gqa_params: Any) -> None:
    """Exercise 3: for GQA's layer (d_model 4096, 32 query heads, 8 key/value heads, no biases): the shape
    (rows, columns) of W_K as the course stores it (X @ W_K), and the parameters of W_Q, W_K, W_V, W_O."""
    right_shape, right_count = _gqa_right()
    if shape_W_K is None or shape_W_K is Ellipsis:
        raise ExerciseError("shape_W_K is still empty: give (rows, columns) of W_K.")
    try:
        shape = tuple(int(v) for v in shape_W_K)
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
    except (TypeError, ValueError):
        raise ExerciseError(f"gqa_params should be a whole number; got {gqa_params!r:.60}") from None
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
