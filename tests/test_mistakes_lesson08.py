"""Lesson 08's checks name each typical mistake, and only that one, when a learner makes it.

Every answer below is wrong as a learner would write it; the check's message must name that mistake (a phrase
of its explanation) and no other named mistake; two different right answers must get ``Correct:``; a shortcut
that skips what the exercise teaches must not pass.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from mistakes import hidden_test_passes
from mistakes import message as _message
from mistakes import names_only as _names_only
from mistakes import right_answer_passes as _right_answer_passes

from selfattention import tasks
from selfattention.checks import check_gqa_prediction, check_silence_head, check_two_head_design

# ---------------------------------------------------------------- exercise 1: silence one head
SILENCE = {
    "nothing": "nothing was silenced",
    "other head": "you silenced the other head",
    "uniform": "weights became uniform",
    "both": "both heads were silenced",
    "in place": "changed the model itself",
    "pair": "returned a pair",
    "hook left": "left a forward hook",
    "probabilities": "these are probabilities",
    "log-probabilities": "these are log-probabilities",
    "no_grad": "inside `with torch.no_grad():`",
    "mean-ablation": "replaced the head's output by its mean",
    "answer rows": "zeroed the readout's rows for one answer",
    "bias too": "zeroed the readout's bias as well",
}


def _mean_ablation(dims):
    def silence(model, head, X):     # the head's output replaced by its mean, not by zeros
        with torch.no_grad():
            outs = [h(X)[0] for h in model.attention.heads]
            outs[head] = outs[head].mean(dim=dims, keepdim=True).expand_as(outs[head])
            return model.readout(torch.cat(outs, dim=-1)[:, -1]).view(len(X), 2, -1)
    return silence


def _d_model_block(model, head, X):
    """The head's block taken d_model = 32 columns wide, not d_k = 16."""
    with torch.no_grad():
        Z = model.attention(X)[0].clone()
        Z[..., head * 32:(head + 1) * 32] = 0
        return model.readout(Z[:, -1]).view(len(X), 2, -1)


def _zero_value(model, head, X):
    silent = copy.deepcopy(model)
    with torch.no_grad():
        silent.attention.heads[head].W_value.weight.zero_()
        return silent(X)[0]


SILENCE_WRONG = {
    "nothing": lambda model, head, X: model(X)[0].detach(),
    "other head": lambda model, head, X: _zero_value(model, 1 - head, X),
    "uniform": lambda model, head, X: _zero_query(model, head, X),
    "both": lambda model, head, X: _zero_value(copy.deepcopy(model), 0, X) * 0 + _both(model, X),
    "in place": lambda model, head, X: _in_place(model, head, X),
    "pair": lambda model, head, X: tuple(t.detach() for t in _pair(model, head, X)),
    "hook left": lambda model, head, X: _hook_left(model, head, X),
    "probabilities": lambda model, head, X: torch.softmax(_zero_value(model, head, X), dim=-1),
    "log-probabilities": lambda model, head, X: torch.log_softmax(_zero_value(model, head, X), dim=-1),
    "no_grad": lambda model, head, X: _without_no_grad(model, head, X),
    "mean-ablation": _mean_ablation((0, 1)),
    "answer rows": lambda model, head, X: _answer_rows(model, head, X),
    "bias too": lambda model, head, X: _bias_too(model, head, X),
}


def _answer_rows(model, head, X):
    """The readout's rows for answer `head` (its 8 logits) zeroed: an answer silenced, not a head."""
    silent = copy.deepcopy(model)
    with torch.no_grad():
        silent.readout.weight[head * 8:(head + 1) * 8] = 0
        return silent(X)[0]


def _bias_too(model, head, X):
    """The head's block of the readout's columns zeroed, and the readout's bias with it."""
    silent = copy.deepcopy(model)
    with torch.no_grad():
        silent.readout.weight[:, head * 16:(head + 1) * 16] = 0
        silent.readout.bias.zero_()
        return silent(X)[0]
# answers whose output equals a named one's, so they get its message: the hint for each is in that message
SILENCE_SAME_OUTPUT = {
    "mean over positions": (_mean_ablation(1), "mean-ablation"),
    "d_model-wide block": (_d_model_block, "both"),
}


def _without_no_grad(model, head, X):
    """Zeroing a weight in place with gradients on: PyTorch's leaf-variable error."""
    silent = copy.deepcopy(model)
    silent.attention.heads[head].W_value.weight.zero_()
    return silent(X)[0]


def _hook_left(model, head, X):
    """A forward hook that zeroes the head's output, never removed."""
    model.attention.heads[head].register_forward_hook(lambda m, i, out: (torch.zeros_like(out[0]), out[1]))
    with torch.no_grad():
        return model(X)[0]


def _zero_block(model, head, X, d_k):
    """The head's block of the concatenation set to 0 before the readout, d_k columns wide."""
    with torch.no_grad():
        Z = model.attention(X)[0].clone()
        Z[..., head * d_k:(head + 1) * d_k] = 0
        return model.readout(Z[:, -1]).view(len(X), 2, -1)


def _zero_query(model, head, X):
    silent = copy.deepcopy(model)
    with torch.no_grad():
        silent.attention.heads[head].W_query.weight.zero_()
        return silent(X)[0]


def _both(model, X):
    silent = copy.deepcopy(model)
    with torch.no_grad():
        for h in silent.attention.heads:
            h.W_value.weight.zero_()
        return silent(X)[0]


def _in_place(model, head, X):
    with torch.no_grad():
        model.attention.heads[head].W_value.weight.zero_()
        return model(X)[0]


def _pair(model, head, X):
    silent = copy.deepcopy(model)
    with torch.no_grad():
        silent.attention.heads[head].W_value.weight.zero_()
        return silent(X)


@pytest.mark.parametrize("key", sorted(SILENCE_WRONG))
def test_silence_mistake_is_named(key):
    _names_only(_message(check_silence_head, SILENCE_WRONG[key]), key, SILENCE)
    if key not in ("pair",):           # a pair's logits are right; the hidden test reads only the logits
        try:
            passes = _silence_hidden(SILENCE_WRONG[key])
        except Exception:               # an answer that raises fails the hidden test too
            passes = False
        assert not passes


def _silence_hidden(silence_head):
    from selfattention.checks.lesson08 import _model

    X, y = tasks.make_lookup_data(60, seed=2, offsets=(1, -1))
    return hidden_test_passes(LESSON, "l08-silence-test", silence_head=silence_head, two_heads=_model(),
                              X_test=X, copy=copy)


@pytest.mark.parametrize("key", sorted(SILENCE_SAME_OUTPUT))
def test_silence_mean_ablation_and_block_width_are_named(key):
    silence, named = SILENCE_SAME_OUTPUT[key]
    text = _message(check_silence_head, silence)
    _names_only(text, named, SILENCE)
    if key == "d_model-wide block":
        assert "a head's block is d_k = 16 columns wide" in text and "not the whole 32" in text, text


@pytest.mark.parametrize("silence", [SILENCE_WRONG["mean-ablation"],
                                     *(v[0] for v in SILENCE_SAME_OUTPUT.values())])
def test_silence_hidden_test_fails_mean_ablation_and_block_width(silence):
    assert not _silence_hidden(silence)
    assert _silence_hidden(_zero_value)


def test_silence_in_place_says_which_cells_to_re_run():
    """A learner whose answer changed the model in place has also changed `two_heads` (and `runs`): the
    message names the cells that rebuild it."""
    text = _message(check_silence_head, SILENCE_WRONG["in place"])
    assert "One head against two, the same size" in text and "`two_heads = ...` cell" in text, text


def test_silence_right_answers_pass(capsys):
    _right_answer_passes(check_silence_head, _zero_value, capsys)

    def zero_block(model, head, X):  # the concatenation's block of that head, set to 0 before the readout
        with torch.no_grad():
            Z, _ = model.attention(X)
            d_k = Z.shape[-1] // len(model.attention.heads)
            Z = Z.clone()
            Z[..., head * d_k:(head + 1) * d_k] = 0
            return model.readout(Z[:, -1]).view(len(X), 2, -1)

    _right_answer_passes(check_silence_head, zero_block, capsys)
    # the lesson's model has d_k = 16: slicing with a hard-coded 16 is right for it, and for the check's model
    _right_answer_passes(check_silence_head, lambda model, head, X: _zero_block(model, head, X, 16), capsys)


def test_silence_a_function_that_returns_accuracy_does_not_pass():
    """The shortcut: measuring instead of silencing (an accuracy is not the logits)."""
    text = _message(check_silence_head, lambda model, head, X: 0.5)
    assert "shape" in text


def test_silence_removing_the_head_gets_the_hint():
    def removed(model, head, X):
        smaller = copy.deepcopy(model)
        del smaller.attention.heads[head]
        return smaller(X)[0]

    text = _message(check_silence_head, removed)
    assert "don't remove the head" in text and "2 d_k features" in text


def test_silence_message_reads_as_a_sentence():
    text = _message(check_silence_head, lambda model, head, X: model(X)[0])
    assert "the output of silence_head(model, head=0, X) is not right yet" in text, text


# ---------------------------------------------------------------- exercise 2: two heads designed by hand
LESSON = "08_why_several_heads"
X_TEST, Y_TEST = tasks.make_lookup_data(500, seed=2, offsets=(1, -1))     # the lesson's held-out sequences
SHIFT = np.roll(np.eye(8), 1, axis=1)                                     # row s: a 1 in column s + 1


def _pad(M):
    """A (17, d_k) matrix whose letter rows (0-7) are M, the rest zeros."""
    W = np.zeros((17, M.shape[1]))
    W[:M.shape[0]] = M
    return W


def _distractor(design):
    """The one-head control's mean weight on the distractor: the prediction a right answer gives."""
    from selfattention.checks.lesson08 import _design_data, one_head_distractor_weight

    X, _, role = _design_data()
    return one_head_distractor_weight([np.asarray(W, dtype=float) for W in design], X, role)


def _design_hidden(*design):
    guess = design[4] if len(design) > 4 else (_distractor(design)["right"] if all(
        W is not None and np.shape(W)[:1] == (17,) for W in design) else None)
    return hidden_test_passes(LESSON, "l08-design-test", X_test=X_TEST, y_test=Y_TEST,
                              W_Q1=design[0], W_K1=design[1], W_Q2=design[2], W_K2=design[3],
                              one_head_distractor=guess)


def _design_check(design):
    """The check on four matrices, with the right prediction unless a fifth item gives one."""
    if len(design) > 4:
        return check_two_head_design(*design)
    try:
        guess = _distractor(design)["right"]
    except Exception:
        guess = None
    return check_two_head_design(*design, guess)


Q_NEXT, Q_PREV, K_LETTER = _pad(4 * SHIFT), _pad(4 * SHIFT.T), _pad(np.eye(8))
DIGIT_KEYS = np.vstack([np.zeros((8, 8)), np.eye(8), np.zeros((1, 8))])
FLAG_QUERY = np.vstack([np.zeros((16, 8)), np.ones((1, 8))])
DESIGN = {
    "swapped": "your heads are swapped",
    "same": "both heads put their largest weight on",
    "own letter": "finds the query's own letter s",
    "sign": "SMALLEST weight",
    "digit keys": "keys read only the digit features",
    "even": "weights are even",
    "digit rows": "those rows read the digit features",
    "no wrap next": "after H comes A, so the query of H must match the key of A",
    "no wrap previous": "before A comes H, so the query of A must match the key of H",
    "letters missed": "with query letter C or D; there it weights most the distractor item",
    "tie": "is tied with another item's",
    "shift 2": "head 1 looks at letter s + 2 for every query letter s",
}
NO_WRAP = np.eye(8, k=1)                                 # row s: s + 1, but H asks for nothing
MISSED = 4 * SHIFT.copy()
MISSED[2:4] = 4 * np.eye(8)[2:4]                         # C and D ask for themselves
TIED = SHIFT.copy()
TIED[4] = np.eye(8)[3] + np.eye(8)[5]                    # E asks for D and F alike
DESIGN_WRONG = {
    "swapped": (Q_PREV, K_LETTER, Q_NEXT, K_LETTER),                 # previous in head 1, next in head 2
    "same": (Q_NEXT, K_LETTER, Q_NEXT, K_LETTER),                    # one design typed twice
    "own letter": (_pad(4 * np.eye(8)), K_LETTER, Q_PREV, K_LETTER),  # query s matches key s
    "sign": (-Q_NEXT, K_LETTER, Q_PREV, K_LETTER),                   # largest where it should be smallest
    "digit keys": (Q_NEXT, DIGIT_KEYS, Q_PREV, K_LETTER),            # keys from the digit rows
    "even": (FLAG_QUERY, K_LETTER, Q_PREV, K_LETTER),                # the query reads only the flag
    "digit rows": (Q_NEXT, K_LETTER + DIGIT_KEYS, Q_PREV, K_LETTER),  # keys read the digit as well
    "no wrap next": (_pad(4 * NO_WRAP), K_LETTER, Q_PREV, K_LETTER),  # forgets that after H comes A
    "no wrap previous": (Q_NEXT, K_LETTER, _pad(4 * NO_WRAP.T), K_LETTER),  # forgets that before A comes H
    "letters missed": (_pad(MISSED), K_LETTER, Q_PREV, K_LETTER),     # right for six query letters of eight
    "tie": (_pad(4 * TIED), K_LETTER, Q_PREV, K_LETTER),              # one query row asks for two letters
    "shift 2": (_pad(np.roll(np.eye(8), 2, axis=1)), K_LETTER, Q_PREV, K_LETTER),   # head 1 looks at s + 2
}


@pytest.mark.parametrize("key", sorted(DESIGN_WRONG))
def test_design_mistake_is_named(key):
    _names_only(_message(_design_check, DESIGN_WRONG[key]), key, DESIGN)
    assert not _design_hidden(*DESIGN_WRONG[key])


def test_design_misses_name_the_query_letters_and_what_the_head_does_there():
    """The message for a design right on most sequences follows from what it does on the wrong ones: the
    query letters where they occur, and the head's weights there (never a role it gets right)."""
    text = _message(_design_check, DESIGN_WRONG["no wrap next"])
    assert "wrong digit on 42 of the 500" in text and "all of them with query letter H;" in text, text
    assert "weights are all equal" in text and "H asks for A" in text, text
    text = _message(_design_check, DESIGN_WRONG["no wrap previous"])
    assert "all of them with query letter A;" in text and "A asks for H" in text, text
    both = (_pad(4 * NO_WRAP), K_LETTER, _pad(4 * NO_WRAP.T), K_LETTER)    # the wrap left out in both heads
    text = _message(_design_check, both)
    assert text.startswith("head 2 gives the wrong digit on 51"), text
    assert "head 1 gives the wrong digit on 42" in text, text
    assert not _design_hidden(*both)


def test_design_right_answers_pass(capsys):
    angle = 2 * np.pi * np.arange(8) / 8
    circle = np.stack([np.cos(angle), np.sin(angle)], axis=1)
    on_circle = (_pad(3 * np.roll(circle, -1, axis=0)), _pad(circle), _pad(3 * np.roll(circle, 1, axis=0)),
                 _pad(circle))
    for design in ((Q_NEXT, K_LETTER, Q_PREV, K_LETTER), on_circle,
                   (_pad(2 * SHIFT), K_LETTER, _pad(2 * SHIFT.T), K_LETTER)):   # scale 2: a clear margin
        _right_answer_passes(_design_check, design, capsys)
        assert _design_hidden(*design)


def test_design_the_one_head_control_is_reported(capsys):
    _design_check((Q_NEXT, K_LETTER, Q_PREV, K_LETTER))
    text = capsys.readouterr().out
    assert "in ONE head" in text and "both right on 0.000 and leaves 1.000 tied" in text, text


def test_design_shapes_are_explained():
    def told(W_Q1):
        return _message(_design_check, (W_Q1, K_LETTER, Q_PREV, K_LETTER))

    assert "transposed" in told(Q_NEXT.T)
    assert "17 features" in told(Q_NEXT[:16])
    assert "same width" in told(Q_NEXT[:, :4])
    assert "still empty" in told(None)


def test_design_one_head_typed_twice_fails_both():
    """The shortcut: one working head typed twice (one lookup, not two) is refused by the check and the hidden
    test."""
    shortcut = (Q_NEXT, K_LETTER, Q_NEXT, K_LETTER)
    assert "both heads put their largest weight on" in _message(_design_check, shortcut)
    assert not _design_hidden(*shortcut)


# ---------------------------------------------------------------- exercise 3: predict a grouped-query layer
GQA = {
    "all heads": ("that is W_K with all 32 heads", (4096, 4096), 41943040),
    "transposed": ("it is transposed", (1024, 4096), 41943040),
    "one key head": ("that is one key head", (4096, 128), 41943040),
    "d_model wide": ("each key head is counted d_model wide", (4096, 32768), 41943040),
    "plain count": ("that is the plain layer", (4096, 1024), 4 * 4096 ** 2),
    "one of K, V": ("only one of W_K and W_V", (4096, 1024), 2 * 4096 ** 2 + 4096 * 1024),
    "W_O missing": ("(W_Q or W_O) is missing", (4096, 1024), 4096 ** 2 + 2 * 4096 * 1024),
    "all shrunk": ("W_Q and W_O are shrunk too", (4096, 1024), 4 * 4096 * 1024),
    "biases": ("biases are counted", (4096, 1024), 2 * 4096 ** 2 + 2 * 4096 * 1024 + 2 * 4096 + 2 * 1024),
    "multi-query": ("that is multi-query attention", (4096, 1024), 2 * 4096 ** 2 + 2 * 4096 * 128),
    "only K, V": ("only W_K and W_V are counted", (4096, 1024), 2 * 4096 * 1024),
    "32 layers": ("that is 32 layers' worth", (4096, 1024), 32 * (2 * 4096 ** 2 + 2 * 4096 * 1024)),
}
GQA_PHRASES = {k: v[0] for k, v in GQA.items()}


def _gqa_hidden(shape, count):
    return hidden_test_passes(LESSON, "l08-gqa-test", shape_W_K=shape, gqa_params=count)


@pytest.mark.parametrize("key", sorted(GQA))
def test_gqa_mistake_is_named(key):
    _, shape, count = GQA[key]
    _names_only(_message(lambda a: check_gqa_prediction(*a), (shape, count)), key, GQA_PHRASES)
    assert not _gqa_hidden(shape, count)


def test_gqa_right_answers_pass(capsys):
    d_model, h, g = 4096, 32, 8
    for answer in (((4096, 1024), 41_943_040),
                   ([d_model, g * d_model // h], 2 * d_model ** 2 + 2 * d_model * g * (d_model // h)),
                   (np.array([4096, 1024]), np.int64(41943040)),
                   ((4096 / 1, 8 * 4096 / 32), 2 * 4096 ** 2 + 2 * 4096 * 8 * 4096 / 32)):   # whole floats
        _right_answer_passes(lambda a: check_gqa_prediction(*a), answer, capsys)
        assert _gqa_hidden(*answer)


def test_gqa_non_integers_are_refused():
    """d_model / h written with / gives floats; a fractional number is no shape or count and fails both."""
    for shape, count, phrase in (((4096.7, 1024), 41943040, "not whole"),
                                 ((4096, 1024), 41943040.5, "is not a whole number")):
        assert phrase in _message(lambda a: check_gqa_prediction(*a), (shape, count))
        assert not _gqa_hidden(shape, count)


def test_gqa_an_unlisted_count_gets_the_recipe_and_blanks_are_told():
    text = _message(lambda a: check_gqa_prediction(*a), ((4096, 1024), 12345))
    assert "add W_Q (4096 x 4096)" in text and not any(p in text for p in GQA_PHRASES.values())
    assert "still empty" in _message(lambda a: check_gqa_prediction(*a), (None, None))
    assert "gqa_params is still empty" in _message(lambda a: check_gqa_prediction(*a), ((4096, 1024), None))
    assert not _gqa_hidden((4096, 1024), 12345)


def _trained_design(seed):
    """The shortcut: W_Q, W_K copied from a trained two-head model (lesson 08's training), head on the next
    letter first."""
    from selfattention.checks.lesson08 import _model, design_results

    torch.manual_seed(seed)
    model = _model(seed=seed)
    data = (*tasks.make_lookup_data(2000, seed=1, offsets=(1, -1)), X_TEST, Y_TEST)
    tasks.train(model, data, steps=160, every=160)
    mats = [h.W_query.weight.detach().numpy().T.astype(float) for h in model.attention.heads]
    keys = [h.W_key.weight.detach().numpy().T.astype(float) for h in model.attention.heads]
    design = (mats[0], keys[0], mats[1], keys[1])
    if design_results(*design)["top_role"][0].mean() > 0.5:      # head 1 looks at the previous letter: swap
        design = (mats[1], keys[1], mats[0], keys[0])
    return design


@pytest.mark.parametrize("seed", [0, 1])
def test_design_trained_weights_are_refused(seed):
    """Copying a trained model's W_Q, W_K (which read digits as well as letters) is refused by the check and
    the hidden test: the task asks for heads that look by letter only."""
    design = _trained_design(seed)
    assert "those rows read the digit features" in _message(_design_check, design)
    assert not _design_hidden(*design)


def test_design_circle_control_names_the_item_it_weights_most(capsys):
    angle = 2 * np.pi * np.arange(8) / 8
    circle = np.stack([np.cos(angle), np.sin(angle)], axis=1)
    _design_check((_pad(4 * np.roll(circle, -1, axis=0)), _pad(circle), _pad(4 * np.roll(circle, 1, axis=0)),
                   _pad(circle)))
    text = capsys.readouterr().out
    assert "both right on 0.000" in text and "most weight on the distractor item" in text
    assert "even blend" not in text


# ---------------------------------------------------------------- exercise 2: the one-head prediction
_ANGLE = 2 * np.pi * np.arange(8) / 8
_CIRCLE = np.stack([np.cos(_ANGLE), np.sin(_ANGLE)], axis=1)
CIRCLE_DESIGN = (_pad(4 * np.roll(_CIRCLE, -1, axis=0)), _pad(_CIRCLE), _pad(4 * np.roll(_CIRCLE, 1, axis=0)),
                 _pad(_CIRCLE))                                       # the lesson's head 1 and its head 2
PREDICTION = {
    "even": "a third each is the even-blend guess",
    "next item": "mean weight on the item under the next letter",
    "no scale": "leaves out the division by sqrt(d_k1 + d_k2)",
    "two heads": "mean of the two heads' own weights",
    "scale": "square root of ONE head's d_k",
    "with query": "adds the query token's own weight",
    "items only": "the four items only; the query token is a key too",
    "items only, no scale": "the four items only, of scores not divided",
    "quarter": "a quarter each is an even split over the four items",
    "fifth": "a fifth each is an even split over the five positions",
    "empty": "one_head_distractor is still empty",
    "recipe": "ONE head scores each key by q1 . k1 + q2 . k2",
}


@pytest.mark.parametrize("key", sorted(PREDICTION))
def test_prediction_mistake_is_named(key):
    values = _distractor(CIRCLE_DESIGN)
    guess = {"empty": None, "recipe": 0.9}.get(key, values.get(key))
    _names_only(_message(_design_check, (*CIRCLE_DESIGN, guess)), key, PREDICTION)
    assert not _design_hidden(*CIRCLE_DESIGN, guess)


def test_prediction_right_answers_pass(capsys):
    right = _distractor(CIRCLE_DESIGN)["right"]
    assert abs(right - 0.34) < 0.01
    for guess in (right, round(right, 4), np.float32(round(right, 4))):
        _right_answer_passes(_design_check, (*CIRCLE_DESIGN, guess), capsys)
        assert _design_hidden(*CIRCLE_DESIGN, guess)


def test_prediction_the_values_of_the_slips():
    """The lesson's design: 0.345 is right; a third, 0.150 (next item) and 0.420 (no 1/sqrt(d_k)) are
    the slips."""
    values = _distractor(CIRCLE_DESIGN)
    assert abs(values["right"] - 0.345) < 0.001 and abs(values["next item"] - 0.150) < 0.001
    assert abs(values["no scale"] - 0.420) < 0.001
    assert abs(values["items only"] - 0.526) < 0.001          # the softmax over the items, the query left out


def test_prediction_a_guess_of_the_two_head_weight_fails_both():
    """The shortcut: the two heads' own weight on the distractor, without building the one head."""
    guess = _distractor(CIRCLE_DESIGN)["two heads"]
    assert "mean of the two heads' own weights" in _message(_design_check, (*CIRCLE_DESIGN, guess))
    assert not _design_hidden(*CIRCLE_DESIGN, guess)


# ---------------------------------------------------------------- slips found in review
def _fixed_head(k):
    """Always silences head k, whatever `head` says."""
    def silence(model, head, X):
        return _zero_value(model, k, X)
    return silence


def _fixed_block(k):
    """Always zeroes columns k * 16 to k * 16 + 16 of the concatenation, whatever `head` says."""
    def silence(model, head, X):
        return _zero_block(model, k, X, 16)
    return silence


@pytest.mark.parametrize("silence", [_fixed_head(0), _fixed_head(1), _fixed_block(0), _fixed_block(1)])
def test_silence_ignoring_the_head_argument_is_named(silence):
    text = _message(check_silence_head, silence)
    assert "it ignores the `head` argument" in text and "you silenced the other head" not in text, text
    assert not _silence_hidden(silence)


def test_silence_returning_the_weights_is_named():
    def weights(model, head, X):
        with torch.no_grad():
            return model(X)[1]
    text = _message(check_silence_head, weights)
    assert "the attention weights (model(X)[1]" in text and "Return the logits, model(X)[0]" in text, text
    assert not _silence_hidden(weights)


# the design of one-hot letters, scaled queries: head 1's query of s is 5 times the one-hot of s + 1
ONE_HOT_DESIGN = (_pad(5 * np.roll(np.eye(8), 1, axis=1)), _pad(np.eye(8)),
                  _pad(5 * np.roll(np.eye(8), -1, axis=1)), _pad(np.eye(8)))


def test_prediction_a_slip_near_the_right_value_is_named():
    """The two heads' own mean weight (0.1014) lies 0.0012 from the right 0.1002: outside the 0.0005 a value
    computed to 4 decimals needs, so it is named, at 4 decimals and rounded to 3."""
    values = _distractor(ONE_HOT_DESIGN)
    assert abs(values["right"] - 0.1002) < 1e-4 and abs(values["two heads"] - 0.1014) < 1e-4
    for guess in (values["two heads"], round(values["two heads"], 4), round(values["two heads"], 3)):
        _names_only(_message(_design_check, (*ONE_HOT_DESIGN, guess)), "two heads", PREDICTION)
        assert not _design_hidden(*ONE_HOT_DESIGN, guess)


def test_prediction_right_to_4_decimals_passes(capsys):
    right = _distractor(ONE_HOT_DESIGN)["right"]
    for guess in (right, round(right, 4)):
        _right_answer_passes(_design_check, (*ONE_HOT_DESIGN, guess), capsys)
        assert _design_hidden(*ONE_HOT_DESIGN, guess)


WEAK = 0.01 * SHIFT                                        # right answers by argmax, nearly even weights


def test_design_nearly_even_heads_are_refused():
    """The shortcut: one-hot letters scaled 0.01 get both answers by argmax with ~0.2 on each target; the
    one-head control is then ~uniform and a fifth would pass without computing. A clear margin is required."""
    design = (_pad(WEAK), K_LETTER, _pad(WEAK.T), K_LETTER)
    for guess in (0.2, None):
        text = _message(_design_check, design if guess is None else (*design, guess))
        assert "barely singles out" in text and "head 1" in text, text
    assert not _design_hidden(*design, 0.2)


def test_prediction_the_nearest_slip_is_named():
    """Distractor plus query token (0.2004) is named as such, not as 'a fifth each' (0.2)."""
    values = _distractor(ONE_HOT_DESIGN)
    text = _message(_design_check, (*ONE_HOT_DESIGN, values["with query"]))
    _names_only(text, "with query", PREDICTION)
    _names_only(_message(_design_check, (*ONE_HOT_DESIGN, 0.2)), "fifth", PREDICTION)
    assert not _design_hidden(*ONE_HOT_DESIGN, values["with query"])


@pytest.mark.parametrize("count", [41.94, 42, 41.943040, 0.0419])
def test_gqa_a_count_in_millions_is_named(count):
    text = _message(lambda a: check_gqa_prediction(*a), ((4096, 1024), count))
    unit = "billions" if count < 1 else "millions"
    assert f"not {unit}" in text and "not a whole number" not in text, text
    assert not _gqa_hidden((4096, 1024), count)


def _zeroed_copy(model, head):
    silent = copy.deepcopy(model)
    with torch.no_grad():
        silent.attention.heads[head].W_value.weight.zero_()
    return silent


def _scaled(model, head, X):
    """The head's output halved, not zeroed."""
    with torch.no_grad():
        outs = [h(X)[0] for h in model.attention.heads]
        outs[head] = outs[head] * 0.5
        return model.readout(torch.cat(outs, dim=-1)[:, -1]).view(len(X), 2, -1)


def _other_X(model, head, X):
    with torch.no_grad():
        return _zeroed_copy(model, head)(X_TEST)[0]


def _every_position(model, head, X):
    silent = _zeroed_copy(model, head)
    with torch.no_grad():
        return silent.readout(silent.attention(X)[0]).view(len(X), X.shape[1], 2, -1)


@pytest.mark.parametrize(("silence", "phrase"), [
    (_scaled, "multiplied the head's output by 0.50"),
    (_other_X, "it runs the model on another array"),
    (_every_position, "logits for every position"),
])
def test_silence_more_slips_are_named(silence, phrase):
    text = _message(check_silence_head, silence)
    assert phrase in text and not any(p in text for p in SILENCE.values()), text
    assert not _silence_hidden(silence)


def test_prediction_a_percentage_is_named():
    right = _distractor(ONE_HOT_DESIGN)["right"]
    text = _message(_design_check, (*ONE_HOT_DESIGN, 100 * right))
    assert "looks like a percentage" in text, text
    assert not _design_hidden(*ONE_HOT_DESIGN, 100 * right)


# ---------------------------------------------------------------- exercise 2: a one-hot design
_ROLL = np.roll(np.eye(8), 1, axis=1)
ONE_HOT4_DESIGN = (_pad(4 * _ROLL), _pad(np.eye(8)), _pad(4 * _ROLL.T), _pad(np.eye(8)))   # one-hot letters


def test_prediction_one_hot_design_right_passes_and_the_two_head_slip_is_named(capsys):
    """The one-hot design's right value is 0.1185; the two heads' own weight (0.1233) is named."""
    values = _distractor(ONE_HOT4_DESIGN)
    assert abs(values["right"] - 0.1185) < 0.0005 and abs(values["two heads"] - 0.1233) < 0.0005
    for guess in (values["right"], round(values["right"], 4)):
        _right_answer_passes(_design_check, (*ONE_HOT4_DESIGN, guess), capsys)
        assert _design_hidden(*ONE_HOT4_DESIGN, guess)
    for guess in (values["two heads"], 0.123):
        _names_only(_message(_design_check, (*ONE_HOT4_DESIGN, guess)), "two heads", PREDICTION)
        assert not _design_hidden(*ONE_HOT4_DESIGN, guess)


@pytest.mark.parametrize("key", ["scale", "next item", "with query", "even", "quarter"])
def test_prediction_one_hot_design_slips_outside_the_tolerance_are_named(key):
    values = _distractor(ONE_HOT4_DESIGN)
    for guess in (values[key], round(values[key], 3)):
        _names_only(_message(_design_check, (*ONE_HOT4_DESIGN, guess)), key, PREDICTION)
        assert not _design_hidden(*ONE_HOT4_DESIGN, guess)


def test_prediction_one_hot_design_far_from_any_slip_gets_the_recipe():
    """0.105 is outside the tolerance and more than 0.001 from every slip: the recipe, no slip named."""
    _names_only(_message(_design_check, (*ONE_HOT4_DESIGN, 0.105)), "recipe", PREDICTION)
    assert not _design_hidden(*ONE_HOT4_DESIGN, 0.105)


# ---------------------------------------------------------------- slips that give the same value
def test_gqa_counting_h_over_g_heads_names_both_slips_that_give_its_number():
    """h / g = 4 key/value heads of d_k give 2 d^2 + 2 d 512, the same number as counting only one of W_K, W_V
    (d^2 + d^2 + d 1024): the message names both."""
    count = 2 * 4096 ** 2 + 2 * 4096 * 4 * 128
    text = _message(lambda a: check_gqa_prediction(*a), ((4096, 1024), count))
    assert "two slips give this" in text and "only one of W_K and W_V" in text, text
    assert "h / g = 4 key/value heads" in text, text
    assert not _gqa_hidden((4096, 1024), count)


def test_gqa_shape_of_h_over_g_heads_names_both_slips_that_give_it():
    text = _message(lambda a: check_gqa_prediction(*a), ((4096, 4 * 128), 41943040))
    assert "two slips give this" in text and "d_model / g columns" in text, text
    assert "h / g = 4 key heads" in text, text
    assert not _gqa_hidden((4096, 512), 41943040)


def _readout_rows(model, head, X):
    """The head's block zeroed in the readout's rows (its outputs), not its columns (its inputs)."""
    silent = copy.deepcopy(model)
    with torch.no_grad():
        silent.readout.weight[head * 16:(head + 1) * 16] = 0
        return silent(X)[0]


def test_silence_zeroing_readout_rows_is_named_as_rows_not_columns():
    text = _message(check_silence_head, _readout_rows)
    _names_only(text, "both", SILENCE)
    assert "its rows are the 16 logits" in text, text
    assert "columns head * 16 to head * 16 + 16, not rows" in text, text
    assert not _silence_hidden(_readout_rows)
