"""Checks for lesson 06 (scaling by 1/sqrt(d_k)).

Each check builds its own inputs and reference answers, and knows the typical wrong answers of its
exercise, so that the message names the mistake. Torch is imported inside the checks that need it, so
that importing ``selfattention.checks`` stays fast for the lessons that use numpy only.
"""

from __future__ import annotations

import contextlib
import math
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ._engine import (
    ExerciseError,
    check_array,
    check_function,
    check_value,
    learners_functions,
    passed,
    reference_softmax,
    source,
    stand_ins,
    used_objects,
)

__all__ = [
    "autograd_blocked",
    "check_query_std",
    "check_score_gradient",
    "check_unscaled_layer",
    "check_unscaled_weights",
]


# ----------------------------------------------------------------------------------------------
# Exercise 1: the standard deviation of W_Q's starting weights that gives sa.SelfAttention(32, 64)'s scaled
# scores variance 1, for unit-variance inputs, W_K keeping PyTorch's start. nn.Linear draws W_K uniform in
# +-1/sqrt(d_in) (variance 1/(3 d_in)), so k[m] has variance 1/3; q[m] = sum_i x[i] W[i, m] has variance
# d_in std_q^2. Var(q.k / sqrt(d_k)) = var_q var_k = 1 gives std_q = sqrt(3 / d_in) = sqrt(3/32).

_D_IN, _D_K, _VAR_K = 32, 64, 1 / 3
_STD_Q = math.sqrt(1 / (_VAR_K * _D_IN))


def _query_std_hints() -> dict[str, float]:
    d_in, d_k, var_k = _D_IN, _D_K, _VAR_K
    return {
        "that is a variance, 3/32; std_q is its square root.": 1 / (var_k * d_in),
        "that gives q[m] variance 1, right if k[m] had variance 1 too. PyTorch's start is not variance 1: "
        "W_K is uniform, and a weight uniform between -b and b has variance b^2/3, not b^2 (section 2). Work "
        "out k[m]'s variance, then what q[m]'s must be.": math.sqrt(1 / d_in),
        "you left out the layer's divisor: it already removes the factor d_k from Var(q.k), so the d_k = 64 "
        "does not belong in std_q.": math.sqrt(1 / (var_k * d_in * d_k)),
        "dividing the scores by sqrt(d_k) divides their variance by d_k = 64, not by sqrt(d_k) = 8.":
            math.sqrt(1 / (var_k * d_in * math.sqrt(d_k))),
        "you left out a sum over the d_model = 32 inputs: q[m] adds 32 terms x[i] W[i, m], so its variance is "
        "32 std_q^2 (and k[m], which adds 32 terms too, has variance 1/3, not 1/96).": math.sqrt(1 / var_k),
        "q[m] adds one term per input entry, d_model = 32 of them, not d_k = 64.": math.sqrt(1 / (var_k * d_k)),
        "that is sqrt(9/32) = 3/sqrt(32): either the square root covers only the 32 (it belongs over the "
        "whole fraction), or you squared 1/3, which is already k[m]'s variance (section 2), or "
        "you gave the bound b of a uniform start (variance b^2/3); std_q is the standard deviation itself.":
            math.sqrt(3 / (var_k * d_in)),
        "that is the standard deviation of PyTorch's own start, uniform between -1/sqrt(32) and 1/sqrt(32) "
        "(variance 1/96): it gives q[m] variance 1/3, like k[m], so the scaled scores get variance 1/9 "
        "(section 2 measured a spread of about 1/3). W_Q must start larger.": math.sqrt(var_k / d_in),
        "that is 1 / std_q, the equation solved upside down: solve it for std_q^2, then take the root.":
            math.sqrt(d_in * var_k),
        "you divided Var(q[m]) by d_model = 32 where the sum over the 32 inputs multiplies it.": math.sqrt(d_in / var_k),
        "you took the square root twice: std_q is the root of its variance, taken once.":
            (1 / (var_k * d_in)) ** 0.25,
        "you left out the sum over the d_k = 64 products in q.k: its variance is 64 Var(q[m]) Var(k[m]), and "
        "the divisor's 1/64 cancels that 64, so the scaled scores need Var(q[m]) Var(k[m]) = 1, not 64.":
            math.sqrt(d_k / (var_k * d_in)),
    }


def _query_std_consequence(value: float) -> str:
    """What a wrong std_q gives, from the learner's own value: the variance of the scaled scores."""
    if value <= 0:
        return (f"std_q = {value:.4g}: a standard deviation is positive (its square is the variance); "
                f"take the positive root.")
    size = "too large" if _D_IN * value ** 2 * _VAR_K > 1 else "too small"
    return (f"std_q = {value:.4g} is {size}: the scaled scores would not get variance 1. Go through "
            f"section 2 again: how many terms q[m] adds, the variance k[m] has at PyTorch's start, and what "
            f"the divisor sqrt(d_k) removes.")


def _query_std_slip(value: float) -> str | None:
    """A slip read off the learner's own value: a square root over part of 3/32, or 3 divided by another
    whole number than d_model = 32."""
    if math.isclose(value, math.sqrt(3) / 32, rel_tol=1e-6):
        return (f"std_q = {value:.4g} is sqrt(3)/32: the square root covers only the 3; it belongs over "
                f"the whole fraction.")
    if value <= 0:
        return None
    n = 3 / value ** 2
    if abs(n - round(n)) < 1e-6 * n and 2 <= round(n) <= 4096 and round(n) % 3 and round(n) != 32:
        n = round(n)
        return (f"std_q = {value:.4g} is sqrt(3/{n}). The 3 is right (q[m] needs variance 3, as k[m] has "
                f"1/3), but {n} is not the number of terms q[m] adds: one per input entry.")
    return None


def _number(got: Any) -> float | None:
    try:
        return float(np.asarray(got).item()) if hasattr(got, "__array__") else float(got)
    except (TypeError, ValueError):
        return None


def _measured_score_std(std_q: float) -> list[float]:
    """The standard deviation of sa.SelfAttention(32, 64)'s scaled scores q_i.k_j / 8 (i != j) with W_Q drawn
    from a normal of standard deviation std_q, for 8 layers (seeds 0 to 7), each on 64 sequences of 16
    unit-variance tokens."""
    import torch

    from ..layers import SelfAttention

    spreads = []
    for seed in range(8):
        gen = torch.Generator().manual_seed(100 + seed)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            layer = SelfAttention(_D_IN, _D_K)
            with torch.no_grad():
                layer.W_query.weight.normal_(0.0, std_q)
        x = torch.randn(64, 16, _D_IN, generator=gen)
        with torch.no_grad():
            omega = (layer.W_query(x) @ layer.W_key(x).transpose(1, 2)) / math.sqrt(_D_K)
        spreads.append(float(omega[:, ~torch.eye(16, dtype=torch.bool)].std()))
    return spreads


def check_query_std(std_q: Any) -> None:
    """Exercise 1: unit-variance inputs, d_in = 32, d_k = 64, W_K at PyTorch's start: std_q = sqrt(3/32)."""
    try:
        check_value(std_q, _STD_Q, "std_q", hints=_query_std_hints(), rtol=1e-6, atol=1e-9)
    except ExerciseError:
        value = _number(std_q)
        if value is not None and abs(value / _STD_Q - 1.0) < 0.05:
            raise ExerciseError(
                f"std_q = {value:.4g} is within 5% of the right value but not equal to it. If you rounded, "
                f"write the exact value as an expression, such as math.sqrt(...); if you measured it, derive "
                f"it instead: a measured spread changes with the random draw."
            ) from None
        if value is not None and not any(math.isclose(value, w, rel_tol=1e-6, abs_tol=1e-9)
                                         for w in _query_std_hints().values()):
            raise ExerciseError(_query_std_slip(value) or _query_std_consequence(value)) from None
        raise
    spreads = _measured_score_std(_STD_Q)
    passed(f"std_q = sqrt(3/32) = {_STD_Q:.4f}: q[m] gets variance 32 * 3/32 = 3, k[m] has 1/3, and the "
           f"divisor sqrt(d_k) removes the d_k. Measured on 8 layers with W_Q drawn at this standard deviation: "
           f"the scaled scores spread by {np.mean(spreads):.2f} on average ({min(spreads):.2f} to "
           f"{max(spreads):.2f}).")


# ----------------------------------------------------------------------------------------------
# Exercise 2: dL/domega from the weights alpha and g = dL/dalpha: dL/domega_l = alpha_l (g_l - alpha . g)


def _score_gradient(alpha: np.ndarray, g: np.ndarray) -> np.ndarray:
    return alpha * (g - alpha @ g)


def _gradient_cases() -> list[tuple[np.ndarray, np.ndarray]]:
    return [
        (reference_softmax(np.array([1.0, -0.5, 2.0, 0.0, 0.3])), np.array([0.5, -1.0, 2.0, 0.3, -0.2])),
        (np.array([0.5, 0.3, 0.2]), np.array([1.0, 2.0, 4.0])),
    ]


#: Saturated weights (scores 40, 0, -3, 5): every entry of the answer is below 1e-14.
_SATURATED = (reference_softmax(np.array([40.0, 0.0, -3.0, 5.0])), np.array([2.0, -1.0, 3.0, 0.5]))


def _gradient_mistakes(case: tuple[np.ndarray, np.ndarray]) -> dict[str, np.ndarray]:
    alpha, g = case
    return {
        "only the j = l term of the sum is there, alpha_l (1 - alpha_l) g_l. The derivative of weight j by "
        "score l is alpha_j (delta_jl - alpha_l): every other j adds -g_j alpha_j alpha_l, so what is "
        "subtracted from g_l sums over every j.": alpha * (1 - alpha) * g,
        "that is the delta_jl part alone, alpha_l g_l; the -alpha_l part of every term j is missing.":
            alpha * g,
        "the factor alpha_l in front is missing: every term of the sum over j carries it.": g - alpha @ g,
        "alpha_l multiplies g_l but not the sum you subtract: every term of the sum over j carries alpha_l.":
            alpha * g - alpha @ g,
        "you subtracted the plain mean of g; in the chain rule's sum each g_j comes with its own factor.":
            alpha * (g - g.mean()),
        "you subtracted the plain sum of g; in the chain rule's sum each g_j comes with its own factor.":
            alpha * (g - g.sum()),
        "that is g unchanged: the loss depends on the scores through the softmax, whose derivatives the "
        "sum over j brings in.": g.copy(),
        "the sum alpha . g is missing: you subtract alpha_l itself; add up the -alpha_l parts of all the "
        "terms j, each with its own g_j.":
            alpha * (g - alpha),
        "g is missing: alpha_l (1 - alpha_l) is the derivative of weight l by its own score, d alpha_l / "
        "d omega_l. The chain rule multiplies each derivative by dL/dalpha_j = g_j and sums over j.":
            alpha * (1 - alpha),
        "alpha @ alpha is one number, the dot product of the weights with themselves, not the (T, T) matrix "
        "alpha_j alpha_l: that is np.outer(alpha, alpha). Or simplify, so that no matrix is needed.":
            alpha * g - (alpha @ alpha) * g.sum(),
        "g_l multiplies the whole bracket and alpha . alpha is subtracted: the chain rule pairs each g_j "
        "with its own term j of the sum, not with term l.": g * (alpha - alpha @ alpha),
        "you subtracted alpha_l^2 times sum_j g_j: the -alpha_l part of term j is -g_j alpha_j "
        "alpha_l, so each g_j keeps its own alpha_j.":
            alpha * g - alpha ** 2 * g.sum(),
        "the delta_jl part is missing: you kept only the -alpha_l parts; the j = l term has delta_ll = 1.":
            -alpha * (alpha @ g),
        "you summed the bracket over l: the result is alpha times one number. The chain rule sums over j "
        "only; the result keeps one entry per score l.":
            alpha * (g - alpha @ g).sum(),
        "the -alpha_j alpha_l part enters with a plus: you add alpha_l (alpha . g) where the derivative "
        "alpha_j (delta_jl - alpha_l) subtracts it.": alpha * (g + alpha @ g),
        "every entry is 0 (up to rounding), which is what summing the derivatives alpha_j (delta_jl - alpha_l) "
        "over j gives before g multiplies them: alpha_l - alpha_l (sum of the weights) = 0. The chain rule "
        "multiplies each term by its own g_j first, then sums over j (a matrix-vector product).":
            np.zeros_like(alpha),
        "g_l is replaced by 1: the bracket is (1 - alpha . g), but the j = l term of the sum carries its "
        "own g_l.": alpha * (1 - alpha @ g),
        "alpha . g is divided by T: the sum over j of alpha_j g_j is already weighted (the weights sum to 1), "
        "so no further division is needed.": alpha * (g - (alpha @ g) / len(alpha)),
        "you applied softmax to alpha, but alpha holds the weights already (the softmax's output): use them "
        "as they are.": reference_softmax(alpha) * (g - reference_softmax(alpha) @ g),
        "np.diag(alpha) - alpha * alpha subtracts alpha_l^2 in every row, not alpha_j alpha_l: alpha * alpha "
        "squares each weight, and the (T, T) matrix alpha_j alpha_l is np.outer(alpha, alpha).":
            alpha * g - (alpha * alpha) @ g,
    }


def _close_everywhere(score_gradient: Callable[..., Any], cases: list[tuple[np.ndarray, np.ndarray]]) -> bool:
    try:
        return all(np.allclose(np.asarray(score_gradient(a.copy(), g.copy()), dtype=float),
                               _score_gradient(a, g), rtol=1e-4, atol=1e-6) for a, g in cases)
    except Exception:
        return False


def _returns_float32(score_gradient: Callable[..., Any]) -> bool:
    alpha, g = _gradient_cases()[0]
    try:
        got = score_gradient(alpha.copy(), g.copy())
        return str(getattr(got, "dtype", "")).endswith("float32")
    except Exception:
        return False


def _is_autograd(obj: Any) -> bool:
    """Whether ``obj`` is a piece of PyTorch's autograd: the modules torch.autograd and torch.func (functorch
    too), a function of theirs, Tensor.backward, or softmax's own backward operator."""
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    if any(obj is f for owner, attrs in _autograd_places() for f in (getattr(owner, a, None) for a in attrs)
           if f is not None):
        return True
    if isinstance(obj, type(sys)):                  # a module: torch.autograd, torch.func, ...
        home = obj.__name__
    else:
        home = getattr(obj, "__module__", None)
        home = home if isinstance(home, str) else ""
    return home.startswith(_AUTOGRAD_HOMES)


_AUTOGRAD_HOMES = ("torch.autograd", "torch.func", "torch._functorch", "functorch")


def _autograd_names(fn: Callable[..., Any]) -> bool:
    """Whether ``fn``'s code names a piece of PyTorch's autograd: a global or closure name (``torch.autograd``,
    ``from torch.func import grad``, ``torch.Tensor.backward``) that resolves to one. A local variable of the
    learner's (``jacobian``, ``vjp``, ``grad``) resolves to nothing and never counts; a method called on a local
    tensor (``out.backward()``) is caught at run time by :func:`autograd_blocked` instead."""
    import ast
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(source(fn)))
    except SyntaxError:
        return False
    scope = used_objects(fn)
    local = set(getattr(getattr(fn, "__code__", None), "co_varnames", ()))
    for node in ast.walk(tree):
        chain: list[str] = []
        while isinstance(node, ast.Attribute):
            chain.insert(0, node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id in local or node.id not in scope:
            continue
        obj = scope[node.id]
        for attr in [None, *chain]:
            if attr is not None:
                try:
                    obj = getattr(obj, attr)
                except Exception:
                    break
            if _is_autograd(obj):
                return True
    return False


def _uses_autograd(score_gradient: Callable[..., Any]) -> bool:
    """Whether the function, or a function of the learner's that it reaches, names a piece of autograd (by a
    name that resolves to it, never by a local variable's name)."""
    return any(_autograd_names(f) for f in learners_functions(score_gradient))


class AutogradCalled(AssertionError):
    """Raised by a stand-in of PyTorch's autograd (or of softmax's own backward) while it is blocked."""


def _autograd_places() -> list[tuple[Any, tuple[str, ...]]]:
    torch = sys.modules.get("torch")
    if torch is None:
        return []
    import torch.autograd.forward_ad
    import torch.autograd.functional
    import torch.func

    backward_ops = ("_softmax_backward_data", "_log_softmax_backward_data")
    return [(torch.Tensor, ("backward", "grad_fn")), (torch.autograd, ("grad", "backward")),
            (torch.autograd.forward_ad, ("dual_level", "make_dual", "unpack_dual", "enter_dual_level")),
            (torch.autograd.functional, ("jacobian", "hessian", "vjp", "jvp", "vhp", "hvp")),
            (torch.func, ("grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian")),
            (torch, backward_ops),
            (torch.ops.aten, backward_ops)]


@contextlib.contextmanager
def autograd_blocked() -> Iterator[None]:
    """While the block runs, PyTorch's ways to a derivative (Tensor.backward, a tensor's grad_fn, torch.autograd
    with its forward mode, torch.func, and softmax's own backward as torch.ops.aten._softmax_backward_data)
    raise AutogradCalled, however the
    learner's function reaches them (``getattr(out, "back" + "ward")`` included)."""
    with stand_ins(_autograd_places(), AutogradCalled):
        yield


_AUTOGRAD_MESSAGE = (
    "score_gradient calls PyTorch's autograd (backward, a tensor's grad_fn, torch.autograd, its forward mode "
    "torch.autograd.forward_ad, or torch.func) or softmax's own backward "
    "(torch.ops.aten._softmax_backward_data), which compute the derivative for you. The exercise "
    "asks you to derive it by hand from the chain rule and section 3's derivative, and write the result "
    "with array operations.")


def check_score_gradient(score_gradient: Callable[[np.ndarray, np.ndarray], Any]) -> None:
    """Exercise 2: ``score_gradient(alpha, g)`` returns dL/domega = alpha * (g - alpha @ g), shape (T,)."""
    if callable(score_gradient):
        if _uses_autograd(score_gradient):
            raise ExerciseError(_AUTOGRAD_MESSAGE)
        got = None
        for number, (alpha, g) in enumerate([*_gradient_cases(), _SATURATED]):
            try:
                with autograd_blocked():
                    result = score_gradient(alpha.copy(), g.copy())
            except AutogradCalled:
                raise ExerciseError(_AUTOGRAD_MESSAGE) from None
            except Exception:  # the engine below reports a crash in words
                result = None
            if number == 0:
                got = result
        T = len(_gradient_cases()[0][0])
        alpha0, g0 = _gradient_cases()[0]
        jacobian = np.diag(alpha0) - np.outer(alpha0, alpha0)
        if got is not None and np.shape(got) == (T, T) and any(
                np.allclose(np.asarray(got, dtype=float), m) for m in (jacobian * g0, jacobian * g0[:, None])):
            raise ExerciseError(
                "score_gradient returned the (T, T) derivatives alpha_j (delta_jl - alpha_l) times g "
                "entry by entry. The chain rule also sums over j, which leaves one number per score l: "
                "dL/domega has shape (T,) (a matrix-vector product)."
            )
        if got is not None and np.shape(got) == (T, T):
            raise ExerciseError(
                "score_gradient returned a (T, T) matrix, the derivatives of every weight by every score. "
                "The exercise asks for dL/domega, shape (T,): combine that matrix with g as the chain rule "
                "says (a sum over j)."
            )
    describe = lambda case: f"alpha = {np.round(case[0], 3).tolist()}, g = {case[1].tolist()}"  # noqa: E731
    flipped = {"the signs are flipped: the j = l term enters with +, the others with -.": -1.0}
    cases = [*_gradient_cases(), _SATURATED]
    try:  # exact to rounding: an estimate (finite differences, errors near 1e-10) does not pass
        check_function(score_gradient, _score_gradient, cases, "score_gradient", describe=describe,
                       mistakes=_gradient_mistakes, scale_hints=flipped, rtol=1e-9, atol=1e-13)
    except ExerciseError as wrong:
        if "differs from the right answer" in str(wrong) and _close_everywhere(score_gradient, cases):
            if _returns_float32(score_gradient):
                raise ExerciseError(
                    "score_gradient returns float32 numbers, exact to about 7 digits only; the inputs are "
                    "float64. Compute in float64 (leave out the conversion to float32)."
                ) from None
            raise ExerciseError(
                "score_gradient agrees with dL/domega to several digits but not to the last ones: it looks "
                "like a numerical estimate (finite differences). Derive the formula from the chain rule "
                "instead; it is exact."
            ) from None
        raise
    one_hot, g_one_hot = np.array([0.0, 1.0, 0.0, 0.0]), np.array([2.0, -1.0, 3.0, 0.5])
    got = np.asarray(score_gradient(one_hot.copy(), g_one_hot.copy()), dtype=float)
    if not np.allclose(got, 0.0, atol=1e-13):
        raise ExerciseError(
            f"for one-hot weights alpha = {one_hot.tolist()} and g = {g_one_hot.tolist()}, score_gradient "
            f"returns {np.round(got, 4).tolist()}; every dL/domega_l is 0 there (section 3). Make sure your "
            "formula, not a special case, computes it."
        )
    alpha, g = _SATURATED
    passed("dL/domega_l = alpha_l (g_l - alpha . g). For the saturated weights (scores 40, 0, -3, 5) and "
           f"g = [2, -1, 3, 0.5] its largest entry is {np.abs(_score_gradient(alpha, g)).max():.0e}: almost "
           "nothing reaches the scores, hence W_Q and W_K.")


# ----------------------------------------------------------------------------------------------
# Exercise 4 (before section 4's control): an unscaled layer (scale=1.0) with the weights that make it compute what the scaled one does


_D_IN_FOLD, _D_K_FOLD, _SEED_FOLD = 8, 16, 6


def _scaled_reference(own_start: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """W_Q, W_K, W_V (each (d_k, d_model), as nn.Linear stores them) of the lesson's ``scaled`` layer:
    ``torch.manual_seed(6); sa.SelfAttention(8, 16)``; with ``own_start``, those ``unscaled`` starts from,
    made next."""
    import torch

    from ..layers import SelfAttention

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(_SEED_FOLD)
        layer = SelfAttention(_D_IN_FOLD, _D_K_FOLD)
        if own_start:
            layer = SelfAttention(_D_IN_FOLD, _D_K_FOLD, scale=1.0)
    return tuple(w.weight.detach().double().numpy() for w in (layer.W_query, layer.W_key, layer.W_value))


_NAMES = ("W_Q", "W_K", "W_V")


def _wrong_source(mine: list[np.ndarray]) -> str | None:
    """Words for a matrix of unscaled that is a multiple of another of scaled's matrices (W_Q and W_K swapped,
    or one of them copied twice, or W_V copied from W_Q or W_K), or None."""
    ref = _scaled_reference()
    source = [next((j for j in range(3) if _multiple(mine[i], ref[j]) is not None), None) for i in range(3)]
    if source[0] == 1 and source[1] == 0:
        return ("W_Q and W_K are swapped: unscaled's W_Q holds scaled's W_K (times a factor) and its W_K "
                "scaled's W_Q. Then unscaled's score omega_ij is k_i . q_j, scaled's omega_ji: the score matrix comes out "
                "transposed (omega^T), so token i gets the weights that belong to token j. Copy W_query into "
                "W_query and W_key into W_key, the factor 1/4 on one of them.")
    for i, j in ((1, 0), (0, 1), (2, 0), (2, 1)):
        if source[i] == j:
            return (f"unscaled's {_NAMES[i]} is a multiple of scaled's {_NAMES[j]}, not of scaled's "
                    f"{_NAMES[i]}: each matrix comes from its namesake (W_query from W_query, W_key from W_key, "
                    f"W_value from W_value).")
    return None


def _one_matrix_not_scaleds(mine: list[np.ndarray], c_q: float | None, c_k: float | None) -> str | None:
    """Words for W_Q a multiple of scaled's with W_K not (or the other way round), or None."""
    own = _scaled_reference(own_start=True)
    for c, other, name, field in ((c_q, 1, "W_K", "W_key"), (c_k, 0, "W_Q", "W_query")):
        if c is not None and (c_q is None or c_k is None):
            if np.allclose(mine[other], own[other], rtol=1e-5, atol=1e-7):
                return (f"{name} is not scaled's: it is still unscaled's own starting {name}, drawn at random "
                        f"when unscaled was made. Copy scaled.{field}.weight into it as well (with the factor "
                        f"1/4 on one of the two matrices).")
            return (f"{name} is not scaled's, nor a multiple of it: the scores multiply W_Q and W_K, so both "
                    f"must start from scaled's weights, the factor 1/4 on one of them.")
    return None


def _forward(W_Q: np.ndarray, W_K: np.ndarray, W_V: np.ndarray, scale: float,
             x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    q, k, v = x @ W_Q.T, x @ W_K.T, x @ W_V.T
    alpha = reference_softmax(scale * q @ np.swapaxes(k, -1, -2))
    return alpha @ v, alpha


def _fold_inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(61)
    return [rng.standard_normal((3, 5, _D_IN_FOLD)), 4.0 * rng.standard_normal((2, 6, _D_IN_FOLD))]


def _multiple(got: np.ndarray, ref: np.ndarray) -> float | None:
    """c with got = c * ref, or None."""
    c = float(np.sum(got * ref) / np.sum(ref * ref))
    return c if np.allclose(got, c * ref, rtol=1e-5, atol=1e-9) else None


def _matrix(value: Any, name: str) -> np.ndarray:
    try:
        arr = np.asarray(value.detach().cpu().numpy() if hasattr(value, "detach") else value, dtype=float)
    except (TypeError, ValueError):
        raise ExerciseError(f"{name} should be a matrix of numbers, but it is a {type(value).__name__}.") from None
    if arr.shape != (_D_K_FOLD, _D_IN_FOLD):
        raise ExerciseError(f"{name} has shape {arr.shape}; the layer's weight has shape "
                            f"({_D_K_FOLD}, {_D_IN_FOLD}), as in sa.SelfAttention({_D_IN_FOLD}, {_D_K_FOLD}).")
    if not np.isfinite(arr).all():
        raise ExerciseError(f"{name} contains NaN or infinite values.")
    return arr


def _factor_problem(c_q: float, c_k: float, c_v: float | None = None) -> str | None:
    """Words for W_Q = c_q * scaled's and W_K = c_k * scaled's (W_V = c_v * scaled's, None when not a multiple)
    whose scores are not 1/4 of scaled's q.k."""
    p, d_k, d_in = c_q * c_k, _D_K_FOLD, _D_IN_FOLD
    if np.isclose(p, 1 / math.sqrt(d_k), rtol=1e-4):
        return None
    if np.isclose(c_q, 1 / math.sqrt(d_k), rtol=1e-4) and np.isclose(c_k, 1 / math.sqrt(d_k), rtol=1e-4):
        return ("you divided both W_Q and W_K by 4: each score is a product of a query and a key, so it is "
                "divided by 4 * 4 = 16. Divide one of them by 4 (or each by 2).")
    if np.isclose(p, 1 / d_k, rtol=1e-4):
        return (f"the scores come out divided by d_k = {d_k}. scaled divides them by sqrt(d_k) = 4, so the "
                "factors on W_Q and W_K must multiply to 1/4.")
    if np.isclose(p, 1.0, rtol=1e-4) and c_v is not None and not np.isclose(c_v, 1.0, rtol=1e-4):
        return (f"you changed W_V (by the factor {c_v:.4g}) and kept W_Q and W_K as scaled's, but W_V does not "
                "touch the scores: without the divisor they are 4 times scaled's. Put the factor 1/4 = 1/sqrt(d_k) "
                "into W_Q or W_K and copy W_V unchanged.")
    if np.isclose(p, 1.0, rtol=1e-4):
        return ("these are scaled's weights unchanged: without the divisor the scores are 4 times scaled's. "
                "Put the factor 1/4 = 1/sqrt(d_k) into W_Q or W_K.")
    if np.isclose(p, math.sqrt(d_k), rtol=1e-4):
        return "you multiplied by 4 = sqrt(d_k); the scores must be divided by it."
    if np.isclose(p, 1 / math.sqrt(d_in), rtol=1e-4):
        return (f"you divided by sqrt(d_model) = sqrt({d_in}); the divisor is sqrt(d_k) = 4, d_k = {d_k} being "
                "the length of each query and key.")
    return (f"W_Q is {c_q:.4g} times scaled's and W_K {c_k:.4g} times, so the scores are {p:.4g} times "
            "scaled's q.k; they must be 1/4 of it (scaled divides by sqrt(16) = 4).")


def check_unscaled_weights(W_Q: Any, W_K: Any, W_V: Any, scale: Any) -> None:
    """Exercise 4 (and the grader's judge): a layer with these weights (nn.Linear's (d_k, d_in) layout) and
    ``scale`` computes the same weights and outputs as ``torch.manual_seed(6); sa.SelfAttention(8, 16)``."""
    if scale is None:
        raise ExerciseError("unscaled still divides its scores by sqrt(d_k) (scale=None). The exercise asks for "
                            "a layer without the divisor: sa.SelfAttention(8, 16, scale=1.0).")
    value = _number(scale)
    if value is None or not np.isclose(value, 1.0):
        raise ExerciseError(f"unscaled has scale = {scale!r}; the exercise asks for no divisor, scale=1.0, with "
                            f"the factor put into the weights instead.")
    mine = [_matrix(w, name) for w, name in ((W_Q, "W_Q"), (W_K, "W_K"), (W_V, "W_V"))]
    ref = _scaled_reference()
    c_q, c_k, c_v = (_multiple(m, r) for m, r in zip(mine, ref, strict=True))
    if c_q is not None and c_k is not None and (problem := _factor_problem(c_q, c_k, c_v)):
        raise ExerciseError(f"unscaled's weights are not right yet: {problem}")
    for x in _fold_inputs():
        want_z, want_alpha = _forward(*ref, 1 / math.sqrt(_D_K_FOLD), x)
        got_z, got_alpha = _forward(*mine, 1.0, x)
        if not np.allclose(got_alpha, want_alpha, rtol=1e-4, atol=1e-5):  # float32 weights
            if problem := _wrong_source(mine) or _one_matrix_not_scaleds(mine, c_q, c_k):
                raise ExerciseError(f"unscaled's attention weights differ from scaled's: {problem}")
            raise ExerciseError(
                "unscaled's attention weights differ from scaled's. Start from scaled's weights (copy them "
                "with .copy_(...) inside torch.no_grad()), then put the factor 1/4 = 1/sqrt(d_k) into W_Q "
                "or W_K."
            )
        if not np.allclose(got_z, want_z, rtol=1e-4, atol=1e-5):
            if problem := _wrong_source(mine):
                raise ExerciseError(f"the attention weights are right, but the outputs differ: {problem}")
            if c_v is not None and not np.isclose(c_v, 1.0):
                raise ExerciseError(
                    f"the attention weights are right, but W_V is {c_v:.4g} times scaled's: the values do not "
                    "enter the scores, so the divisor has nothing to do with them. Copy W_V unchanged."
                )
            raise ExerciseError("the attention weights are right, but the outputs differ: copy W_V from scaled "
                                "unchanged.")
        check_array(got_z, want_z, "unscaled's outputs", rtol=1e-4, atol=1e-5)


def check_unscaled_layer(unscaled: Any) -> None:
    """Exercise 4: ``unscaled`` (an ``sa.SelfAttention(8, 16, scale=1.0)``) computes what ``scaled`` does."""
    if unscaled is None or unscaled is Ellipsis:
        raise ExerciseError("unscaled has no value yet: keep the line that creates it and set its weights.")
    parts = [getattr(unscaled, name, None) for name in ("W_query", "W_key", "W_value")]
    if any(getattr(p, "weight", None) is None for p in parts):
        raise ExerciseError(f"unscaled should be an sa.SelfAttention layer, but it is a {type(unscaled).__name__}.")
    if any(getattr(p, "bias", None) is not None for p in parts):
        raise ExerciseError("unscaled has bias terms and scaled has none: create it as "
                            "sa.SelfAttention(8, 16, scale=1.0).")
    check_unscaled_weights(*(p.weight for p in parts), getattr(unscaled, "scale", None))
    passed("unscaled computes the same weights and outputs as scaled: dividing every score by 4 is the same "
           "as dividing W_Q (or W_K) by 4, or each by 2. In a forward pass the divisor is only a change of "
           "weights. In training it is not: " + _step_sizes(parts[0].weight, parts[1].weight))


def _gram_factor(got: np.ndarray, ref: np.ndarray) -> float | None:
    """s >= 0 with got^T got = s^2 ref^T ref (got = s R ref for R orthogonal on ref's columns), or None."""
    g, r = got.T @ got, ref.T @ ref
    s2 = float(np.trace(g) / np.trace(r))
    return math.sqrt(s2) if np.allclose(g, s2 * r, rtol=1e-4, atol=1e-7 * np.abs(r).max()) else None


def _times(r: float) -> str:
    return "as much as scaled's" if np.isclose(r, 1.0, rtol=1e-3) else f"{r:.3g} times as much as scaled's"


def _step_sizes(W_Q: Any, W_K: Any) -> str:
    """How much a step of one size on each matrix changes unscaled's scores, relative to scaled's.

    A score is x W_Q^T W_K x'^T / c: a step on W_Q moves it in proportion to W_K / c, and one on W_K in
    proportion to W_Q / c. With W_Q = s_q R scaled's and W_K = s_k R' scaled's (R, R' rotations or sign
    flips, s >= 0) and c going from 4 to 1, the ratios are 4 s_k (steps on W_Q) and 4 s_q (steps on W_K).
    """
    ref = _scaled_reference()
    mine = _matrix(W_Q, "W_Q"), _matrix(W_K, "W_K")
    s_q, s_k = _gram_factor(mine[0], ref[0]), _gram_factor(mine[1], ref[1])
    if s_q is None or s_k is None:
        return ("a step of the same size on W_Q or W_K changes unscaled's scores by different factors in "
                "different directions, compared with scaled's, since your W_Q and W_K stretch scaled's "
                "unevenly.")
    factors = [_multiple(m, r) for m, r in zip(mine, ref[:2], strict=True)]
    turned = "" if all(f is not None and f > 0 for f in factors) else (
        " (compared with the matching step on scaled's, turned or flipped as your weights are)")
    return (f"a step of the same size on W_Q changes unscaled's scores {_times(4 * s_k)}, and one on W_K "
            f"{_times(4 * s_q)}{turned}.")
