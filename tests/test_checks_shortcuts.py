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
