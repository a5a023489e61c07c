"""Lesson 11's checks name each typical mistake, and only that one, when a learner makes it.

Every function below is a wrong answer as a learner would write it; the check's message must name that mistake
(a phrase of its explanation) and no other named mistake; two right answers must get ``Correct:``; a shortcut
that skips what the exercise teaches must not.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from mistakes import hidden_test_passes
from mistakes import message as _message
from mistakes import names_only as _names_only

from selfattention.checks import (
    check_first_layer_input,
    check_held_out_senses,
    check_sentence_embedding,
)

LESSON = "11_real_transformer"

# ---------------------------------------------------------------- exercise 1: what enters layer 0
FIRST = {
    "no type": "the token-type embedding is missing",
    "type 1": "you added type_table[1]",
    "no position": "the position embedding is missing",
    "positions from 1": "the positions start at 1",
    "no word": "the word embedding is missing",
    "positions by id": "looked up by token id",
    "no layernorm": "the LayerNorm is missing",
    "no gamma beta": "gamma and beta are not applied",
    "gamma beta swapped": "gamma and beta are swapped",
    "axis 0": "normalised over the tokens (axis 0)",
    "ddof 1": "ddof=1",
    "no eps": "the eps inside the square root is missing",
    "torch eps": "eps = 1e-5, PyTorch's default",
    "rmsnorm": "that is RMSNorm",
    "centred only": "centred (mean subtracted) but not divided",
    "no beta": "beta is missing",
    "no gamma": "gamma is missing",
    "norm before position and type": "applied to the word rows alone",
    "norm before position": "the position rows were added after the LayerNorm",
    "type rows summed": "type_table.sum(0) adds both",
    "whole array": "over the whole (T, d_model) array",
    "whole type table": "the whole type_table",
    "var without keepdims": "one number per token",
    "each table normed": "each table's rows were normalised before they were summed",
    "each table standardised": "each table's rows were normalised (mean and variance)",
    "beta inside gamma": "beta was added before the multiplication by gamma",
    "beta multiplied": "multiplied by beta instead of adding it",
    "type after norm": "the token-type row was added after the LayerNorm",
    "positions reversed": "the position rows are in reverse order",
    "variance of word rows": "the variance was taken from the word rows alone",
    "variance not std": "divided by the variance, var + eps, instead of the standard deviation",
    "type rows averaged": "type_table.mean(0) is the mean vector of both token-type rows",
    "own eps": "ignores its eps argument",
    "eps outside the root": "eps belongs inside the square root",
}


def _first(ids, word_table, position_table, type_table, gamma, beta, eps=1e-12, *, word=True, start=0,
           token_type=0, norm=True, affine=True, axis=-1, ddof=0, use_eps=True, centred_only=False):
    T = len(ids)
    h = np.stack([word_table[i] if word else np.zeros(word_table.shape[1]) for i in ids])
    if start is not None:
        h = h + position_table[start:start + T]
    if token_type is not None:
        h = h + type_table[token_type]
    if not norm:
        return h
    mu = h.mean(axis=axis, keepdims=True)
    if centred_only:
        return gamma * (h - mu) + beta
    var = ((h - mu) ** 2).sum(axis=axis, keepdims=True) / (h.shape[axis] - ddof)
    out = (h - mu) / np.sqrt(var + eps if use_eps else var)
    return gamma * out + beta if affine else out


def _first_positions_by_id(ids, word_table, position_table, type_table, gamma, beta, eps=1e-12):
    h = word_table[ids] + position_table[ids] + type_table[0]
    mu, var = h.mean(axis=-1, keepdims=True), h.var(axis=-1, keepdims=True)
    return gamma * (h - mu) / np.sqrt(var + eps) + beta


def _first_torch(ids, word_table, position_table, type_table, gamma, beta, eps=1e-12):
    """eps=None leaves out F.layer_norm's eps: its default, 1e-5."""
    h = torch.from_numpy(word_table[ids] + position_table[: len(ids)] + type_table[0])
    g, b = torch.from_numpy(gamma), torch.from_numpy(beta)
    if eps is None:
        return torch.nn.functional.layer_norm(h, h.shape[-1:], g, b).numpy()
    return torch.nn.functional.layer_norm(h, h.shape[-1:], g, b, eps).numpy()


FIRST_WRONG = {
    "no type": lambda *a: _first(*a, token_type=None),
    "type 1": lambda *a: _first(*a, token_type=1),
    "no position": lambda *a: _first(*a, start=None),
    "positions from 1": lambda *a: _first(*a, start=1),
    "no word": lambda *a: _first(*a, word=False),
    "positions by id": lambda ids, w, p, *rest: _first_positions_by_id(ids, w, p, *rest),
    "no layernorm": lambda *a: _first(*a, norm=False),
    "no gamma beta": lambda *a: _first(*a, affine=False),
    "gamma beta swapped": lambda ids, w, p, t, gamma, beta, *rest: _first(ids, w, p, t, beta, gamma, *rest),
    "axis 0": lambda *a: _first(*a, axis=0),
    "ddof 1": lambda *a: _first(*a, ddof=1),
    "no eps": lambda *a: _first(*a, use_eps=False),
    "torch eps": lambda *a: _first_torch(*a[:6], eps=None),            # F.layer_norm's default eps, 1e-5
    "rmsnorm": lambda ids, w, p, t, gamma, beta, eps=1e-12: _rms(w[ids] + p[:len(ids)] + t[0], gamma, beta,
                                                                 eps),
    "centred only": lambda *a: _first(*a, use_eps=False, centred_only=True),
    "no beta": lambda ids, w, p, t, gamma, beta, eps=1e-12: _first(ids, w, p, t, gamma, beta, eps) - beta,
    "no gamma": lambda ids, w, p, t, gamma, beta, eps=1e-12: _layer_norm(
        w[ids] + p[:len(ids)] + t[0], 1.0, beta, eps),
    "norm before position and type": lambda ids, w, p, t, gamma, beta, eps=1e-12: (
        _layer_norm(w[ids], gamma, beta, eps) + p[:len(ids)] + t[0]),
    "norm before position": lambda ids, w, p, t, gamma, beta, eps=1e-12: (
        _layer_norm(w[ids] + t[0], gamma, beta, eps) + p[np.arange(len(ids))]),
    "type rows summed": lambda ids, w, p, t, gamma, beta, eps=1e-12: _layer_norm(
        w[ids] + p[:len(ids)] + t.sum(0), gamma, beta, eps),
    "whole array": lambda ids, w, p, t, gamma, beta, eps=1e-12: _whole_array(w[ids] + p[:len(ids)] + t[0],
                                                                             gamma, beta, eps),
    "whole type table": lambda ids, w, p, t, gamma, beta, eps=1e-12: _layer_norm(w[ids] + p[:len(ids)] + t,
                                                                                 gamma, beta, eps),
    "var without keepdims": lambda ids, w, p, t, gamma, beta, eps=1e-12: _no_keepdims(
        w[ids] + p[:len(ids)] + t[0], gamma, beta, eps),
    "each table normed": lambda ids, w, p, t, gamma, beta, eps=1e-12: (
        _layer_norm(w[ids], gamma, beta, eps) + _layer_norm(p[:len(ids)], gamma, beta, eps)
        + _layer_norm(np.tile(t[0], (len(ids), 1)), gamma, beta, eps)),
    "each table standardised": lambda ids, w, p, t, gamma, beta, eps=1e-12: gamma * (
        _layer_norm(w[ids], 1.0, 0.0, eps) + _layer_norm(p[:len(ids)], 1.0, 0.0, eps)
        + _layer_norm(np.tile(t[0], (len(ids), 1)), 1.0, 0.0, eps)) + beta,
    "beta inside gamma": lambda ids, w, p, t, gamma, beta, eps=1e-12: gamma * (
        _layer_norm(w[ids] + p[:len(ids)] + t[0], 1.0, 0.0, eps) + beta),
    "beta multiplied": lambda ids, w, p, t, gamma, beta, eps=1e-12: (
        _layer_norm(w[ids] + p[:len(ids)] + t[0], gamma, 0.0, eps) * beta),
    "type after norm": lambda ids, w, p, t, gamma, beta, eps=1e-12: (
        _layer_norm(w[ids] + p[:len(ids)], gamma, beta, eps) + t[0]),
    "positions reversed": lambda ids, w, p, t, gamma, beta, eps=1e-12: _layer_norm(
        w[ids] + p[:len(ids)][::-1] + t[0], gamma, beta, eps),
    "variance of word rows": lambda ids, w, p, t, gamma, beta, eps=1e-12: _word_rows_variance(
        w[ids] + p[:len(ids)] + t[0], w[ids], gamma, beta, eps),
    "variance not std": lambda ids, w, p, t, gamma, beta, eps=1e-12: _by_variance(
        w[ids] + p[:len(ids)] + t[0], gamma, beta, eps),
    "type rows averaged": lambda ids, w, p, t, gamma, beta, eps=1e-12: _layer_norm(
        w[ids] + p[:len(ids)] + t.mean(0), gamma, beta, eps),
    # the Annotated Transformer's form: (h - mean) / (std + eps); alike at eps = 1e-12, apart at eps = 0.5
    "eps outside the root": lambda ids, w, p, t, gamma, beta, eps=1e-12: _std_plus_eps(
        w[ids] + p[:len(ids)] + t[0], gamma, beta, eps),
    # an eps of the learner's own, written into the formula: the check's cases with eps=1e-12 cannot see 1e-12
    "own eps": lambda ids, w, p, t, gamma, beta, eps=1e-12: _layer_norm(w[ids] + p[:len(ids)] + t[0], gamma,
                                                                        beta, 1e-12),
}


@pytest.mark.parametrize("own", [1e-6, 1e-9, 1e-3])
def test_first_input_any_eps_of_its_own_is_named(own):
    def answer(ids, w, p, t, gamma, beta, eps=1e-12):
        return _layer_norm(w[ids] + p[:len(ids)] + t[0], gamma, beta, own)

    _names_only(_message(check_first_layer_input, answer), "own eps", FIRST)


def _by_variance(h, gamma, beta, eps):
    """The centred sum divided by its variance plus eps, without the square root."""
    mu = h.mean(axis=-1, keepdims=True)
    return gamma * (h - mu) / (((h - mu) ** 2).mean(axis=-1, keepdims=True) + eps) + beta


def test_first_input_near_miss_prints_the_size_of_the_difference():
    """An answer a little off everywhere (eps + 1e-3 where eps is asked, so it still uses the argument) gets
    the size of its largest difference, not only two values that print alike."""
    def near(ids, w, p, t, gamma, beta, eps=1e-12):
        return _layer_norm(w[ids] + p[:len(ids)] + t[0], gamma, beta, eps + 1e-3)

    msg = _message(check_first_layer_input, near)
    assert "differ from the right ones by at most" in msg and not any(p in msg for p in FIRST.values()), msg


def _std_plus_eps(h, gamma, beta, eps):
    """The centred sum divided by its standard deviation plus eps (eps outside the square root)."""
    mu = h.mean(axis=-1, keepdims=True)
    return gamma * (h - mu) / (np.sqrt(((h - mu) ** 2).mean(axis=-1, keepdims=True)) + eps) + beta


def _word_rows_variance(h, words, gamma, beta, eps):
    """The sum centred by its own mean, divided by the standard deviation of the word rows."""
    spread = np.sqrt(words.var(axis=-1, keepdims=True) + eps)
    return gamma * (h - h.mean(axis=-1, keepdims=True)) / spread + beta



def _layer_norm(h, gamma, beta, eps):
    mu, var = h.mean(axis=-1, keepdims=True), h.var(axis=-1, keepdims=True)
    return gamma * (h - mu) / np.sqrt(var + eps) + beta


def _whole_array(h, gamma, beta, eps):
    return gamma * (h - h.mean()) / np.sqrt(h.var() + eps) + beta


def _no_keepdims(h, gamma, beta, eps):
    return gamma * (h - h.mean(axis=-1, keepdims=True)) / np.sqrt(h.var(axis=-1) + eps) + beta


def _hidden_fails(grade_id, **answer):
    """The hidden test rejects the answer: an assertion fails, or the answer itself raises (a broadcast)."""
    try:
        return not hidden_test_passes(LESSON, grade_id, **answer)
    except ValueError:
        return True


def _rms(h, gamma, beta, eps):
    return gamma * h / np.sqrt((h**2).mean(axis=-1, keepdims=True) + eps) + beta


@pytest.mark.parametrize("key", ["torch eps", "rmsnorm", "centred only", "no beta", "no gamma",
                                 "norm before position and type", "norm before position", "type rows summed",
                                 "whole array", "whole type table", "var without keepdims",
                                 "each table normed", "each table standardised", "beta inside gamma",
                                 "beta multiplied", "type after norm", "positions reversed",
                                 "variance of word rows", "variance not std", "type rows averaged",
                                 "eps outside the root", "own eps"])
def test_first_input_mistake_fails_the_hidden_test(key):
    assert _hidden_fails("l11-input-test", first_layer_input=FIRST_WRONG[key])


def test_first_input_right_answers_pass_the_hidden_test():
    assert hidden_test_passes(LESSON, "l11-input-test", first_layer_input=lambda *a: _first(*a))
    assert hidden_test_passes(LESSON, "l11-input-test", first_layer_input=_first_torch)


@pytest.mark.parametrize("key", sorted(FIRST_WRONG))
def test_first_input_mistake_is_named(key):
    _names_only(_message(check_first_layer_input, FIRST_WRONG[key]), key, FIRST)


def test_first_input_right_answers_pass(capsys):
    check_first_layer_input(lambda *a: _first(*a))
    check_first_layer_input(_first_torch)
    out = capsys.readouterr().out
    assert out.count("Correct:") == 2, out


def test_first_input_shortcut_through_the_model_fails():
    """Asking the real model's embedding block ignores the tables the function is given."""
    from selfattention import data

    block = data.load_pretrained().model.embeddings

    def shortcut(ids, *tables):
        with torch.no_grad():
            return block(torch.as_tensor(np.asarray(ids))[None])[0].numpy()

    assert "first_layer_input" in _message(check_first_layer_input, shortcut)


# ---------------------------------------------------------------- exercise 2: held-out senses
SENSES = {
    "not held out": "was not held out",
    "distance": "Euclidean distance",
    "dot": "compares dot products",
    "lowest": "the LOWEST cosine",
    "mean cosine": "averages the cosines",
    "unit centroid": "scaled to unit length before the mean",
    "one nearest": "1-nearest neighbour",
    "median": "the median of the vectors",
    "senses 0 and 1": "only senses 0 and 1 were compared",
    "labels returned": "returned the labels it was given",
}


def _unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _senses(vectors, labels, *, hold_out=True, score="cosine", units=False, pick=np.argmax):
    out = []
    for i, v in enumerate(vectors):
        rest = [j for j in range(len(vectors)) if j != i or not hold_out]
        scores = []
        for k in sorted(set(labels.tolist())):
            members = vectors[[j for j in rest if labels[j] == k]]
            if score == "mean cosine":
                scores.append(np.mean(_unit(members) @ _unit(v)))
                continue
            c = (_unit(members) if units else members).mean(axis=0)
            scores.append({"cosine": _unit(c) @ _unit(v), "dot": c @ v,
                           "distance": -np.linalg.norm(c - v)}[score])
        out.append(int(pick(scores)))
    return np.array(out)


def _senses_torch(vectors, labels):
    V, y = torch.as_tensor(vectors, dtype=torch.float64), torch.as_tensor(labels)
    guesses = []
    for i in range(len(V)):
        keep = torch.arange(len(V)) != i
        centroids = torch.stack([V[keep & (y == k)].mean(0) for k in range(int(y.max()) + 1)])
        guesses.append(int(torch.nn.functional.cosine_similarity(centroids, V[i][None]).argmax()))
    return guesses


SENSES_WRONG = {
    "not held out": lambda v, y: _senses(v, y, hold_out=False),
    "distance": lambda v, y: _senses(v, y, score="distance"),
    "dot": lambda v, y: _senses(v, y, score="dot"),
    "lowest": lambda v, y: _senses(v, y, pick=np.argmin),
    "mean cosine": lambda v, y: _senses(v, y, score="mean cosine"),
    "unit centroid": lambda v, y: _senses(v, y, units=True),
    "one nearest": lambda v, y: _nearest_sentence(v, y),
    "median": lambda v, y: _median_centroid(v, y),
    "senses 0 and 1": lambda v, y: _two_senses(v, y),
    "labels returned": lambda v, y: np.asarray(y).copy(),       # a shortcut: no prediction at all
}


def _two_senses(vectors, labels):
    """The right rule with the senses hard-coded to (0, 1), as if there were always two."""
    vectors, labels = np.asarray(vectors, dtype=float), np.asarray(labels)
    out = []
    for i in range(len(vectors)):
        keep = np.arange(len(vectors)) != i
        centres = [vectors[keep & (labels == k)].mean(0) for k in (0, 1)]
        out.append(int(np.argmax([_unit(c) @ _unit(vectors[i]) for c in centres])))
    return np.array(out)


def test_senses_hard_coded_to_two_fails_the_hidden_test():
    """The hidden test has a three-sense case too, so it agrees with the visible check."""
    assert _hidden_fails("l11-senses-test", held_out_senses=_two_senses)


def _shifted_hold_out(vectors, labels, shift):
    """The right rule, but the sentence left out is i + shift (an off-by-one), not i."""
    vectors, labels = np.asarray(vectors, dtype=float), np.asarray(labels)
    out = []
    for i in range(len(vectors)):
        keep = np.arange(len(vectors)) != i + shift
        centres = [vectors[keep & (labels == k)].mean(0) for k in np.unique(labels)]
        out.append(int(np.argmax([_unit(c) @ _unit(vectors[i]) for c in centres])))
    return np.array(out)


@pytest.mark.parametrize("shift", [-1, 1])
def test_senses_off_by_one_hold_out_is_named(shift):
    msg = _message(check_held_out_senses, lambda v, y: _shifted_hold_out(v, y, shift))
    assert f"is i {'-' if shift < 0 else '+'} 1, not i" in msg, msg
    assert not any(phrase in msg for phrase in SENSES.values()), msg


@pytest.mark.parametrize("shift", [-1, 1])
def test_senses_off_by_one_hold_out_fails_the_hidden_test(shift):
    assert _hidden_fails("l11-senses-test", held_out_senses=lambda v, y: _shifted_hold_out(v, y, shift))


def test_senses_right_answer_passes_the_hidden_test():
    assert hidden_test_passes(LESSON, "l11-senses-test", held_out_senses=lambda v, y: _senses(v, y))


def _nearest_sentence(vectors, labels):
    U = _unit(np.asarray(vectors, dtype=float))
    similar = U @ U.T
    np.fill_diagonal(similar, -np.inf)
    return np.asarray(labels)[similar.argmax(axis=1)]


def _median_centroid(vectors, labels):
    out = []
    for i in range(len(vectors)):
        keep = np.arange(len(vectors)) != i
        centres = [np.median(vectors[keep & (labels == k)], axis=0) for k in range(labels.max() + 1)]
        out.append(int(np.argmax([_unit(c) @ _unit(vectors[i]) for c in centres])))
    return np.array(out)


@pytest.mark.parametrize("key", sorted(SENSES_WRONG))
def test_senses_mistake_is_named(key):
    _names_only(_message(check_held_out_senses, SENSES_WRONG[key]), key, SENSES)


def test_senses_right_answers_pass(capsys):
    check_held_out_senses(lambda v, y: _senses(v, y))
    check_held_out_senses(_senses_torch)
    out = capsys.readouterr().out
    assert out.count("Correct:") == 2, out


def test_senses_shortcut_returning_the_labels_fails():
    """Returning the true labels skips the test the exercise asks for: the check names that shortcut."""
    msg = _message(check_held_out_senses, lambda v, y: np.asarray(y).tolist())
    _names_only(msg, "labels returned", SENSES)


# ---------------------------------------------------------------- exercise 3: sentence embedding
EMBEDDING = {
    "padding averaged": "the padding was averaged in",
    "not unit": "not unit length",
    "l1": "the L1 norm",
    "cls": "that is the [CLS] vector",
    "special dropped": "were left out of the mean; they are real",
    "columns cut": "by cutting the first and last columns",
    "tokens normalised": "each token was normalised before the mean",
    "max pooling": "that is max pooling",
    "sum not unit": "a multiple of the right one: the direction is right",
    "normalised over sentences": "normalised across the sentences (axis=0)",
    "norm without keepdims": "the length lost it",
    "count without keepdims": "the count of real tokens lost it",
    "mask without new axis": "the mask needs a last axis of length 1",
    "norm without axis": "one length for the whole batch",
    "sep dropped": "[SEP] was left out of the mean",
    "cls dropped": "[CLS] was left out of the mean",
    "batch flattened": "one vector for the whole batch",
    "pooled over sentences": "over axis 0, the",
    "mask inverted": "the mask is inverted",
    "zero count": "a division by 0",
}


def _mean_real(hidden, mask):
    m = mask[..., None].astype(float)
    return (hidden * m).sum(axis=1) / m.sum(axis=1)


def _drop_special(mask):
    m = mask.astype(float).copy()
    for row in m:
        real = np.nonzero(row)[0]
        row[real[0]] = row[real[-1]] = 0
    return m


EMBEDDING_WRONG = {
    "padding averaged": lambda h, m: _unit(h.mean(axis=1)),
    "not unit": lambda h, m: _mean_real(h, m),
    "l1": lambda h, m: _mean_real(h, m) / np.abs(_mean_real(h, m)).sum(axis=1, keepdims=True),
    "cls": lambda h, m: _unit(h[:, 0, :]),
    "special dropped": lambda h, m: _unit(_mean_real(h, _drop_special(m))),
    "columns cut": lambda h, m: _unit(_mean_real(h[:, 1:-1], m[:, 1:-1])),
    "tokens normalised": lambda h, m: _unit(_mean_real(_unit(h), m)),
    "max pooling": lambda h, m: _unit(np.where(m[..., None] == 1, h, -np.inf).max(axis=1)),
    "sum not unit": lambda h, m: (h * m[..., None]).sum(axis=1),
    "normalised over sentences": lambda h, m: _mean_real(h, m) / np.linalg.norm(_mean_real(h, m), axis=0,
                                                                                 keepdims=True),
    "norm without keepdims": lambda h, m: _mean_real(h, m) / np.linalg.norm(_mean_real(h, m), axis=-1),
    "count without keepdims": lambda h, m: _unit((h * m[..., None]).sum(axis=1) / m.sum(axis=1)),
    "mask without new axis": lambda h, m: _unit((h * m).sum(axis=1) / m.sum(axis=1, keepdims=True)),
    "norm without axis": lambda h, m: _mean_real(h, m) / np.linalg.norm(_mean_real(h, m)),
    "sep dropped": lambda h, m: _unit(_mean_real(h, _drop_last_real(m))),
    "cls dropped": lambda h, m: _unit(_mean_real(h[:, 1:], m[:, 1:])),
    "batch flattened": lambda h, m: _unit(h[m.astype(bool)].mean(0)),
    "pooled over sentences": lambda h, m: _unit((h * m[..., None]).sum(axis=0)),
    "mask inverted": lambda h, m: _unit(_mean_real(h, 1 - m)),
    "zero count": lambda h, m: _unit((h * m[..., None]).sum(axis=1) / (m == 0).sum(axis=1, keepdims=True)),
}


def _drop_last_real(mask):
    m = mask.astype(float).copy()
    m[np.arange(len(m)), m.sum(axis=1).astype(int) - 1] = 0
    return m


@pytest.mark.parametrize("key", ["normalised over sentences", "norm without keepdims",
                                 "count without keepdims", "mask without new axis", "norm without axis",
                                 "sep dropped", "cls dropped", "batch flattened",
                                 "pooled over sentences", "mask inverted", "zero count"])
def test_embedding_mistake_fails_the_hidden_test(key):
    assert _hidden_fails("l11-embedding-test", sentence_embedding=EMBEDDING_WRONG[key])


def test_embedding_row_multiples_never_mention_softmax():
    """Rows that are multiples of the right ones get a message about length, not about softmax."""
    for wrong in (lambda h, m: (h * m[..., None]).sum(axis=1),
                  lambda h, m: 3.0 * _unit(_mean_real(h, m)),
                  lambda h, m: _mean_real(h, m) / _mean_real(h, m).sum(axis=1, keepdims=True)):
        assert "softmax" not in _message(check_sentence_embedding, wrong)


def test_embedding_same_factor_for_every_row_is_named_as_length():
    """Every row 3 times the right one: the message names the length, with the factor."""
    msg = _message(check_sentence_embedding, lambda h, m: 3.0 * _unit(_mean_real(h, m)))
    assert EMBEDDING["sum not unit"] in msg and "3, 3 times" in msg, msg


def test_embedding_nan_rows_are_not_called_a_scaling_mistake():
    """A NaN row (the mask inverted, or a 0/0) is named as such, never as rows that are multiples."""
    for wrong in (EMBEDDING_WRONG["mask inverted"], lambda h, m: np.full((h.shape[0], h.shape[2]), np.nan)):
        msg = _message(check_sentence_embedding, wrong)
        assert "NaN" in msg and EMBEDDING["sum not unit"] not in msg, msg


@pytest.mark.parametrize("key", sorted(EMBEDDING_WRONG))
def test_embedding_mistake_is_named(key):
    _names_only(_message(check_sentence_embedding, EMBEDDING_WRONG[key]), key, EMBEDDING)


def test_embedding_right_answers_pass(capsys):
    check_sentence_embedding(lambda h, m: _unit(_mean_real(h, m)))
    def with_torch(h, m):
        h, m = torch.from_numpy(h), torch.from_numpy(m).double()
        return torch.nn.functional.normalize((h * m[..., None]).sum(1) / m.sum(1, keepdim=True), dim=-1)

    check_sentence_embedding(with_torch)
    out = capsys.readouterr().out
    assert out.count("Correct:") == 2, out
