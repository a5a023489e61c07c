"""Lesson 06's checks name each typical mistake, and only that one, when a learner makes it.

Every answer below is a wrong answer as a learner would write it; the check's message must name that mistake
(a phrase of its explanation) and no other named mistake. Two different right answers must get ``Correct:``,
and a shortcut that skips what the exercise teaches must not.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from mistakes import hidden_test_passes as _hidden_test_passes
from mistakes import message as _message
from mistakes import names_only as _names_only
from mistakes import right_answer_passes as _right_answer_passes

import selfattention as sa
from selfattention.checks import (
    ExerciseError,
    check_query_std,
    check_score_gradient,
    check_unscaled_layer,
    check_unscaled_weights,
)

# ---------------------------------------------------------------- exercise 1: W_Q's starting std
# Unit-variance inputs, d_in = 32, d_k = 64, W_K at PyTorch's start (Var(k[m]) = 1/3):
# Var(q.k / sqrt(d_k)) = 32 std_q^2 * 1/3 = 1, so std_q = sqrt(3/32).
STD = {
    "variance": "that is a variance",
    "W_K forgotten": "right if k[m] had variance 1 too",
    "divisor left out": "you left out the layer's divisor",
    "divisor not squared": "divides their variance by d_k = 64, not by sqrt(d_k)",
    "no sum over d_in": "you left out a sum over the d_model = 32 inputs",
    "d_k for d_in": "not d_k = 64",
    "1/3 squared or bound": "that is sqrt(9/32) = 3/sqrt(32)",
    "root over the 3 only": "is sqrt(3)/32: the square root covers only the 3",
    "3 over another number": "The 3 is right",
    "rounded or measured": "within 5% of the right value",
    "PyTorch's start reused": "the standard deviation of PyTorch's own start",
    "inverted": "the equation solved upside down",
    "d_in divides": "you divided Var(q[m]) by d_model = 32",
    "square root twice": "you took the square root twice",
    "sum over d_k left out": "you left out the sum over the d_k = 64 products",
    "other value": "the scaled scores would not get variance 1",
    "not positive": "a standard deviation is positive",
}
STD_WRONG = {
    "variance": 3 / 32,                                        # std and variance mixed up
    "W_K forgotten": 1 / math.sqrt(32),                        # q[m] of variance 1, as if k[m] had 1 too
    "divisor left out": math.sqrt(3 / (32 * 64)),              # Var(q.k) = 1 instead of the scaled scores'
    "divisor not squared": math.sqrt(3 / (32 * 8)),            # variance divided by sqrt(d_k)
    "no sum over d_in": math.sqrt(3),                          # Var(q[m]) = std_q^2
    "d_k for d_in": math.sqrt(3 / 64),                         # q[m] summed over d_k terms
    "1/3 squared or bound": math.sqrt(9 / 32),                 # Var(k[m]) = 1/9, or the uniform bound
    "root over the 3 only": math.sqrt(3) / 32,                 # a misplaced square root
    "3 over another number": math.sqrt(3 / 16),                # 3 divided by 16, not d_model = 32
    "rounded or measured": 0.306,
    "PyTorch's start reused": 1 / math.sqrt(96),               # W_K's own std, reused for W_Q
    "inverted": math.sqrt(32 / 3),                             # 1 / std_q
    "d_in divides": math.sqrt(3 * 32),                         # Var(q[m]) = std_q^2 / 32
    "square root twice": (3 / 32) ** 0.25,                     # sqrt(sqrt(3/32))
    "sum over d_k left out": math.sqrt(3 * 64 / 32),           # Var(q.k) = Var(q[m]) Var(k[m]) / 64
    "other value": 0.5,                                        # no known slip: the message works from it
    "not positive": -math.sqrt(3 / 32),
}


@pytest.mark.parametrize("key", sorted(STD_WRONG))
def test_query_std_mistake_is_named(key):
    _names_only(_message(check_query_std, STD_WRONG[key]), key, STD)


def test_an_unknown_value_is_answered_from_the_learners_own_number():
    """0.5 gives the scaled scores variance 8/3: too large, said without the variance or the equation."""
    msg = _message(check_query_std, 0.5)
    assert "0.5 is too large" in msg and "32 std_q^2" not in msg and "2.667" not in msg, msg
    msg = _message(check_query_std, 0.1)
    assert "0.1 is too small" in msg and "0.1067" not in msg, msg


@pytest.mark.parametrize("key", ["PyTorch's start reused", "inverted", "square root twice"])
def test_inverted_slips_fail_the_hidden_test_too(key):
    assert not _hidden_test_passes("06_scaling", "l06-init-scale-test", std_q=STD_WRONG[key])


def test_a_uniform_bound_for_w_k_is_named_as_w_k_forgotten():
    """Taking W_K's variance as b^2 = 1/d_in (not b^2/3) gives k[m] variance 1: the same 1/sqrt(32)."""
    var_k = 32 * (1 / 32)
    msg = _message(check_query_std, math.sqrt(1 / (var_k * 32)))
    assert "right if k[m] had variance 1" in msg and "not b^2" in msg, msg


def _measured_std() -> float:
    """The shortcut: scale W_Q's draw until the measured spread of the scaled scores is 1."""
    torch.manual_seed(1)
    layer = sa.SelfAttention(32, 64)
    x = torch.randn(64, 16, 32)
    with torch.no_grad():
        layer.W_query.weight.normal_(0, 1.0)
        spread = float((layer.W_query(x) @ layer.W_key(x).transpose(1, 2)).std()) / 8
    return 1.0 / spread


def test_a_measured_std_is_not_accepted():
    value = _measured_std()
    assert abs(value / math.sqrt(3 / 32) - 1) < 0.05, value  # close, as a measurement is
    _names_only(_message(check_query_std, value), "rounded or measured", STD)
    assert not _hidden_test_passes("06_scaling", "l06-init-scale-test", std_q=value)


@pytest.mark.parametrize("answer", [math.sqrt(3 / 32), math.sqrt(1 / (32 * (1 / 3))),
                                    np.float32(math.sqrt(3 / 32))])
def test_query_std_right_answers_pass(answer, capsys):
    _right_answer_passes(check_query_std, answer, capsys)


@pytest.mark.parametrize("key", ["variance", "W_K forgotten", "divisor left out"])
def test_query_std_slips_fail_the_hidden_test_too(key):
    assert not _hidden_test_passes("06_scaling", "l06-init-scale-test", std_q=STD_WRONG[key])


@pytest.mark.parametrize("answer", [math.sqrt(1 / 32 / (1 / 3)), np.float32(math.sqrt(3 / 32)),
                                    torch.sqrt(torch.tensor(3 / 32))])
def test_a_right_std_passes_the_hidden_test(answer):
    """What the check calls right, the hidden test does too: float32, from NumPy or PyTorch, included."""
    assert _hidden_test_passes("06_scaling", "l06-init-scale-test", std_q=answer)


# ---------------------------------------------------------------- exercise 2: the gradient through softmax
GRADIENT = {
    "diagonal only": "only the j = l term of the sum",
    "delta part": "that is the delta_jl part alone",
    "no alpha_j": "the factor alpha_l in front is missing",
    "alpha_l on g_l only": "alpha_l multiplies g_l but not the sum you subtract",
    "mean": "the plain mean of g",
    "sum": "the plain sum of g",
    "identity": "that is g unchanged",
    "alpha . g left out": "the sum alpha . g is missing",
    "g left out": "g is missing: alpha_l (1 - alpha_l)",
    "dot for outer": "alpha @ alpha is one number",
    "squares for outer": "np.diag(alpha) - alpha * alpha subtracts",
    "g outside": "g_l multiplies the whole bracket and alpha . alpha is subtracted",
    "alpha_l squared": "you subtracted alpha_l^2 times sum_j g_j",
    "no delta part": "the delta_jl part is missing",
    "bracket summed": "you summed the bracket over l",
    "outer added": "the -alpha_j alpha_l part enters with a plus",
    "columns summed": "every entry is 0 (up to rounding)",
    "1 for g": "g_l is replaced by 1",
    "alpha . g over T": "alpha . g is divided by T",
    "softmax again": "you applied softmax to alpha",
    "matrix times g": "times g entry by entry",
    "sign": "the signs are flipped",
    "matrix": "returned a (T, T) matrix",
    "estimate": "it looks like a numerical estimate",
    "float32": "returns float32 numbers",
    "autograd": "calls PyTorch's autograd",
}
def _softmax(a):
    e = np.exp(a - a.max())
    return e / e.sum()


GRADIENT_WRONG = {
    "diagonal only": lambda a, g: a * (1 - a) * g,
    "delta part": lambda a, g: a * g,
    "no alpha_j": lambda a, g: g - a @ g,
    "alpha_l on g_l only": lambda a, g: a * g - a @ g,
    "mean": lambda a, g: a * (g - np.mean(g)),
    "sum": lambda a, g: a * (g - np.sum(g)),
    "identity": lambda a, g: g,
    "sign": lambda a, g: a * (a @ g - g),
    "matrix": lambda a, g: np.diag(a) - np.outer(a, a),
    "alpha . g left out": lambda a, g: a * (g - a),              # the product with J, alpha . g left out
    "g left out": lambda a, g: a * (1 - a),                      # d alpha_l / d omega_l, no chain rule
    "dot for outer": lambda a, g: (np.diag(a) - a @ a) @ g,      # a @ a is a number, not np.outer(a, a)
    "squares for outer": lambda a, g: (np.diag(a) - a * a) @ g,  # a * a squares, no outer product
    "g outside": lambda a, g: g * (a - a @ a),                   # g_l pulled out of the sum
    "alpha_l squared": lambda a, g: a * g - a ** 2 * g.sum(),    # alpha_l for alpha_j in the sum
    "no delta part": lambda a, g: -np.outer(a, a) @ g,           # the -alpha_l part alone
    "bracket summed": lambda a, g: a * (g - a @ g).sum(),        # a sum over l too many
    "outer added": lambda a, g: a * g + np.outer(a, a) @ g,      # the -alpha_j alpha_l term's sign
    "columns summed": lambda a, g: (np.diag(a) - np.outer(a, a)).sum(0) * g,   # sum over j before g
    "1 for g": lambda a, g: a * (1 - a @ g),                     # g_l dropped from the bracket
    "alpha . g over T": lambda a, g: a * (g - a @ g / len(a)),   # a mean of alpha_j g_j
    "softmax again": lambda a, g: _softmax(a) * (g - _softmax(a) @ g),   # alpha taken for scores
    "matrix times g": lambda a, g: (np.diag(a) - np.outer(a, a)) * g,     # no sum over j
}


@pytest.mark.parametrize("key", sorted(GRADIENT_WRONG))
def test_score_gradient_mistake_is_named(key):
    _names_only(_message(check_score_gradient, GRADIENT_WRONG[key]), key, GRADIENT)


@pytest.mark.parametrize("key", sorted(k for k in GRADIENT_WRONG if k not in ("matrix", "matrix times g")))
def test_score_gradient_slips_fail_the_hidden_test_too(key):
    wrong = GRADIENT_WRONG[key]
    assert not _hidden_test_passes("06_scaling", "l06-score-gradient-test", score_gradient=wrong)


def test_the_transposed_jacobian_is_right_and_passes(capsys):
    """d alpha_j / d omega_l = alpha_j (delta_jl - alpha_l) is symmetric in j and l: the transposed Jacobian
    is the Jacobian, so J @ g is no mistake."""
    transposed = lambda a, g: (np.diag(a) - np.outer(a, a)) @ g  # noqa: E731
    _right_answer_passes(check_score_gradient, transposed, capsys)
    assert _hidden_test_passes("06_scaling", "l06-score-gradient-test", score_gradient=transposed)


def test_a_special_case_wrong_for_one_hot_weights_is_named():
    """Right for every softmax output with no zero weight, wrong when the weights are one-hot."""
    def special(a, g):
        return a * (g - a @ g) if np.all(a > 0) else g
    assert "for one-hot weights" in _message(check_score_gradient, special)


def test_subtracting_alpha_j_g_j_is_named_as_the_diagonal_alone():
    """alpha * (g - alpha * g) is alpha_j (1 - alpha_j) g_j: the same mistake, written another way."""
    _names_only(_message(check_score_gradient, lambda a, g: a * (g - a * g)), "diagonal only", GRADIENT)


def _loop(a, g):
    """The chain rule's sum written out, term by term."""
    grad = np.zeros(len(a))
    for j in range(len(a)):
        for i in range(len(a)):
            grad[j] += g[i] * a[i] * ((i == j) - a[j])
    return grad


@pytest.mark.parametrize("answer", [lambda a, g: a * (g - a @ g),
                                    lambda a, g: (np.diag(a) - np.outer(a, a)).T @ g, _loop])
def test_score_gradient_right_answers_pass(answer, capsys):
    _right_answer_passes(check_score_gradient, answer, capsys)


def _finite_differences(a, g, h=1e-6):
    """The shortcut: no derivation, a numerical derivative of L = g . softmax(omega) at omega = ln(alpha)."""
    omega = np.log(a)

    def loss(w):
        e = np.exp(w - w.max())
        return g @ (e / e.sum())

    return np.array([(loss(omega + h * e) - loss(omega - h * e)) / (2 * h) for e in np.eye(len(a))])


def _autograd(a, g):
    """The shortcut: rebuild scores from the weights (omega = ln alpha) and let autograd differentiate."""
    omega = torch.tensor(np.log(a), requires_grad=True)
    (torch.softmax(omega, dim=-1) @ torch.tensor(g)).backward()
    return omega.grad.numpy()


def _autograd_functional(a, g):
    """The same shortcut through torch.autograd.functional: no .backward() call to see."""
    loss = lambda w: torch.softmax(w, dim=-1) @ torch.tensor(g)  # noqa: E731
    return torch.autograd.functional.jacobian(loss, torch.tensor(np.log(a))).numpy()


def _grad_of(a, g):
    """A learner's helper one call further down: the autograd call sits here."""
    return _autograd(a, g)


def _autograd_two_calls_down(a, g):
    """The shortcut hidden two calls deep: this function calls a helper that calls another."""
    return _grad_of(a, g)


def _aten_backward(a, g):
    """The shortcut: softmax's own backward, an aten operator whose name holds no autograd word."""
    return torch.ops.aten._softmax_backward_data(torch.tensor(g), torch.tensor(a), -1, torch.float64).numpy()


def _backward_by_getattr(a, g):
    """The shortcut with the name spelt so that no reading of the source finds it."""
    omega = torch.tensor(np.log(a), requires_grad=True)
    getattr(torch.softmax(omega, dim=-1) @ torch.tensor(g), "back" + "ward")()
    return omega.grad.numpy()


SHORTCUTS = [_autograd, _autograd_functional, _autograd_two_calls_down, _aten_backward, _backward_by_getattr]


@pytest.mark.parametrize("shortcut", SHORTCUTS)
def test_autograd_does_not_pass(shortcut):
    """Exact to rounding, so no comparison of numbers can catch it: the check names the autograd call."""
    _names_only(_message(check_score_gradient, shortcut), "autograd", GRADIENT)


def test_a_comment_that_mentions_autograd_does_not_count(capsys):
    def score_gradient(alpha, g):
        # by hand, no autograd: sum_j g_j alpha_j (delta_jl - alpha_l)
        return alpha * (g - alpha @ g)

    _right_answer_passes(check_score_gradient, score_gradient, capsys)


def test_a_right_answer_in_float32_is_named_as_float32():
    _names_only(_message(check_score_gradient, lambda a, g: (a * (g - a @ g)).astype(np.float32)), "float32",
                GRADIENT)


def test_a_finite_difference_estimate_does_not_pass():
    """Right to about 1e-10, not to rounding: named as an estimate."""
    _names_only(_message(check_score_gradient, _finite_differences), "estimate", GRADIENT)


# ---------------------------------------------------------------- exercise 4: the layer without a divisor
UNSCALED = {
    "scale None": "still divides its scores by sqrt(d_k)",
    "scale 4": "unscaled has scale = ",
    "both by 4": "you divided both W_Q and W_K by 4",
    "by d_k": "the scores come out divided by d_k = 16",
    "unchanged": "these are scaled's weights unchanged",
    "only W_V divided": "W_V does not touch the scores",
    "times 4": "you multiplied by 4",
    "sqrt(d_in)": "you divided by sqrt(d_model)",
    "other factor": "the scores are 0.5 times scaled's",
    "not copied": "Start from scaled's weights (copy them",
    "W_K own start": "W_K is not scaled's: it is still unscaled's own starting W_K",
    "W_Q own start": "W_Q is not scaled's: it is still unscaled's own starting W_Q",
    "W_V divided": "W_V is 0.25 times scaled's",
    "W_V not copied": "the outputs differ: copy W_V",
    "bias": "unscaled has bias terms",
    "W_Q and W_K swapped": "W_Q and W_K are swapped",
    "W_K from W_Q": "unscaled's W_K is a multiple of scaled's W_Q",
    "W_Q from W_K": "unscaled's W_Q is a multiple of scaled's W_K",
    "W_V from W_K": "unscaled's W_V is a multiple of scaled's W_K",
}


def _layers(scale=1.0, bias=False):
    torch.manual_seed(6)
    scaled = sa.SelfAttention(8, 16)
    return scaled, sa.SelfAttention(8, 16, bias=bias, scale=scale)


def _folded(c_q=0.25, c_k=1.0, c_v=1.0, scale=1.0, copy_v=True, copy=True, bias=False):
    scaled, unscaled = _layers(scale, bias)
    if copy:
        with torch.no_grad():
            unscaled.W_query.weight.copy_(scaled.W_query.weight * c_q)
            unscaled.W_key.weight.copy_(scaled.W_key.weight * c_k)
            if copy_v:
                unscaled.W_value.weight.copy_(scaled.W_value.weight * c_v)
    return unscaled


def _own_start(kept, c_q=1.0, c_k=1.0):
    """W_Q (or W_K) copied from scaled with its factor; the other, ``kept``, left at unscaled's own start."""
    scaled, unscaled = _layers()
    with torch.no_grad():
        for name, c in (("W_query", c_q), ("W_key", c_k), ("W_value", 1.0)):
            if name != kept:
                getattr(unscaled, name).weight.copy_(getattr(scaled, name).weight * c)
    return unscaled


def _from(q, k, v, c_q=0.25):
    """unscaled's W_Q, W_K, W_V copied from scaled's matrices named q, k, v (W_Q's with the factor c_q)."""
    scaled, unscaled = _layers()
    with torch.no_grad():
        unscaled.W_query.weight.copy_(getattr(scaled, q).weight * c_q)
        unscaled.W_key.weight.copy_(getattr(scaled, k).weight)
        unscaled.W_value.weight.copy_(getattr(scaled, v).weight)
    return unscaled


UNSCALED_WRONG = {
    "scale None": lambda: _folded(scale=None),
    "scale 4": lambda: _folded(scale=4.0),
    "both by 4": lambda: _folded(c_q=0.25, c_k=0.25),
    "by d_k": lambda: _folded(c_q=1 / 16),
    "unchanged": lambda: _folded(c_q=1.0),
    "only W_V divided": lambda: _folded(c_q=1.0, c_v=0.25),     # the factor put into the wrong matrix
    "times 4": lambda: _folded(c_q=4.0),
    "sqrt(d_in)": lambda: _folded(c_q=1 / math.sqrt(8)),
    "other factor": lambda: _folded(c_q=0.5),
    "not copied": lambda: _folded(copy=False),
    "W_V divided": lambda: _folded(c_v=0.25),
    "W_K own start": lambda: _own_start("W_key", c_q=0.25),
    "W_Q own start": lambda: _own_start("W_query", c_k=0.25),
    "W_V not copied": lambda: _folded(copy_v=False),
    "bias": lambda: _folded(bias=True),
    "W_Q and W_K swapped": lambda: _from("W_key", "W_query", "W_value"),     # the scores come out transposed
    "W_K from W_Q": lambda: _from("W_query", "W_query", "W_value"),          # W_Q copied twice
    "W_Q from W_K": lambda: _from("W_key", "W_key", "W_value"),              # W_K copied twice
    "W_V from W_K": lambda: _from("W_query", "W_key", "W_key"),              # W_V from the wrong matrix
}


@pytest.mark.parametrize("key", sorted(UNSCALED_WRONG))
def test_unscaled_layer_mistake_is_named(key):
    _names_only(_message(check_unscaled_layer, UNSCALED_WRONG[key]()), key, UNSCALED)


def test_swapped_w_q_and_w_k_is_named_whatever_the_factor():
    for c_q in (1.0, 0.25, 0.5):
        _names_only(_message(check_unscaled_layer, _from("W_key", "W_query", "W_value", c_q)),
                    "W_Q and W_K swapped", UNSCALED)


@pytest.mark.parametrize("key", sorted(k for k in UNSCALED_WRONG if k not in ("bias", "scale None")))
def test_unscaled_layer_slips_fail_the_hidden_test_too(key):
    assert not _hidden_test_passes("06_scaling", "l06-unscaled-test", unscaled=UNSCALED_WRONG[key]())


@pytest.mark.parametrize("factors", [(0.25, 1.0), (1.0, 0.25), (0.5, 0.5), (2.0, 0.125)])
def test_unscaled_layer_right_designs_pass(factors, capsys):
    _right_answer_passes(check_unscaled_layer, _folded(*factors), capsys)


def test_a_design_that_is_no_multiple_of_scaled_but_right_passes(capsys):
    """W_Q M and W_K M^-T (for any invertible M) give the same scores: the check compares what the layer
    computes, not the weights' form."""
    scaled, unscaled = _layers()
    M = torch.linalg.qr(torch.randn(16, 16, generator=torch.Generator().manual_seed(3)))[0] * 2.0
    with torch.no_grad():
        unscaled.W_query.weight.copy_(M @ scaled.W_query.weight / 4)
        unscaled.W_key.weight.copy_(torch.linalg.inv(M).T @ scaled.W_key.weight)
        unscaled.W_value.weight.copy_(scaled.W_value.weight)
    _right_answer_passes(check_unscaled_layer, unscaled, capsys)


def test_the_shortcut_of_keeping_the_divisor_does_not_pass():
    """Copying scaled itself (or setting scale to 1/4) computes the same thing, but keeps the divisor."""
    scaled, _ = _layers()
    _names_only(_message(check_unscaled_layer, scaled), "scale None", UNSCALED)
    _names_only(_message(check_unscaled_layer, _folded(c_q=1.0, scale=0.25)), "scale 4", UNSCALED)


def test_the_judge_accepts_plain_data_as_the_grader_records_it():
    unscaled = _folded(c_q=0.5, c_k=0.5)
    weights = [getattr(unscaled, n).weight.detach().numpy().tolist() for n in ("W_query", "W_key", "W_value")]
    check_unscaled_weights(*weights, 1.0)
    halved = [np.asarray(w) * f for w, f in zip(weights, (0.5, 0.5, 1.0), strict=True)]
    with pytest.raises(ExerciseError, match="divided both W_Q and W_K by 4"):
        check_unscaled_weights(*halved, 1.0)


@pytest.mark.parametrize(("factors", "said"), [
    ((0.25, 1.0), "on W_Q changes unscaled's scores 4 times as much as scaled's, and one on W_K as much as"),
    ((1.0, 0.25), "on W_Q changes unscaled's scores as much as scaled's, and one on W_K 4 times as much as"),
    ((0.5, 0.5), "on W_Q changes unscaled's scores 2 times as much as scaled's, and one on W_K 2 times as"),
    ((-0.25, -1.0), "on W_Q changes unscaled's scores 4 times as much as scaled's, and one on W_K as much as "
                    "scaled's (compared with the matching step on scaled's, turned or flipped"),
])
def test_the_pass_message_names_the_matrix_whose_steps_grow(factors, said, capsys):
    """A step on W_Q moves the scores in proportion to W_K / c, so the factor lands on the other matrix."""
    check_unscaled_layer(_folded(*factors))
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith("Correct:") and said in out, out


def test_autograd_is_put_back_after_the_check():
    _message(check_score_gradient, _backward_by_getattr)
    omega = torch.tensor([1.0, 2.0], requires_grad=True)
    torch.softmax(omega, dim=-1)[0].backward()
    assert omega.grad is not None and callable(torch.ops.aten._softmax_backward_data)


@pytest.mark.parametrize("shortcut", SHORTCUTS)
def test_autograd_fails_the_hidden_test_too(shortcut):
    """Exact to rounding, so the hidden test's numbers alone would pass it: it refuses autograd too."""
    assert not _hidden_test_passes("06_scaling", "l06-score-gradient-test", score_gradient=shortcut)


def test_a_gradient_by_hand_through_a_helper_passes_the_hidden_test():
    def weighted_mean(alpha, g):
        return alpha @ g

    def score_gradient(alpha, g):
        return alpha * (g - weighted_mean(alpha, g))

    assert _hidden_test_passes("06_scaling", "l06-score-gradient-test", score_gradient=score_gradient)


def test_a_rotated_right_answer_gets_true_step_sizes(capsys):
    """R W_Q / 4 and R W_K (R a rotation) compute what scaled does; the steps compare as for W_Q / 4."""
    scaled, unscaled = _layers()
    R = torch.linalg.qr(torch.randn(16, 16, generator=torch.Generator().manual_seed(5)))[0]
    with torch.no_grad():
        unscaled.W_query.weight.copy_(R @ scaled.W_query.weight / 4)
        unscaled.W_key.weight.copy_(R @ scaled.W_key.weight)
        unscaled.W_value.weight.copy_(scaled.W_value.weight)
    check_unscaled_layer(unscaled)
    out = " ".join(capsys.readouterr().out.split())
    said = ("on W_Q changes unscaled's scores 4 times as much as scaled's, and one on W_K as much as "
            "scaled's (compared with the matching step")
    assert out.startswith("Correct:") and said in out, out


def test_an_uneven_right_answer_is_not_given_one_factor(capsys):
    """W_Q M / 4 and W_K M^-T with M not a rotation: no single factor, and the message says so."""
    scaled, unscaled = _layers()
    M = torch.diag(torch.linspace(0.5, 2.0, 16))
    with torch.no_grad():
        unscaled.W_query.weight.copy_(M @ scaled.W_query.weight / 4)
        unscaled.W_key.weight.copy_(torch.linalg.inv(M).T @ scaled.W_key.weight)
        unscaled.W_value.weight.copy_(scaled.W_value.weight)
    check_unscaled_layer(unscaled)
    assert "by different factors in different directions" in capsys.readouterr().out


def _jacobian_named_locally(alpha, g):
    jacobian = np.diag(alpha) - np.outer(alpha, alpha)
    return jacobian @ g


def _vjp_named_locally(alpha, g):
    vjp = alpha * (g - alpha @ g)
    return vjp


def _backward_named_locally(alpha, g):
    backward = alpha @ g
    return alpha * (g - backward)


def _grad_named_locally(alpha, g):
    grad = alpha * (g - alpha @ g)
    return grad


@pytest.mark.parametrize("answer", [_jacobian_named_locally, _vjp_named_locally, _backward_named_locally,
                                    _grad_named_locally])
def test_a_local_variable_named_like_autograd_passes_both(answer, capsys):
    """Only a name that resolves to PyTorch's autograd counts, never a local variable's name."""
    _right_answer_passes(check_score_gradient, answer, capsys)
    assert _hidden_test_passes("06_scaling", "l06-score-gradient-test", score_gradient=answer)


def _imported_grad(a, g):
    """The shortcut through a name imported from torch.autograd: the learner's own binding, not torch's."""
    from torch.autograd import grad as derivative
    omega = torch.tensor(np.log(a), requires_grad=True)
    return derivative(torch.softmax(omega, dim=-1) @ torch.tensor(g), omega)[0].numpy()


def _func_vjp(a, g):
    """The shortcut through torch.func."""
    _, pullback = torch.func.vjp(lambda w: torch.softmax(w, dim=-1), torch.tensor(np.log(a)))
    return pullback(torch.tensor(g))[0].numpy()


def _grad_fn_call(a, g):
    """The shortcut through the softmax node's own backward, called directly."""
    alpha = torch.softmax(torch.tensor(np.log(a), requires_grad=True), -1)
    return alpha.grad_fn(torch.tensor(g)).detach().numpy()


def _forward_mode(a, g):
    """The shortcut through forward-mode autograd, imported inside the function: one tangent per score."""
    import torch.autograd.forward_ad as fw

    out = np.zeros(len(a))
    with fw.dual_level():
        for l in range(len(a)):
            omega = fw.make_dual(torch.tensor(np.log(a)), torch.eye(len(a), dtype=torch.float64)[l])
            out[l] = fw.unpack_dual(torch.softmax(omega, -1)).tangent.numpy() @ g
    return out


@pytest.mark.parametrize("shortcut", [_imported_grad, _func_vjp, _grad_fn_call, _forward_mode])
def test_other_autograd_routes_fail_both(shortcut):
    _names_only(_message(check_score_gradient, shortcut), "autograd", GRADIENT)
    assert not _hidden_test_passes("06_scaling", "l06-score-gradient-test", score_gradient=shortcut)


def test_a_slip_read_off_the_value_is_named():
    """sqrt(3/16): the message reads the slip off the learner's own number, without the answer."""
    msg = _message(check_query_std, math.sqrt(3) / math.sqrt(16))
    assert "is sqrt(3/16)" in msg and "16 is not the number" in msg and "3/32" not in msg, msg
    assert "is sqrt(3/128)" in _message(check_query_std, math.sqrt(3 / 128))


@pytest.mark.parametrize("wrong", [math.sqrt(3) / 32, math.sqrt(3 / 16)])
def test_std_slips_fail_the_hidden_test_too(wrong):
    assert not _hidden_test_passes("06_scaling", "l06-init-scale-test", std_q=wrong)


def test_alpha_l_squared_written_another_way_is_named_so():
    wrong = lambda a, g: a * (g - a * g.sum())  # noqa: E731
    _names_only(_message(check_score_gradient, wrong), "alpha_l squared", GRADIENT)
