"""An answer that calls the check's own reference (``from selfattention.checks.lesson12 import _ablated``) is
refused, for every graded function exercise, with a message that names the reference; the check's own calls
and the profile hooks already set are left alone."""

from __future__ import annotations

import importlib
import linecache
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from selfattention import checks
from selfattention.checks import _engine, lesson05

#: (lesson, check, the answer's name, a reference it could call, the check's other arguments). Every graded
#: exercise whose answer is a function; combine_blocks's reference is the engine's softmax, reached through
#: lesson 10 (an alias: the message names where it is defined). causal_elements_moved's right count is written
#: out in its check, so its shortcut calls a helper of the check instead.
SHORTCUTS: list[tuple[str, str, str, str, tuple[Any, ...]]] = [
    ("03", "check_self_attention_batch", "self_attention_batch", "_masked_attention", ()),
    ("05", "check_sgd_step", "sgd_step", "_sgd_reference", ()),
    ("06", "check_score_gradient", "score_gradient", "_score_gradient", ()),
    ("07", "check_mha_layer", "mha_forward", "_layer", ()),
    ("08", "check_silence_head", "silence_head", "_logits_with", ()),
    ("09", "check_decoder_inputs", "decoder_inputs", "_decoder_reference", ()),
    ("09", "check_decoder_mask", "decoder_mask", "_decoder_reference", ()),
    ("09", "check_shift_matrix", "shift_matrix", "_shift_reference", ()),
    ("09", "check_safe_weights", "safe_weights", "_safe_reference", ()),
    ("10", "check_longest_context", "longest_context", "_longest", ()),
    ("10", "check_combine_blocks", "combine_blocks", "reference_softmax", ()),
    ("10", "check_online_step", "online_step", "_step", ()),
    ("11", "check_first_layer_input", "first_layer_input", "_first_input", ()),
    ("11", "check_held_out_senses", "held_out_senses", "_senses", ()),
    ("11", "check_sentence_embedding", "sentence_embedding", "_embedding", ()),
    ("12", "check_mean_ablated_output", "mean_ablated_output", "_ablated", ()),
    ("12", "check_feed_forward_block", "feed_forward_block", "_ffn_block", ()),
    ("12", "check_head_to_residual", "head_to_residual", "_head_ratio", (0.08, 0.12)),
    ("13", "check_decode_step", "decode_step", "_attend", ()),
    ("13", "check_compute_bound_batch", "compute_bound_batch", "_bound_batch", ()),
    ("14", "check_rope_coefficients", "rope_coefficients", "_coefficients", ()),
    ("14", "check_global_layers_within", "global_layers_within", "_affordable", ()),
    ("14", "check_rope_base", "rope_base", "_largest_base", ()),
    ("15", "check_causal_flash", "causal_flash", "_causal", ()),
    ("15", "check_causal_elements_moved", "causal_elements_moved", "_held", ()),
    ("15", "check_query_tile_backward", "query_tile_backward", "_right_query_tile", ()),
]


def cell(text: str, name: str) -> Callable[..., Any]:
    """The function ``name`` defined by ``text``, run as a notebook runs an answer cell (source readable)."""
    filename = f"<answer cell {name}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    scope: dict[str, Any] = {}
    exec(compile(text, filename, "exec"), scope)  # noqa: S102
    return scope[name]


#: How a shortcut calls a reference whose arguments are not the answer's own (default ``(*args, **kwargs)``).
CALLS = {
    "_attend": "(args[0], args[3], args[4])",  # decode_step(q, k, v, K, V): the new row left out, but called
    "_causal": "(*(args[0].read(n) for n in 'QKV'))",  # causal_flash(memory, b)
    "_held": "(lambda memory, b: None, *args)",  # causal_elements_moved(T, d, b)
}


def shortcut(lesson: str, name: str, reference: str) -> Callable[..., Any]:
    """An answer ``name`` that imports ``reference`` from the lesson's checks and returns what it gives."""
    return cell(
        f"def {name}(*args, **kwargs):\n"
        f"    from selfattention.checks.lesson{lesson} import {reference}\n"
        f"    return {reference}{CALLS.get(reference, '(*args, **kwargs)')}\n",
        name,
    )


def refused(check: Callable[..., Any], *args: Any) -> str:
    with pytest.raises(checks.ExerciseError) as err, np.errstate(all="ignore"):
        check(*args)
    return str(err.value)


#: Exercises whose check refuses the reference before the engine does, with the words it uses: lesson 12's
#: feed-forward scan also runs in its hidden test, outside any check, where the engine's gate is not active.
OWN_REFUSAL = {("12", "feed_forward_block"): "the course's reference answer (selfattention.checks)"}


def test_every_function_exercise_is_listed() -> None:
    """Each check that takes the learner's function has a shortcut above (the value exercises have none)."""
    listed = {check for _, check, *_ in SHORTCUTS}
    for n in range(16):
        for name in importlib.import_module(f"selfattention.checks.lesson{n:02d}").__all__:
            fn = getattr(checks, name)
            first = next(iter(getattr(fn, "__wrapped__", fn).__annotations__.values()), "")
            if name.startswith("check_") and "Callable" in str(first):
                assert name in listed, name


@pytest.mark.parametrize(
    ("lesson", "check", "name", "reference", "more"), SHORTCUTS, ids=[f"{s[0]}-{s[2]}" for s in SHORTCUTS]
)
def test_a_shortcut_through_the_reference_is_refused(
    lesson: str, check: str, name: str, reference: str, more: tuple[Any, ...]
) -> None:
    ref = getattr(importlib.import_module(f"selfattention.checks.lesson{lesson}"), reference)
    home = f"{ref.__module__}.{ref.__qualname__}"
    text = refused(getattr(checks, check), shortcut(lesson, name, reference), *more)
    if (lesson, name) in OWN_REFUSAL:   # the lesson's own scan names it first (see OWN_REFUSAL)
        assert OWN_REFUSAL[lesson, name] in text, text
    else:
        assert text == _engine.reference_called_message(home)
        assert f"`{home}`" in text and "write it from the lesson's steps" in text
    assert sys.getprofile() is None


def right_sgd_step(W: np.ndarray, h: np.ndarray, y: int, lr: float) -> np.ndarray:
    """Lesson 05's step, written out: W - lr * (p - onehot(y)) h^T."""
    z = W @ h
    p = np.exp(z - z.max())
    p = p / p.sum()
    p[y] -= 1.0
    return W - lr * np.outer(p, h)


def test_a_right_answer_passes_and_the_check_calls_its_reference(capsys: pytest.CaptureFixture[str]) -> None:
    checks.check_sgd_step(right_sgd_step)
    assert capsys.readouterr().out.startswith("Correct:")


def test_a_finite_difference_step_is_refused() -> None:
    """Estimating the gradient from the loss at nudged weights skips the derivation: the check's logits near
    1e12 make every nudge either lost in rounding or too coarse, and the message names the shortcut."""
    def numerical_sgd_step(W: np.ndarray, h: np.ndarray, y: int, lr: float) -> np.ndarray:
        def loss(V: np.ndarray) -> float:
            z = V @ h
            return float(np.log(np.exp(z - z.max()).sum()) - (z[y] - z.max()))

        G = np.zeros_like(W)
        for idx in np.ndindex(*W.shape):
            E = np.zeros_like(W)
            E[idx] = 1e-5
            G[idx] = (loss(W + E) - loss(W - E)) / 2e-5
        return W - lr * G

    with pytest.raises(checks.ExerciseError, match=r"numerical \(finite-difference\) gradient"):
        checks.check_sgd_step(numerical_sgd_step)


def test_a_caught_refusal_still_fails() -> None:
    """An answer that catches whatever the reference raises and then answers right is refused all the same."""
    sneaky = cell(
        "def sgd_step(W, h, y, lr):\n"
        "    try:\n"
        "        import selfattention.checks.lesson05 as key\n"
        "        return getattr(key, '_sgd_' + 'reference')(W, h, y, lr)\n"
        "    except BaseException:\n"
        "        return right(W, h, y, lr)\n",
        "sgd_step",
    )
    sneaky.__globals__["right"] = right_sgd_step
    text = refused(checks.check_sgd_step, sneaky)
    assert "`selfattention.checks.lesson05._sgd_reference`" in text


def test_a_profiler_set_before_is_left_alone() -> None:
    events: list[str] = []

    def profiler(frame: Any, event: str, arg: Any) -> None:
        events.append(event)

    sys.setprofile(profiler)
    try:
        with pytest.raises(checks.ExerciseError):
            lesson05.check_sgd_step(shortcut("05", "sgd_step", "_sgd_reference"))
        assert sys.getprofile() is profiler
    finally:
        sys.setprofile(None)
    assert events


def test_stand_ins_handed_to_the_answer_are_no_references() -> None:
    """Lesson 15 swaps the package's tiled loop for a stand-in of its own: reaching it gives the stand-in's
    message, not the guard's."""
    loop = cell(
        "def causal_flash(memory, b):\n"
        "    from selfattention import llm\n"
        "    return llm.flash_attention_io(memory, b)\n",
        "causal_flash",
    )
    text = refused(checks.check_causal_flash, loop)
    assert "flash_attention_io" in text and "own reference" not in text


# ------------------------------------------------------------------ lesson 07: ready-made attention, any name
#: The body every lesson 07 shortcut shares: the layer's weights given to PyTorch's own, which does the work.
_TORCH_ARGS = ("x = torch.as_tensor(X)\n"
               "    W_in, b_in, W_out, b_out, pad = map(torch.as_tensor, (W_in, b_in, W_out, b_out, pad))\n")

#: (what the learner did, an earlier cell, the answer cell, what the message must name).
MHA_SHORTCUTS: list[tuple[str, str, str, str]] = [
    ("from-import alias", "",
     "import torch\n"
     "from torch.nn.functional import multi_head_attention_forward as MHAF\n"
     "def mha_forward(X, W_in, b_in, W_out, b_out, pad, h):\n"
     f"    {_TORCH_ARGS}"
     "    x = x.transpose(0, 1)\n"
     "    out = MHAF(x, x, x, X.shape[-1], h, W_in, b_in, None, None, False, 0.0, W_out, b_out,\n"
     "               key_padding_mask=pad, need_weights=False)[0]\n"
     "    return out.transpose(0, 1)\n",
     "torch's multi_head_attention_forward (as MHAF)"),
    ("alias from an earlier cell",
     "import torch\nimport selfattention as sa\nf = sa.scaled_dot_product_attention\n",
     "def mha_forward(X, W_in, b_in, W_out, b_out, pad, h):\n"
     "    B, T, d = X.shape\n"
     "    Q, K, V = (X @ W_in[i * d:(i + 1) * d].T + b_in[i * d:(i + 1) * d] for i in range(3))\n"
     "    Q, K, V = (Y.reshape(B, T, h, d // h).transpose(0, 2, 1, 3) for Y in (Q, K, V))\n"
     "    Z = np.stack([np.stack([f(Q[b, m], K[b, m], V[b, m]) for m in range(h)]) for b in range(B)])\n"
     "    return Z.transpose(0, 2, 1, 3).reshape(B, T, d) @ W_out.T + b_out\n",
     "sa.scaled_dot_product_attention (as f)"),
    ("module alias", "import torch\nimport torch.nn.functional as F\n",
     "def mha_forward(X, W_in, b_in, W_out, b_out, pad, h):\n"
     f"    {_TORCH_ARGS}"
     "    B, T, d = x.shape\n"
     "    q, k, v = (x @ W_in.T + b_in).chunk(3, dim=-1)\n"
     "    q, k, v = (y.view(B, T, h, -1).transpose(1, 2) for y in (q, k, v))\n"
     "    z = F.scaled_dot_product_attention(q, k, v, attn_mask=~pad[:, None, None, :])\n"
     "    return z.transpose(1, 2).reshape(B, T, d) @ W_out.T + b_out\n",
     "scaled_dot_product_attention"),
    ("a kept nn.MultiheadAttention", "import torch\nlayer = torch.nn.MultiheadAttention(12, 3)\n",
     "def mha_forward(X, W_in, b_in, W_out, b_out, pad, h):\n"
     f"    {_TORCH_ARGS}"
     "    mha = torch.nn.MultiheadAttention(X.shape[-1], h, batch_first=True, dtype=torch.float64)\n"
     "    with torch.no_grad():\n"
     "        mha.in_proj_weight.copy_(W_in); mha.in_proj_bias.copy_(b_in)\n"
     "        mha.out_proj.weight.copy_(W_out); mha.out_proj.bias.copy_(b_out)\n"
     "        return mha(x, x, x, key_padding_mask=pad, need_weights=False)[0]\n",
     "MultiheadAttention"),
    ("an instance kept from an earlier cell", "import torch\nlayer = torch.nn.MultiheadAttention(12, 3)\n",
     "def mha_forward(X, W_in, b_in, W_out, b_out, pad, h):\n"
     "    return layer(X, X, X)[0]\n",
     "torch's MultiheadAttention (as layer)"),
    ("sa.MultiHeadAttention", "import selfattention as sa\n",
     "def mha_forward(X, W_in, b_in, W_out, b_out, pad, h):\n"
     "    layer = sa.MultiHeadAttention(X.shape[-1], h)\n"
     "    return layer(X)\n",
     "sa.MultiHeadAttention"),
]

_MHA_NUMPY = ("import math\nimport selfattention as sa\n",
              "def mha_forward(X, W_in, b_in, W_out, b_out, pad, h):\n"
              "    B, T, d = X.shape\n"
              "    Q, K, V = (X @ W_in[i * d:(i + 1) * d].T + b_in[i * d:(i + 1) * d] for i in range(3))\n"
              "    Q, K, V = (Y.reshape(B, T, h, d // h).transpose(0, 2, 1, 3) for Y in (Q, K, V))\n"
              "    attention = Q @ K.transpose(0, 1, 3, 2) / math.sqrt(d // h)\n"
              "    attention = np.where(pad[:, None, None, :], -np.inf, attention)\n"
              "    Z = (sa.softmax(attention, axis=-1) @ V).transpose(0, 2, 1, 3).reshape(B, T, d)\n"
              "    return Z @ W_out.T + b_out\n")


def mha_answer(earlier: str, answer: str) -> Callable[..., Any]:
    """``mha_forward`` as a notebook defines it: ``earlier`` run first, then the answer cell, in one scope."""
    scope: dict[str, Any] = {"np": np, "__name__": "__main__"}
    for n, text in enumerate((earlier, answer)):
        filename = f"<lesson 07 cell {n}>"
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        exec(compile(text, filename, "exec"), scope)  # noqa: S102
    return scope["mha_forward"]


@pytest.mark.parametrize(("what", "earlier", "answer", "named"), MHA_SHORTCUTS,
                         ids=[s[0] for s in MHA_SHORTCUTS])
def test_lesson07_ready_made_attention_under_any_name_is_refused(what: str, earlier: str, answer: str,
                                                                 named: str) -> None:
    """Exercise 2's check and hidden test refuse a ready-made attention however the learner named it."""
    from mistakes import hidden_test

    fn = mha_answer(earlier, answer)
    text = refused(checks.check_mha_layer, fn)
    assert "ready-made attention" in text and named in text, text
    with pytest.raises(AssertionError) as err:          # the hidden test fails, naming it too
        exec(hidden_test("07_multi_head_attention", "l07-split-test"), {"mha_forward": fn})  # noqa: S102
    assert named in str(err.value), err.value


def test_lesson07_a_numpy_answer_passes_check_and_hidden_test(capsys: pytest.CaptureFixture[str]) -> None:
    """A right layer in NumPy (sa.softmax, a variable called attention) is no shortcut."""
    from mistakes import hidden_test_passes

    fn = mha_answer(*_MHA_NUMPY)
    checks.check_mha_layer(fn)
    assert capsys.readouterr().out.startswith("Correct:")
    assert hidden_test_passes("07_multi_head_attention", "l07-split-test", mha_forward=fn)


@pytest.mark.parametrize(("what", "z2", "out", "named"), [
    ("the concatenation as the output", [0.503, 0.796], [0.924, 1.333, 0.503, 0.796], "before W_O"),
    ("head 2's values averaged evenly", [0.425, 0.45], [1.374, 0.425, 1.333, -0.025], "z2_apple"),
])
def test_lesson07_apple_shortcuts_are_refused(what: str, z2: list[float], out: list[float],
                                              named: str) -> None:
    """Exercise 1: stopping at the concatenation (W_O skipped) or averaging V2 without the weights (the
    softmax skipped) fails the check and the hidden test."""
    from mistakes import hidden_test_passes

    text = refused(lambda a: checks.check_apple_output(*a), (z2, (2, 3), out, True))
    assert named in text, text
    assert not hidden_test_passes("07_multi_head_attention", "l07-apple-test", z2_apple=z2,
                                  head2_columns=(2, 3), out_apple=out, leans_to_tech=True)
