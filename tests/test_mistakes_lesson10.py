"""Lesson 10's checks name each typical mistake, and only that one, when a learner makes it.

Every function below is a wrong answer as a learner would write it; the check's message must name that mistake
(a phrase of its explanation) and no other named mistake; two different right answers must get ``Correct:``;
a shortcut that skips what the exercise teaches must not pass.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from mistakes import hidden_test_passes
from mistakes import message as _message
from mistakes import names_only as _names_only
from mistakes import right_answer_passes as _passes

from selfattention.checks import check_combine_blocks, check_longest_context, check_online_step

# ---------------------------------------------------------------- exercise 1: the longest context
LONGEST = {
    "batch": "the batch is missing",
    "heads": "the heads are missing",
    "layers in training": "in training the backward pass needs every layer's weights",
    "layers in inference": "only one layer's weights are held at a time",
    "bits": "the dtype's bits were used as bytes",
    "float16 as 4": "float16 numbers are 16 bits",
    "bfloat16 as 4": "bfloat16 is a 16-bit format too",
    "bytes": "the bytes per number are missing",
    "linear": "grows like T^2, not T",
    "rounded": "rounded, not rounded down",
    "float": "not a whole number of tokens",
    "half": "counts only half the matrix",
    "three arrays": "counts three T x T arrays",
    "root first": "the square root was taken before dividing",
    "two arrays": "counts two T x T arrays",
    "swapped": "training and inference are swapped",
}

SIZE = {"float32": 4, "float16": 2, "bfloat16": 2}
BITS = {"float32": 32, "float16": 16, "bfloat16": 16}      # bits used as bytes
BF16_AS_4 = {"float32": 4, "float16": 2, "bfloat16": 4}   # only float16 known as 2 bytes


def _per(b, h, L, dt, train, size=SIZE):
    """Bytes per unit of T^2 as the right answer counts them."""
    return (L if train else 1) * b * h * size[dt]


LONGEST_WRONG = {
    "batch": lambda m, b, h, L, dt, tr: math.isqrt(m // ((L if tr else 1) * h * SIZE[dt])),
    "heads": lambda m, b, h, L, dt, tr: math.isqrt(m // ((L if tr else 1) * b * SIZE[dt])),
    "layers in training": lambda m, b, h, L, dt, tr: math.isqrt(m // (b * h * SIZE[dt])),
    "layers in inference": lambda m, b, h, L, dt, tr: math.isqrt(m // (L * b * h * SIZE[dt])),
    "bits": lambda m, b, h, L, dt, tr: math.isqrt(m // _per(b, h, L, dt, tr, BITS)),
    "float16 as 4": lambda m, b, h, L, dt, tr: math.isqrt(m // ((L if tr else 1) * b * h * 4)),
    "bfloat16 as 4": lambda m, b, h, L, dt, tr: math.isqrt(m // _per(b, h, L, dt, tr, BF16_AS_4)),
    "bytes": lambda m, b, h, L, dt, tr: math.isqrt(m // ((L if tr else 1) * b * h)),
    "linear": lambda m, b, h, L, dt, tr: m // _per(b, h, L, dt, tr),
    "rounded": lambda m, b, h, L, dt, tr: round(math.sqrt(m / _per(b, h, L, dt, tr))),
    "float": lambda m, b, h, L, dt, tr: math.sqrt(m / _per(b, h, L, dt, tr)),
    "half": lambda m, b, h, L, dt, tr: int((math.sqrt(1 + 8 * m / _per(b, h, L, dt, tr)) - 1) / 2),
    "root first": lambda m, b, h, L, dt, tr: math.isqrt(m) // _per(b, h, L, dt, tr),
    "three arrays": lambda m, b, h, L, dt, tr: math.isqrt(m // (3 * _per(b, h, L, dt, tr))),
    # scores plus weights, with the right 2 bytes: same T as float16-as-4 on a float16 case
    "two arrays": lambda m, b, h, L, dt, tr: math.isqrt(m // (2 * _per(b, h, L, dt, tr))),
    "swapped": lambda m, b, h, L, dt, tr: math.isqrt(m // ((1 if tr else L) * b * h * SIZE[dt])),
}


@pytest.mark.parametrize("key", sorted(LONGEST_WRONG))
def test_longest_mistake_is_named(key):
    _names_only(_message(check_longest_context, LONGEST_WRONG[key]), key, LONGEST)


def _longest_floor(m, b, h, L, dt, tr):
    return int(np.floor(np.sqrt(m / _per(b, h, L, dt, tr))))


def _longest_count_up(m, b, h, L, dt, tr):
    """torch's own sizes, and T counted down from above."""
    per = (L if tr else 1) * b * h * torch.tensor([], dtype=getattr(torch, dt)).element_size()
    T = int(math.sqrt(m / per)) + 2
    while per * T * T > m:
        T -= 1
    return T


def test_longest_right_answers_pass(capsys):
    for right in (_longest_floor, _longest_count_up):
        _passes(check_longest_context, right, capsys)
        assert hidden_test_passes("10_cost_and_memory", "l10-longest-test", longest_context=right)


DROPPED = ["batch", "layers in training", "layers in inference", "bits", "bfloat16 as 4", "two arrays",
           "swapped"]


@pytest.mark.parametrize("key", DROPPED)
def test_longest_dropped_factor_fails_hidden_test(key):
    wrong = LONGEST_WRONG[key]
    assert not hidden_test_passes("10_cost_and_memory", "l10-longest-test", longest_context=wrong)


def test_longest_whole_numbers_print_as_integers():
    """A whole T is printed with digits and commas, not in scientific notation."""
    wrong = lambda m, b, h, L, dt, tr: 10_210  # noqa: E731
    text = _message(check_longest_context, wrong)
    assert "= 10,210," in text and "e+04" not in text


def test_longest_three_arrays_fails_hidden_test():
    assert not hidden_test_passes("10_cost_and_memory", "l10-longest-test",
                                  longest_context=LONGEST_WRONG["three arrays"])


def test_longest_shortcut_fails():
    """A number hard-coded from one case is not a function of the inputs."""
    shortcut = lambda m, b, h, L, dt, tr: 1000  # noqa: E731
    assert "Correct" not in _message(check_longest_context, shortcut)
    assert not hidden_test_passes("10_cost_and_memory", "l10-longest-test", longest_context=shortcut)


# ---------------------------------------------------------------- exercise 2: merging blocks by their L
COMBINE = {
    "equal": "averages the blocks' outputs equally",
    "sum": "that adds the blocks' outputs",
    "unnormalised": "were not divided by their sum",
    "linear": "weights the blocks by L_b itself",
    "sign": "the sign is flipped",
    "largest only": "keeps only the block with the largest L",
    "overflow": "exp(L_b) overflows",
    "stable unnormalised": "are stable but not normalised",
    "divided by n": "were divided by the number of blocks n",
}

COMBINE_WRONG = {
    "equal": lambda z, L: z.mean(axis=0),
    "sum": lambda z, L: z.sum(axis=0),
    "unnormalised": lambda z, L: np.exp(L) @ z,
    "linear": lambda z, L: (L / L.sum()) @ z,
    "sign": lambda z, L: np.exp(-L - np.logaddexp.reduce(-L)) @ z,
    "largest only": lambda z, L: z[np.argmax(L)],
    "overflow": lambda z, L: np.exp(L) @ z / np.exp(L).sum(),
    "stable unnormalised": lambda z, L: np.exp(L - L.max()) @ z,
    "divided by n": lambda z, L: np.exp(L) @ z / len(L),
}


@pytest.mark.parametrize("key", sorted(COMBINE_WRONG))
def test_combine_mistake_is_named(key):
    _names_only(_message(check_combine_blocks, COMBINE_WRONG[key]), key, COMBINE)


@pytest.mark.parametrize("key", sorted(COMBINE_WRONG))
def test_combine_message_does_not_give_the_formula(key):
    """A message names the slip; the weight exp(L_b) / sum of exp(L_c) is the exercise, not the message's."""
    msg = _message(check_combine_blocks, COMBINE_WRONG[key])
    assert "sum over blocks of exp" not in msg and "exp(L_c)" not in msg, msg


def test_combine_right_answers_pass(capsys):
    _passes(check_combine_blocks, lambda z, L: np.exp(L - np.logaddexp.reduce(L)) @ z, capsys)

    def by_hand(z, L):
        w = np.exp(L - L.max())
        return (w[:, None] * z).sum(axis=0) / w.sum()

    _passes(check_combine_blocks, by_hand, capsys)


def test_combine_shortcut_fails():
    """Taking the block with the largest L (a hard max over blocks) skips the weighting it teaches."""
    assert "Correct" not in _message(check_combine_blocks, lambda z, L: z[int(np.argmax(L))])


# ---------------------------------------------------------------- exercise 3: one online-softmax step
ONLINE = {
    "inverted": "the correction is inverted",
    "own max": "each block's exponentials were taken from that block's own maximum",
    "o not rescaled": "l was rescaled but o was not",
    "forgot new factor": "the new block's sums were not",
    "neither rescaled": "neither l nor o was rescaled",
    "l not rescaled": "o was rescaled but l was not",
    "block max": "m became the new block's maximum",
    "divided": "o holds the normalised output",
    "no max": "np.exp(1000) overflows",
    "m not updated": "m was not updated",
    "old m": "taken from the old maximum m",
    "l twice": "l was rescaled twice",
    "divided each step": "o was divided by l at every step",
    "new block rescaled": "multiplies the new block's sums instead of the old ones",
}


def step(state, scores, values, *, invert=False, own=False, rescale_l=True, rescale_o=True, block_max=False,
         divided=False, subtract=True, update_m=True, forget_new=False):
    m, l, o = state
    if forget_new:   # p from the block's own maximum; only the old sums rescaled
        m_new = max(m, scores.max())
        p = np.exp(scores - scores.max())
        return m_new, l * np.exp(m - m_new) + p.sum(), o * np.exp(m - m_new) + p @ values
    if divided:
        o = o * l
    m_new = scores.max() if block_max else max(m, scores.max())
    if own:
        p = np.exp(scores - scores.max())
        return m_new, l + p.sum(), o + p @ values
    if not subtract:
        p = np.exp(scores)
        return m_new, l + p.sum(), o + p @ values
    correction = np.exp(m_new - m) if invert else np.exp(m - m_new)
    p = np.exp(scores - m_new)
    l_new = (l * correction if rescale_l else l) + p.sum()
    o_new = (o * correction if rescale_o else o) + p @ values
    if divided:
        o_new = o_new / l_new
    return (m_new if update_m else m), l_new, o_new


def _old_m(state, scores, values):
    """Rescales the old sums to m_new but takes the new block's exp from the old m (a slip of one name)."""
    m, l, o = state
    m_new = max(m, scores.max())
    c = np.exp(m - m_new)
    p = np.exp(scores - m)
    return m_new, l * c + p.sum(), o * c + p @ values


def _l_twice(state, scores, values):
    """Rescales l once on its own line and once more where the block is added."""
    m, l, o = state
    m_new = max(m, scores.max())
    c = np.exp(m - m_new)
    l = l * c
    p = np.exp(scores - m_new)
    return m_new, l * c + p.sum(), o * c + p @ values


def _divided_each(state, scores, values):
    """Keeps o / l in the state, without undoing the division at the next step."""
    m, l, o = state
    m_new = max(m, scores.max())
    c, p = np.exp(m - m_new), np.exp(scores - m_new)
    l_new = c * l + p.sum()
    return m_new, l_new, (c * o + p @ values) / l_new


def _new_rescaled(state, scores, values):
    """Puts the correction on the new block's sums instead of the old ones."""
    m, l, o = state
    m_new = max(m, scores.max())
    c, p = np.exp(m - m_new), np.exp(scores - m_new)
    return m_new, l + c * p.sum(), o + c * (p @ values)


ONLINE_WRONG = {
    "inverted": lambda st, s, v: step(st, s, v, invert=True),
    "own max": lambda st, s, v: step(st, s, v, own=True),
    "o not rescaled": lambda st, s, v: step(st, s, v, rescale_o=False),
    "forgot new factor": lambda st, s, v: step(st, s, v, forget_new=True),
    "neither rescaled": lambda st, s, v: step(st, s, v, rescale_l=False, rescale_o=False),
    "l not rescaled": lambda st, s, v: step(st, s, v, rescale_l=False),
    "block max": lambda st, s, v: step(st, s, v, block_max=True),
    "divided": lambda st, s, v: step(st, s, v, divided=True),
    "no max": lambda st, s, v: step(st, s, v, subtract=False),
    "m not updated": lambda st, s, v: step(st, s, v, update_m=False),
    "old m": lambda st, s, v: _old_m(st, s, v),
    "l twice": lambda st, s, v: _l_twice(st, s, v),
    "divided each step": lambda st, s, v: _divided_each(st, s, v),
    "new block rescaled": lambda st, s, v: _new_rescaled(st, s, v),
}


def test_online_difference_is_named_in_words():
    """A generic difference names m, l or o's component, not an index into [m, l, *o]."""
    def off(state, scores, values):
        m, l, o = step(state, scores, values)
        return m, l, o + np.array([0.0, 0.0, 0.1])
    text = _message(check_online_step, off)
    assert "in o[2]" in text and "index" not in text


def test_online_o_as_a_list_is_accepted_by_check_and_hidden_test(capsys):
    def as_list(state, scores, values):
        m, l, o = step(state, scores, values)
        return m, l, list(o)
    _passes(check_online_step, as_list, capsys)
    assert _hidden_passes("l10-online-test", online_step=as_list)


@pytest.mark.parametrize("key", sorted(ONLINE_WRONG))
def test_online_mistake_is_named(key):
    with np.errstate(all="ignore"):
        text = _message(check_online_step, ONLINE_WRONG[key])
    _names_only(text, key, ONLINE)


def _merge(state, scores, values):
    """Summarise the block as (m_B, l_B, o_B), then merge the two summaries with the two-block rule."""
    m_a, l_a, o_a = state
    m_b = scores.max()
    l_b, o_b = np.exp(scores - m_b).sum(), np.exp(scores - m_b) @ values
    m = max(m_a, m_b)
    return m, np.exp(m_a - m) * l_a + np.exp(m_b - m) * l_b, np.exp(m_a - m) * o_a + np.exp(m_b - m) * o_b


def test_online_right_answers_pass(capsys):
    _passes(check_online_step, step, capsys)
    _passes(check_online_step, _merge, capsys)


def test_online_shortcut_fails():
    """Keeping every block seen so far and recomputing a plain softmax is not the running state the check
    reads: it returns the normalised output in o (and keeps all the scores)."""
    seen = []

    def keep_all(state, scores, values):
        seen.append((scores, values))
        s = np.concatenate([b[0] for b in seen])
        v = np.concatenate([b[1] for b in seen])
        e = np.exp(s - s.max())
        return s.max(), 1.0, e @ v / e.sum()

    assert "Correct" not in _message(check_online_step, keep_all)


# ---------------------------------------------------------------- hidden tests refuse what the checks refuse
def _hidden(grade_id: str) -> str:
    """The hidden-test part of the lesson's test cell whose nbgrader grade_id is ``grade_id``."""
    import json
    from pathlib import Path

    nb = json.loads((Path(__file__).parents[1] / "notebooks" / "10_cost_and_memory.ipynb").read_text())
    cell = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id)
    return "".join(cell["source"]).split("### BEGIN HIDDEN TESTS")[1].split("### END HIDDEN TESTS")[0]


def _hidden_passes(grade_id: str, **answer) -> bool:
    """Run the hidden tests with ``answer`` defined, as the grader does; recording is a no-op here."""
    import selfattention.coursework.results as results

    namespace = dict(answer)
    if grade_id == "l10-online-test":           # Exercise 2's cell grades the prediction too
        namespace.setdefault("predicted_state", (2.0, 2.25, [1.5, 0.0]))
    try:
        with np.errstate(all="ignore"), pytest.MonkeyPatch.context() as patch:
            patch.setattr(results, "record", lambda *args, **kwargs: None)
            exec(_hidden(grade_id), namespace)   # noqa: S102  (the lesson's own test code)
    except AssertionError:
        return False
    return True


COMBINE_SHORTCUTS = {
    "largest only": lambda z, L: z[int(np.argmax(L))],
    "plain mean": lambda z, L: z.mean(axis=0),
}


@pytest.mark.parametrize("key", sorted(COMBINE_WRONG))
def test_combine_hidden_test_refuses_each_named_slip(key):
    assert not _hidden_passes("l10-combine-test", combine_blocks=COMBINE_WRONG[key])


@pytest.mark.parametrize("key", sorted(COMBINE_SHORTCUTS))
def test_combine_shortcut_fails_check_and_hidden_test(key):
    assert "Correct" not in _message(check_combine_blocks, COMBINE_SHORTCUTS[key])
    assert not _hidden_passes("l10-combine-test", combine_blocks=COMBINE_SHORTCUTS[key])


SHIFTED = {   # stable only while the blocks' L are close: the case whose L differ by about 2300 overflows
    "smallest L": lambda z, L: np.exp(L - L.min()) @ z / np.exp(L - L.min()).sum(),
    "mean L": lambda z, L: np.exp(L - L.mean()) @ z / np.exp(L - L.mean()).sum(),
}


@pytest.mark.parametrize("key", sorted(SHIFTED))
def test_combine_shift_by_other_than_max_fails_check_and_hidden_test(key):
    msg = _message(check_combine_blocks, SHIFTED[key])
    assert "overflows when c is not the LARGEST L" in msg and "Correct" not in msg
    assert not any(needle in msg for needle in COMBINE.values()), msg
    assert not _hidden_passes("l10-combine-test", combine_blocks=SHIFTED[key])


def test_combine_hidden_test_passes_right_answers():
    """A softmax over the blocks' L (what the exercise teaches) passes, whether written by hand or with
    np.logaddexp."""
    assert _hidden_passes("l10-combine-test",
                          combine_blocks=lambda z, L: np.exp(L - np.logaddexp.reduce(L)) @ z)
    assert _hidden_passes("l10-combine-test",
                          combine_blocks=lambda z, L: np.exp(L - L.max()) @ z / np.exp(L - L.max()).sum())


@pytest.mark.parametrize("key", ["old m", "l twice", "divided each step", "new block rescaled"])
def test_online_hidden_test_refuses_the_named_slips(key):
    assert not _hidden_passes("l10-online-test", online_step=ONLINE_WRONG[key])


def test_online_hidden_test_passes_a_right_answer():
    assert _hidden_passes("l10-online-test", online_step=_merge)


# ---------------------------------------------------------------- exercise 2's prediction: a block below m
PREDICTED = {
    "m moved": ((2 - math.log(2), 4.5, [3.0, 0.0]), "m became the block's maximum"),
    "unchanged": ((2.0, 1.5, [0.5, -1.0]), "the state did not change"),
    "own max": ((2.0, 3.0, [2.5, 1.0]), "taken from the block's own maximum"),
    "divided": ((2.0, 2.25, [1.5 / 2.25, 0.0]), "o was divided by l"),
    "rescaled": ((2.0, 1.5, [1.25, 0.5]), "rescaled as if the maximum had changed"),
    "m only wrong": ((3.0, 2.25, [1.5, 0.0]), "your predicted m = 3 is not right"),
    "o slip": ((2.0, 2.25, [1.5, 1.0]), "in o[1]"),
}


@pytest.mark.parametrize("key", sorted(PREDICTED))
def test_prediction_mistake_is_named(key):
    state, needle = PREDICTED[key]
    text = _message(lambda f: check_online_step(f, state), step)
    assert needle in text and "Correct" not in text, text
    others = [n for k, (_, n) in PREDICTED.items() if k != key]
    assert not any(n in text for n in others), text
    assert not _hidden_passes("l10-online-test", online_step=step, predicted_state=state)


def test_prediction_right_in_several_forms(capsys):
    for state in [(2, 2.25, [1.5, 0]), (2.0, 9 / 4, np.array([1.5, 0.0])), [2, 2.25, (1.5, 0.0)]]:
        check_online_step(step, state)
        assert "Correct" in capsys.readouterr().out
        assert _hidden_passes("l10-online-test", online_step=step, predicted_state=state)
