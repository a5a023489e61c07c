"""Lesson 09's checks name each typical mistake, and only that one, when a learner makes it.

Every function below is a wrong answer as a learner would write it; the check's message must name that mistake
(a phrase of its explanation) and no other named mistake; two different right answers must get ``Correct:``;
a shortcut that skips what the exercise teaches must not pass.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from mistakes import hidden_test_passes
from mistakes import message as _message
from mistakes import names_only as _names_only
from mistakes import right_answer_passes as _passes

import selfattention as sa
from selfattention.checks import check_decoder_inputs, check_safe_weights, check_shift_matrix

# ---------------------------------------------------------------- exercise 1: a left-padded decoder mask
DECODER = {
    "right padding": "that is right padding",
    "no causal": "the causal part is missing: every query",
    "no padding": "the padding is not masked",
    "queries": "masked on the queries (rows)",
    "or": "combined with OR",
    "wrong way": "the causal part points the wrong way",
    "one too few": "one real token too few",
    "one too many": "one padding token too many",
    "diagonal": "the diagonal is masked too",
    "not boolean": "a mask is boolean",
    "pad self": "the padding queries may attend to themselves",
    "lengths as pads": "lengths[b] is the number of REAL tokens",
    "arange positions": "shifted by the number of padding tokens",
    "positions from 1": "the positions start at 1",
    "positions down": "the positions count down",
    "swapped": "the two are swapped",
    "pads from max": "the padding was counted from lengths.max()",
    "shared offset": "one offset was subtracted for the whole batch",
    "no [:, None]": "give the per-sequence one shape (batch, 1)",
    "padding mask only": "that of a padding mask alone",
    "float positions": "positions are integers",
    "one mask": "one mask for the whole batch",
    "triu and queries": "two slips: np.triu was used where",
    "counted padding": "counted the padding instead of the real tokens",
    "cumsum axis 0": "the running count went down the batch (axis 0)",
    "positions lengths as pads": "np.arange(T) - lengths[:, None] subtracts",
    "no batch axis": "with the batch axis missing",
    "positions None": "returned None as its positions",
    "no causal, both": "masked on both queries and keys",
    "swapaxes": "its last two axes swapped",
    ".T": "reverses ALL the axes",
    "batch and queries": "its axes are (query, sequence, key)",
    "positions .T": "transposed: .T put the positions first",
}


def _real(lengths, T, shift=0):
    return np.arange(T)[None, :] >= T - np.asarray(lengths)[:, None] + shift


def _positions(lengths, T):
    return np.maximum(np.arange(T)[None, :] - (T - np.asarray(lengths))[:, None], 0)


def _right_mask(lengths, T):
    return sa.causal_mask(T) & _real(lengths, T)[:, None, :]


def _with_positions(mask_fn):
    return lambda lengths, T: (mask_fn(lengths, T), _positions(lengths, T))


DECODER_WRONG = {
    "right padding": lambda lengths, T: sa.causal_mask(T) & sa.padding_mask(np.asarray(lengths), T),
    "no causal": lambda lengths, T: np.repeat(_real(lengths, T)[:, None, :], T, axis=1),
    "no padding": lambda lengths, T: np.stack([sa.causal_mask(T)] * len(lengths)),
    "queries": lambda lengths, T: sa.causal_mask(T) & _real(lengths, T)[:, :, None],
    "or": lambda lengths, T: sa.causal_mask(T) | _real(lengths, T)[:, None, :],
    "wrong way": lambda lengths, T: np.triu(np.ones((T, T), dtype=bool)) & _real(lengths, T)[:, None, :],
    "one too few": lambda lengths, T: sa.causal_mask(T) & _real(lengths, T, 1)[:, None, :],
    "one too many": lambda lengths, T: sa.causal_mask(T) & _real(lengths, T, -1)[:, None, :],
    "diagonal": lambda lengths, T: np.tril(np.ones((T, T), dtype=bool), -1) & _real(lengths, T)[:, None, :],
    "not boolean": lambda lengths, T: (sa.causal_mask(T) & _real(lengths, T)[:, None, :]).astype(int),
    "pad self": lambda lengths, T: (_right_mask(lengths, T)
                                    | (np.eye(T, dtype=bool) & ~_real(lengths, T)[:, :, None])),
    "lengths as pads": lambda lengths, T: (sa.causal_mask(T)
                                           & (np.arange(T) >= np.asarray(lengths)[:, None])[:, None]),
}
DECODER_WRONG = {key: _with_positions(fn) for key, fn in DECODER_WRONG.items()}
DECODER_WRONG["arange positions"] = lambda lengths, T: (_right_mask(lengths, T),
                                                        np.tile(np.arange(T), (len(lengths), 1)))
DECODER_WRONG["positions from 1"] = lambda lengths, T: (_right_mask(lengths, T),
                                                        _real(lengths, T).cumsum(axis=1))
DECODER_WRONG["positions down"] = lambda lengths, T: (_right_mask(lengths, T),
                                                      np.tile(np.arange(T)[::-1], (len(lengths), 1)))
DECODER_WRONG["pads from max"] = lambda lengths, T: (
    sa.causal_mask(T) & (np.arange(T) >= (max(lengths) - np.asarray(lengths))[:, None])[:, None],
    np.arange(T) - (max(lengths) - np.asarray(lengths))[:, None])
DECODER_WRONG["shared offset"] = lambda lengths, T: (   # the longest sequence's offset for every row
    _right_mask(lengths, T), np.tile(np.arange(T) - (T - max(lengths)), (len(lengths), 1)))
DECODER_WRONG["swapped"] = lambda lengths, T: (_positions(lengths, T), _right_mask(lengths, T))
DECODER_WRONG["no [:, None]"] = lambda lengths, T: (   # (T,) - (batch,): a broadcasting error
    _right_mask(lengths, T), np.arange(T) - (T - lengths))
DECODER_WRONG["padding mask only"] = lambda lengths, T: (   # (batch, 1, T), as sa.padding_mask returns
    _real(lengths, T)[:, None, :], _positions(lengths, T))
DECODER_WRONG["float positions"] = lambda lengths, T: (_right_mask(lengths, T), _positions(lengths, T) * 1.0)
DECODER_WRONG["triu and queries"] = lambda lengths, T: (   # both slips at once: the transpose of the answer
    np.triu(np.ones((T, T), dtype=bool))[None] & _real(lengths, T)[:, :, None], _positions(lengths, T))
DECODER_WRONG["counted padding"] = lambda lengths, T: (_right_mask(lengths, T),
                                                       np.cumsum(~_real(lengths, T), 1))
DECODER_WRONG["cumsum axis 0"] = lambda lengths, T: (_right_mask(lengths, T),
                                                     np.cumsum(_real(lengths, T), axis=0) - 1)
DECODER_WRONG["positions lengths as pads"] = lambda lengths, T: (
    _right_mask(lengths, T), np.arange(T)[None, :] - np.asarray(lengths)[:, None])
DECODER_WRONG["no batch axis"] = lambda lengths, T: (sa.causal_mask(T) & _real(lengths, T),
                                                     np.cumsum(_real(lengths, T), 1) - 1)
DECODER_WRONG["no causal, both"] = lambda lengths, T: (
    _real(lengths, T)[:, :, None] & _real(lengths, T)[:, None, :], _positions(lengths, T))
DECODER_WRONG["positions None"] = lambda lengths, T: (_right_mask(lengths, T), None)
DECODER_WRONG["one mask"] = lambda lengths, T: (   # the longest sequence's mask for every row
    sa.causal_mask(T) & (np.arange(T) >= T - max(lengths)), _positions(lengths, T))


DECODER_WRONG["swapaxes"] = lambda lengths, T: (np.swapaxes(_right_mask(lengths, T), 1, 2),
                                                _positions(lengths, T))
DECODER_WRONG[".T"] = lambda lengths, T: (_right_mask(lengths, T).T, _positions(lengths, T))
DECODER_WRONG["batch and queries"] = lambda lengths, T: (_right_mask(lengths, T).swapaxes(0, 1),
                                                         _positions(lengths, T))
DECODER_WRONG["positions .T"] = lambda lengths, T: (_right_mask(lengths, T), _positions(lengths, T).T)


@pytest.mark.parametrize("key", sorted(DECODER_WRONG))
def test_decoder_mistake_is_named(key):
    _names_only(_message(check_decoder_inputs, DECODER_WRONG[key]), key, DECODER)


def _decoder_loops(lengths, T):
    mask = np.zeros((len(lengths), T, T), dtype=bool)
    for b, length in enumerate(lengths):
        for i in range(T):
            for j in range(T):
                mask[b, i, j] = j <= i and j >= T - length
    return mask, mask.any(axis=1).cumsum(axis=1) - 1


def _decoder_flip(lengths, T):
    """Left padding is right padding read backwards: flip the positions of sa.padding_mask."""
    keys = sa.padding_mask(np.asarray(lengths), T)[:, :, ::-1]
    return sa.causal_mask(T) & keys, np.arange(T) - (T - np.asarray(lengths))[:, None]


def test_decoder_right_answers_pass(capsys):
    _passes(check_decoder_inputs, _decoder_loops, capsys)
    _passes(check_decoder_inputs, _decoder_flip, capsys)

    def both_sides(lengths, T):                      # padding masked on queries AND keys; positions unclipped
        real = _real(lengths, T)
        return (sa.causal_mask(T) & real[:, :, None] & real[:, None, :],
                np.arange(T) - (T - np.asarray(lengths))[:, None])

    _passes(check_decoder_inputs, both_sides, capsys)
    assert hidden_test_passes("09_positions_and_masks", "l09-decoder-test", decoder_inputs=both_sides)


def test_decoder_shortcut_fails():
    """The lesson's right-padded decoder mask, pasted unchanged, does not pass for a left-padded batch."""
    def pasted(lengths, T):
        return sa.causal_mask(T) & sa.padding_mask(lengths, T), np.tile(np.arange(T), (len(lengths), 1))

    assert "Correct" not in _message(check_decoder_inputs, pasted)


def _decoder_max_length(lengths, T):
    """The batch's longest sequence taken for T: right whenever T = max(lengths), wrong when T is larger."""
    return _right_mask(lengths, int(np.max(lengths))), _positions(lengths, int(np.max(lengths)))


@pytest.mark.parametrize("key", ["pads from max", "shared offset"])
def test_decoder_named_slips_fail_the_hidden_test(key):
    assert not hidden_test_passes("09_positions_and_masks", "l09-decoder-test",
                                  decoder_inputs=DECODER_WRONG[key])


@pytest.mark.parametrize("key", ["padding mask only", "float positions", "one mask"])
def test_decoder_new_slips_fail_the_hidden_test(key):
    assert not hidden_test_passes("09_positions_and_masks", "l09-decoder-test",
                                  decoder_inputs=DECODER_WRONG[key])


def test_decoder_forgotten_axis_blames_the_positions_and_fails_the_hidden_test():
    msg = _message(check_decoder_inputs, DECODER_WRONG["no [:, None]"])
    assert msg.startswith("decoder_inputs raised ValueError") and "the mask" not in msg.split(":")[0], msg
    assert "(T - lengths)[:, None]" in msg
    with pytest.raises(ValueError):
        hidden_test_passes("09_positions_and_masks", "l09-decoder-test",
                           decoder_inputs=DECODER_WRONG["no [:, None]"])


def test_decoder_wrong_mask_message_reads_as_the_mask_returned():
    msg = _message(check_decoder_inputs, DECODER_WRONG["diagonal"])
    assert msg.startswith("the mask decoder_inputs returned is not right yet"), msg


def test_decoder_max_length_fails_check_and_hidden_test():
    assert "Correct" not in _message(check_decoder_inputs, _decoder_max_length)
    assert not hidden_test_passes("09_positions_and_masks", "l09-decoder-test",
                                  decoder_inputs=_decoder_max_length)
    assert hidden_test_passes("09_positions_and_masks", "l09-decoder-test", decoder_inputs=_decoder_loops)


# ---------------------------------------------------------------- exercise 2: the shift matrix
SHIFT = {
    "transpose": "moves the encoding BACK by delta positions: it is [[cos, -sin], [sin, cos]]",
    "sign": "a sign is wrong",
    "k not k theta": "the angle is delta, not delta * theta",
    "theta only": "the angle is theta, whatever delta is",
    "first-row sign": "the first row has a minus sign",
    "degrees": "the angle was read as degrees",
    "np.degrees": "the angle was converted to degrees (np.degrees)",
    "delta plus theta": "the angle is delta + theta",
    "reading order": "the formula's reading order",
    "rows swapped": "the rows are swapped",
    "sin cos swapped": "sin(delta theta) and cos(delta theta) are swapped: in",
    "sin cos swapped both rows": "are swapped in both rows",
    "abs k": "negative delta is handled wrong",
}


def _m(a, b, c, d):
    return np.array([[a, b], [c, d]])


SHIFT_WRONG = {
    "transpose": lambda k, w: _m(np.cos(k * w), -np.sin(k * w), np.sin(k * w), np.cos(k * w)),
    "sign": lambda k, w: _m(np.cos(k * w), np.sin(k * w), np.sin(k * w), np.cos(k * w)),
    "k not k theta": lambda k, w: _m(np.cos(k), np.sin(k), -np.sin(k), np.cos(k)),
    "theta only": lambda k, w: _m(np.cos(w), np.sin(w), -np.sin(w), np.cos(w)),
    "reading order": lambda k, w: _m(np.cos(k * w), np.sin(k * w), np.cos(k * w), -np.sin(k * w)),
    "rows swapped": lambda k, w: _m(-np.sin(k * w), np.cos(k * w), np.cos(k * w), np.sin(k * w)),
    "sin cos swapped": lambda k, w: _m(np.sin(k * w), np.cos(k * w), -np.cos(k * w), np.sin(k * w)),
    "sin cos swapped both rows": lambda k, w: _m(np.sin(k * w), np.cos(k * w), np.cos(k * w), -np.sin(k * w)),
    "first-row sign": lambda k, w: _m(np.cos(k * w), -np.sin(k * w), -np.sin(k * w), np.cos(k * w)),
    "degrees": lambda k, w: _m(np.cos(np.deg2rad(k * w)), np.sin(np.deg2rad(k * w)),
                               -np.sin(np.deg2rad(k * w)), np.cos(np.deg2rad(k * w))),
    "np.degrees": lambda k, w: _m(np.cos(np.degrees(k * w)), np.sin(np.degrees(k * w)),
                                  -np.sin(np.degrees(k * w)), np.cos(np.degrees(k * w))),
    "delta plus theta": lambda k, w: _m(np.cos(k + w), np.sin(k + w), -np.sin(k + w), np.cos(k + w)),
    "abs k": lambda k, w: _m(np.cos(abs(k) * w), np.sin(abs(k) * w), -np.sin(abs(k) * w), np.cos(abs(k) * w)),
}


@pytest.mark.parametrize("key", sorted(SHIFT_WRONG))
def test_shift_mistake_is_named(key):
    _names_only(_message(check_shift_matrix, SHIFT_WRONG[key]), key, SHIFT)


def _shift_power(k, theta):
    """M_1 multiplied by itself k times (its inverse for negative k): one position at a time."""
    one = np.array([[np.cos(theta), np.sin(theta)], [-np.sin(theta), np.cos(theta)]])
    return np.linalg.matrix_power(one, k) if k >= 0 else np.linalg.matrix_power(one.T, -k)


def test_shift_row_vector_answer_gets_the_row_vector_hint():
    """A learner who builds M for pair @ M (the course's row convention) returns M_k's transpose."""
    def row_vector(k, w):
        c, s = np.cos(k * w), np.sin(k * w)
        M_column = np.array([[c, s], [-s, c]])       # [sin, cos] at p + k = M_column @ [sin, cos] at p
        return M_column.T                           # so that pair @ M gives the pair at p + k

    msg = _message(check_shift_matrix, row_vector)
    _names_only(msg, "transpose", SHIFT)
    assert "a matrix built for a row, pair @ M" in msg


def _shift_closed(k, theta):
    """The lesson's words: the angle-addition formulas with a = p theta, b = k theta, read row by row."""
    c, s = np.cos(k * theta), np.sin(k * theta)
    return np.array([[c, s], [-s, c]])


def test_shift_right_answers_pass(capsys):
    _passes(check_shift_matrix, _shift_power, capsys)
    _passes(check_shift_matrix, _shift_closed, capsys)
    for right in (_shift_power, _shift_closed):
        assert hidden_test_passes("09_positions_and_masks", "l09-shift-test", shift_matrix=right)


def _pairs(positions, theta):
    p = np.asarray(positions, dtype=float)
    return np.stack([np.sin(p * theta), np.cos(p * theta)])              # (2, positions): columns


def _shift_solved(k, theta):
    """The shortcut: solve M @ B = A from the pairs at positions 0 and 1, M = A @ inv(B)."""
    return _pairs([k, k + 1], theta) @ np.linalg.inv(_pairs([0, 1], theta))


def _shift_solve(k, theta):
    """The same fit with np.linalg.solve (M^T = solve(B^T, A^T))."""
    return np.linalg.solve(_pairs([0, 1], theta).T, _pairs([k, k + 1], theta).T).T


def _shift_lstsq(k, theta):
    """Least squares over many positions."""
    return np.linalg.lstsq(_pairs(range(10), theta).T, _pairs(np.arange(10) + k, theta).T, rcond=None)[0].T


def _shift_from_encoding(k, theta):
    """Reads the package's encoding (theta of pair 0 is 1; only right there) and fits with pinv."""
    pe = sa.sinusoidal_positional_encoding(k + 2, 2)[:, [0, 1]].T        # (2, k + 2): columns are positions
    return pe[:, k:k + 2] @ np.linalg.pinv(pe[:, :2])


def _shift_by_hand(k, theta):
    """The same fit with the 2x2 inverse written out, no solver named: only theta = 0 betrays it."""
    (a, b), (c, d) = _pairs([0, 1], theta)
    inverse = np.array([[d, -b], [-c, a]]) / (a * d - b * c)
    return _pairs([k, k + 1], theta) @ inverse


@pytest.mark.parametrize("fit", [_shift_solved, _shift_solve, _shift_lstsq, _shift_from_encoding])
def test_shift_numerical_fit_is_refused_by_check_and_hidden_test(fit):
    msg = _message(check_shift_matrix, fit)
    assert "fits M_delta numerically" in msg and "instead of deriving it" in msg
    assert not any(phrase in msg for phrase in SHIFT.values()), msg
    assert not hidden_test_passes("09_positions_and_masks", "l09-shift-test", shift_matrix=fit)


def test_shift_fit_by_hand_fails_at_theta_zero():
    msg = _message(check_shift_matrix, _shift_by_hand)
    assert "for theta = 0 (a pair that never turns" in msg
    assert not any(phrase in msg for phrase in SHIFT.values()), msg
    assert not hidden_test_passes("09_positions_and_masks", "l09-shift-test", shift_matrix=_shift_by_hand)


def test_shift_textbook_rotation_names_the_sin_cos_order():
    """The textbook [[c, -s], [s, c]] turns (cos, sin) forward; the course's pair is (sin, cos)."""
    def textbook(delta, theta):
        c, s = np.cos(delta * theta), np.sin(delta * theta)
        return np.array([[c, -s], [s, c]])

    msg = _message(check_shift_matrix, textbook)
    assert "the textbook rotation" in msg and "the column is (sin, cos)" in msg, msg
    assert len(msg) < 450, msg
    assert not hidden_test_passes("09_positions_and_masks", "l09-shift-test", shift_matrix=textbook)


def _shift_by_hand_guarded(delta, theta):
    """The two-point fit by hand, guarded: the identity where the two pairs are singular."""
    (a, b), (c, d) = _pairs([0, 1], theta)
    det = a * d - b * c
    if abs(det) < 1e-12:
        return np.eye(2)
    return _pairs([delta, delta + 1], theta) @ (np.array([[d, -b], [-c, a]]) / det)


def _shift_by_hand_far(delta, theta):
    """The fit from positions 0 and 3, guarded the same way."""
    (a, b), (c, d) = _pairs([0, 3], theta)
    det = a * d - b * c
    if abs(det) < 1e-12:
        return np.eye(2)
    return _pairs([delta, delta + 3], theta) @ (np.array([[d, -b], [-c, a]]) / det)


@pytest.mark.parametrize("fit", [_shift_by_hand_guarded, _shift_by_hand_far])
def test_shift_guarded_fit_by_hand_fails_at_theta_pi(fit):
    """At theta = pi every pair lies on one line: no two-point fit exists, and M_delta is -I for odd delta."""
    msg = _message(check_shift_matrix, fit)
    assert "for delta = 3, theta = pi shift_matrix returned [[1.0, 0.0], [0.0, 1.0]]" in msg, msg
    assert not any(phrase in msg for phrase in SHIFT.values()), msg
    assert not hidden_test_passes("09_positions_and_masks", "l09-shift-test", shift_matrix=fit)


def test_shift_fit_in_a_helper_is_refused():
    """The fit hidden in a helper of the learner's is found too."""
    def shift_matrix(k, theta):
        return _shift_solved(k, theta)

    assert "fits M_delta numerically" in _message(check_shift_matrix, shift_matrix)


def test_shift_shortcut_fails():
    """A matrix that maps one position's pair onto the other (a scaled projection) is not one for every p."""
    def one_position(k, theta):
        a = np.array([np.sin(theta), np.cos(theta)])
        b = np.array([np.sin((1 + k) * theta), np.cos((1 + k) * theta)])
        return np.outer(b, a) / (a @ a)

    assert "Correct" not in _message(check_shift_matrix, one_position)


# ---------------------------------------------------------------- exercise 3: safe masked weights
SAFE = {
    "nan": "came out NaN",
    "uniform": "gets equal weights 1/",
    "additive 1e9": "the softmax of that row's own scores",
    "float32": "computed in another precision",
    "float32 and back": "right only to about 7 digits",
    "float16 and back": "right only to about 3 digits",
    "after softmax": "the mask was applied after the softmax",
    "inverted": "the mask is read the wrong way round",
    "soft": "small but not exactly 0",
    "numpy": "not a torch tensor",
    "detached": "carries no gradient",
    "in place": "an in-place change",
    "soft then mask": "took part of the weight",
    "overflow": "exp(score) overflows",
    "float mask": "ADDED to the scores",
    "times mask": "and exp(0) = 1 still gets weight",
    "times mask then mask": "multiplying the weights by the mask afterwards",
    "additive inf": "an additive -inf mask",
    "discarded nan": "still flows back",
    "renormalised": "no masked score dominates",
    "wrong axis": "not over the keys",
    "transposed mask": "the mask was read transposed",
    "flattened": "at once (a reshape or flatten before it)",
}


def _inplace(s, m):
    w = torch.softmax(s.masked_fill(~m, float("-inf")), dim=-1)
    w[torch.isnan(w)] = 0.0
    return w


SAFE_WRONG = {
    "nan": lambda s, m: torch.softmax(s.masked_fill(~m, float("-inf")), dim=-1),
    "uniform": lambda s, m: torch.softmax(s.masked_fill(~m, -1e9), dim=-1),
    "after softmax": lambda s, m: torch.softmax(s, dim=-1) * m,
    "inverted": lambda s, m: torch.nan_to_num(torch.softmax(s.masked_fill(m, float("-inf")), dim=-1)),
    "soft": lambda s, m: torch.nan_to_num(torch.softmax(s - 20.0 * ~m, dim=-1)) * m.any(-1, keepdim=True),
    "numpy": lambda s, m: sa.softmax(np.where(m.numpy(), s.detach().numpy(), -np.inf)),
    "detached": lambda s, m: torch.from_numpy(sa.softmax(np.where(m.numpy(), s.detach().numpy(), -np.inf))),
    "in place": _inplace,
    "soft then mask": lambda s, m: torch.softmax(s.masked_fill(~m, -10.0), dim=-1) * m,
    "overflow": lambda s, m: torch.exp(s) * m / (torch.exp(s) * m).sum(-1, keepdim=True).clamp_min(1e-30),
    # a float attn_mask in F.scaled_dot_product_attention is added to the scores: mask.float() masks nothing
    "float mask": lambda s, m: torch.softmax(s + m.float().to(s.dtype), dim=-1),
    "times mask": lambda s, m: torch.softmax(s * m, dim=-1),
    "times mask then mask": lambda s, m: torch.softmax(s * m, -1) * m,
    "wrong axis": lambda s, m: torch.nan_to_num(torch.softmax(s.masked_fill(~m, float("-inf")), dim=0)),
    # the NaN of an empty row replaced, but the mask ADDED as 0 / -inf: NaN gradients reach the masked scores
    "additive inf": lambda s, m: torch.nan_to_num(
        torch.softmax(s + torch.zeros_like(s).masked_fill(~m, float("-inf")), dim=-1)),
    # -1e9 ADDED: a row with no allowed key moves as a whole, and keeps the softmax of its own scores
    "additive 1e9": lambda s, m: torch.softmax(s + (~m) * -1e9, dim=-1),
    "float32": lambda s, m: torch.nan_to_num(torch.softmax(s.float().masked_fill(~m, float("-inf")), dim=-1)),
    "float32 and back": lambda s, m: (torch.softmax(s.float().masked_fill(~m, -1e9), -1) * m).to(s.dtype),
    "float16 and back": lambda s, m: (torch.softmax(s.half().masked_fill(~m, -6e4), -1) * m).to(s.dtype),
    "transposed mask": lambda s, m: torch.nan_to_num(
        torch.softmax(s.masked_fill(~m.transpose(-1, -2), float("-inf")), dim=-1), nan=0.0),
    "flattened": lambda s, m: torch.nan_to_num(
        torch.softmax(s.masked_fill(~m, float("-inf")).reshape(-1), dim=0).reshape(s.shape), nan=0.0),
}


@pytest.mark.parametrize("key", sorted(SAFE_WRONG))
def test_safe_mistake_is_named(key):
    _names_only(_message(check_safe_weights, SAFE_WRONG[key]), key, SAFE)


def test_safe_right_answers_pass(capsys):
    _passes(check_safe_weights, lambda s, m: torch.nan_to_num(torch.softmax(s.masked_fill(~m, float("-inf")),
                                                                            dim=-1), nan=0.0), capsys)
    def smallest_number(s, m):
        return torch.where(m, torch.softmax(s.masked_fill(~m, torch.finfo(s.dtype).min), dim=-1), 0.0)

    _passes(check_safe_weights, smallest_number, capsys)


def test_safe_additive_inf_mask_is_named_and_fails_hidden_test():
    """nan_to_num after the softmax fixes the weights, not the gradient of an additive mask."""
    def where_added(s, m):
        w = torch.softmax(s + torch.where(m, 0.0, float("-inf")), dim=-1)
        return torch.where(torch.isnan(w), 0.0, w)

    for wrong in (SAFE_WRONG["additive inf"], where_added):
        _names_only(_message(check_safe_weights, wrong), "additive inf", SAFE)
        assert not hidden_test_passes("09_positions_and_masks", "l09-safe-test", safe_weights=wrong)


def _overflow_in_discarded_branch(s, m):
    """A hand-written softmax: exp(s - the allowed max) overflows where torch.where throws it away."""
    top = torch.where(m, s, torch.finfo(s.dtype).min).amax(dim=-1, keepdim=True)
    e = torch.where(m, torch.exp(s - top), 0.0)
    return e / e.sum(dim=-1, keepdim=True).clamp_min(1e-30)


def _renormalise_then_nan_to_num(s, m):
    w = torch.softmax(s, dim=-1) * m
    return torch.nan_to_num(w / w.sum(dim=-1, keepdim=True))


def _exp_minus_logsumexp(s, m):
    """exp without subtracting the row max: exp(s - logsumexp of the allowed scores), guarded by where."""
    lse = torch.logsumexp(s.masked_fill(~m, float("-inf")), dim=-1, keepdim=True)
    return torch.where(m, torch.exp(s - lse), 0.0)


@pytest.mark.parametrize("wrong", [_overflow_in_discarded_branch, _renormalise_then_nan_to_num,
                                   _exp_minus_logsumexp])
def test_safe_discarded_nan_is_named_and_fails_hidden_test(wrong):
    """Right weights, NaN gradients, no additive mask: the message names the general mechanism."""
    _names_only(_message(check_safe_weights, wrong), "discarded nan", SAFE)
    assert not hidden_test_passes("09_positions_and_masks", "l09-safe-test", safe_weights=wrong)


def test_safe_renormalised_is_named_and_fails_hidden_test():
    """softmax over every score, zero, renormalise: wrong once a masked score dominates (float32, gap 200)."""
    def wrong(s, m):
        w = torch.softmax(s, dim=-1) * m
        return w / w.sum(dim=-1, keepdim=True).clamp_min(1e-30)

    _names_only(_message(check_safe_weights, wrong), "renormalised", SAFE)
    assert not hidden_test_passes("09_positions_and_masks", "l09-safe-test", safe_weights=wrong)


def test_safe_masked_fill_then_nan_to_num_passes_hidden_test():
    right = lambda s, m: torch.nan_to_num(torch.softmax(s.masked_fill(~m, float("-inf")), dim=-1))  # noqa: E731
    assert hidden_test_passes("09_positions_and_masks", "l09-safe-test", safe_weights=right)


def test_positions_message_says_are():
    assert "are not right yet" in _message(check_decoder_inputs, DECODER_WRONG["positions from 1"])


def test_safe_shortcut_fails():
    """sa.softmax hides the empty row in NumPy; wrapped back into a tensor it passes values, not gradients."""
    def wrapped(s, m):
        return torch.tensor(sa.softmax(np.where(m.numpy(), s.detach().numpy(), -np.inf)), requires_grad=True)

    assert "Correct" not in _message(check_safe_weights, wrapped)


def test_decoder_counted_padding_minus_one_is_named_and_fails_hidden_test():
    def wrong(lengths, T):
        return _right_mask(lengths, T), np.cumsum(~_real(lengths, T), 1) - 1

    assert DECODER["counted padding"] in _message(check_decoder_inputs, wrong)
    assert not hidden_test_passes("09_positions_and_masks", "l09-decoder-test", decoder_inputs=wrong)


@pytest.mark.parametrize("key", ["triu and queries", "counted padding", "cumsum axis 0", "swapaxes", ".T",
                                 "batch and queries", "positions .T"])
def test_decoder_new_named_slips_fail_the_hidden_test(key):
    wrong = DECODER_WRONG[key]
    assert not hidden_test_passes("09_positions_and_masks", "l09-decoder-test", decoder_inputs=wrong)


@pytest.mark.parametrize("key", ["first-row sign", "degrees", "np.degrees", "delta plus theta"])
def test_shift_new_named_slips_fail_the_hidden_test(key):
    assert not hidden_test_passes("09_positions_and_masks", "l09-shift-test", shift_matrix=SHIFT_WRONG[key])


def _sdpa_weights(s, m):
    """F.scaled_dot_product_attention's weights: identity values, keys that undo its 1/sqrt(T_k)."""
    eye = torch.eye(s.shape[-1], dtype=s.dtype)
    return torch.nn.functional.scaled_dot_product_attention(s, eye * s.shape[-1] ** 0.5, eye, attn_mask=m)


def test_safe_ready_made_attention_is_refused_by_check_and_hidden_test():
    assert "ready-made attention" in _message(check_safe_weights, _sdpa_weights)
    assert not hidden_test_passes("09_positions_and_masks", "l09-safe-test", safe_weights=_sdpa_weights)


def test_safe_nan_rows_hint_comes_in_stages():
    from selfattention.checks import lesson09

    lesson09._NAN_ROWS_SEEN["count"] = 0
    first = _message(check_safe_weights, SAFE_WRONG["nan"])
    second = _message(check_safe_weights, SAFE_WRONG["nan"])
    assert "came out NaN" in first and "nan_to_num" not in first and "again for a hint" in first
    assert "nan_to_num" in second
    assert not hidden_test_passes("09_positions_and_masks", "l09-safe-test", safe_weights=SAFE_WRONG["nan"])


def test_safe_wrong_axis_fails_hidden_test():
    wrong = SAFE_WRONG["wrong axis"]
    assert not hidden_test_passes("09_positions_and_masks", "l09-safe-test", safe_weights=wrong)


@pytest.mark.parametrize("key", ["positions lengths as pads", "positions None"])
def test_decoder_review_slips_fail_the_hidden_test(key):
    assert not hidden_test_passes("09_positions_and_masks", "l09-decoder-test",
                                  decoder_inputs=DECODER_WRONG[key])


def test_decoder_missing_batch_axis_fails_the_hidden_test():
    with pytest.raises(ValueError):
        hidden_test_passes("09_positions_and_masks", "l09-decoder-test",
                           decoder_inputs=DECODER_WRONG["no batch axis"])


def test_safe_times_mask_then_mask_fails_hidden_test():
    assert not hidden_test_passes("09_positions_and_masks", "l09-safe-test",
                                  safe_weights=SAFE_WRONG["times mask then mask"])


def _private_safe_softmax(s, m):
    return torch._safe_softmax(s.masked_fill(~m, float("-inf")), -1)


def test_safe_private_safe_softmax_is_refused_by_check_and_hidden_test():
    """torch._safe_softmax already zeroes a row with no allowed key: what the exercise asks for."""
    msg = _message(check_safe_weights, _private_safe_softmax)
    assert "ready-made attention or masked softmax" in msg
    assert not hidden_test_passes("09_positions_and_masks", "l09-safe-test",
                                  safe_weights=_private_safe_softmax)


def test_safe_fill_zero_then_mask_is_named_and_fails_hidden_test():
    def wrong(s, m):
        return torch.softmax(s.masked_fill(~m, 0.0), -1) * m

    _names_only(_message(check_safe_weights, wrong), "times mask then mask", SAFE)
    assert "or filled with 0" in _message(check_safe_weights, wrong)
    assert not hidden_test_passes("09_positions_and_masks", "l09-safe-test", safe_weights=wrong)


def _masked_softmax(s, m):
    return torch.nan_to_num(torch.masked.softmax(s, dim=-1, mask=m), nan=0.0) * m


def _masked_softmax_imported(s, m):
    from torch.masked import softmax

    return torch.nan_to_num(softmax(s, dim=-1, mask=m), nan=0.0) * m


@pytest.mark.parametrize("wrong", [_masked_softmax, _masked_softmax_imported])
def test_safe_torch_masked_softmax_is_refused_by_check_and_hidden_test(wrong):
    assert "torch.masked.softmax" in _message(check_safe_weights, wrong)
    assert not hidden_test_passes("09_positions_and_masks", "l09-safe-test", safe_weights=wrong)


@pytest.mark.parametrize("fill", [-100.0, -50.0])
def test_safe_fixed_fill_above_allowed_scores_is_named_and_fails_hidden_test(fill):
    def wrong(s, m):
        return torch.softmax(s.masked_fill(~m, fill), -1) * m

    def where_wrong(s, m):
        return torch.where(m, torch.softmax(torch.where(m, s, fill), -1), 0.0)

    for answer in (wrong, where_wrong):
        msg = _message(check_safe_weights, answer)
        _names_only(msg, "soft then mask", SAFE)
        assert f"a fill of {fill:.4g} is not below every allowed score" in msg
        assert not hidden_test_passes("09_positions_and_masks", "l09-safe-test", safe_weights=answer)


def test_safe_float_mask_then_times_mask_is_named_and_fails_hidden_test():
    def wrong(s, m):
        return torch.softmax(s + m.to(s.dtype), -1) * m

    msg = _message(check_safe_weights, wrong)
    _names_only(msg, "float mask", SAFE)
    assert "Zeroing those weights afterwards" in msg
    assert not hidden_test_passes("09_positions_and_masks", "l09-safe-test", safe_weights=wrong)


def test_decoder_tril_one_above_is_named_and_fails_hidden_test():
    def wrong(lengths, T):
        real = np.arange(T)[None, :] >= T - np.asarray(lengths)[:, None]
        return np.tril(np.ones((T, T), bool), 1) & real[:, None, :], _positions(lengths, T)

    msg = _message(check_decoder_inputs, wrong)
    assert "one key too many above the diagonal" in msg
    assert not [k for k, phrase in DECODER.items() if phrase in msg]
    assert not hidden_test_passes("09_positions_and_masks", "l09-decoder-test", decoder_inputs=wrong)


def test_decoder_generic_difference_names_its_axes():
    def wrong(lengths, T):
        real = np.arange(T)[None, :] >= T - np.asarray(lengths)[:, None]
        m = np.tril(np.ones((T, T), bool))[None] & real[:, None, :]
        m[0, 0, 0] = True
        return m, _positions(lengths, T)

    assert "at index (sequence, query, key) = (0, 0, 0)" in _message(check_decoder_inputs, wrong)


def _turn(angle):
    return np.array([[np.cos(angle), np.sin(angle)], [-np.sin(angle), np.cos(angle)]])


SHIFT_ANGLES = {
    "both rows": lambda delta, theta: _turn(delta * theta / 2),                   # half the angle
    "the second row": lambda delta, theta: np.array([_turn(delta * theta)[0], _turn(theta)[1]]),
    "the first row": lambda delta, theta: np.array([_turn(float(delta))[0], _turn(delta * theta)[1]]),
}


@pytest.mark.parametrize("where", sorted(SHIFT_ANGLES))
def test_shift_wrong_angle_is_located_and_fails_hidden_test(where):
    msg = _message(check_shift_matrix, SHIFT_ANGLES[where])
    assert f"it has M_delta's form, [[cos, sin], [-sin, cos]], but {where} turn" in msg
    assert "differs from the right answer" not in msg
    wrong = SHIFT_ANGLES[where]
    assert not hidden_test_passes("09_positions_and_masks", "l09-shift-test", shift_matrix=wrong)


@pytest.mark.parametrize("key", ["uniform", "additive 1e9", "float32", "float32 and back",
                                 "float16 and back"])
def test_safe_empty_rows_and_precision_fail_the_hidden_test(key):
    assert not hidden_test_passes("09_positions_and_masks", "l09-safe-test", safe_weights=SAFE_WRONG[key])


def test_safe_uniform_message_shows_the_row_returned():
    msg = _message(check_safe_weights, SAFE_WRONG["uniform"])
    assert "came out [0.2, 0.2, 0.2, 0.2, 0.2]" in msg and "equal weights 1/5" in msg


def test_safe_float32_cast_at_the_end_fails_the_hidden_test():
    """Right weights, cast to float32 at the end: the check names the dtype, the hidden test refuses it."""
    def wrong(s, m):
        return torch.nan_to_num(torch.softmax(s.masked_fill(~m, float("-inf")), dim=-1)).float()

    _names_only(_message(check_safe_weights, wrong), "float32", SAFE)
    assert not hidden_test_passes("09_positions_and_masks", "l09-safe-test", safe_weights=wrong)


def _package_weights(s, m):
    """The package's masked weights: identity keys and scale 1 turn q k^T into the scores themselves."""
    return sa.layers.attention_weights(s, torch.eye(s.shape[-1], dtype=s.dtype), m, scale=1.0)


def test_safe_package_attention_weights_is_refused_by_check_and_hidden_test():
    assert "ready-made attention" in _message(check_safe_weights, _package_weights)
    assert not hidden_test_passes("09_positions_and_masks", "l09-safe-test", safe_weights=_package_weights)


def test_decoder_answer_from_the_given_real_table_passes(capsys):
    """An answer that first builds real, (batch, T), passes the check and the hidden test."""
    def answer(lengths, T):
        real = np.arange(T)[None, :] >= T - np.asarray(lengths)[:, None]
        return sa.causal_mask(T) & real[:, None, :], np.maximum(np.cumsum(real, axis=1) - 1, 0)

    _passes(check_decoder_inputs, answer, capsys)
    assert hidden_test_passes("09_positions_and_masks", "l09-decoder-test", decoder_inputs=answer)


def test_safe_float_mask_message_gives_the_share_the_masked_keys_kept():
    """The float-mask message states the masked keys' share of the weight, from the answer's weights."""
    from selfattention.checks.lesson09 import _safe_cases

    wrong = SAFE_WRONG["float mask"]
    s, m = _safe_cases()[0]                                      # the first case the check tries
    w, mm = wrong(s, m), m.expand_as(s)
    share = float((w * ~mm).sum(dim=-1)[mm.any(dim=-1)].mean())  # weight left on masked keys, rows with a key
    msg = _message(check_safe_weights, wrong)
    assert f"the masked keys still got {share:.0%} of the weight" in msg and "most of their weight" not in msg
    assert 0.05 < share < 0.95
    assert not hidden_test_passes("09_positions_and_masks", "l09-safe-test", safe_weights=wrong)


def test_safe_float_mask_renormalised_names_the_discarded_zero_over_zero():
    """A 0/1 float mask added, zeroed and renormalised gives the right weights; its NaN gradient comes from
    the 0/0 of an empty row's renormalisation, not from an additive -inf mask."""
    def wrong(s, m):
        w = torch.softmax(s + m.to(s.dtype), dim=-1) * m
        return torch.nan_to_num(w / w.sum(dim=-1, keepdim=True))

    _names_only(_message(check_safe_weights, wrong), "discarded nan", SAFE)
    assert not hidden_test_passes("09_positions_and_masks", "l09-safe-test", safe_weights=wrong)


def _fails_hidden_safe(wrong):
    try:
        return not hidden_test_passes("09_positions_and_masks", "l09-safe-test", safe_weights=wrong)
    except RuntimeError:                          # a shape error in the hidden test fails it too
        return True


@pytest.mark.parametrize("key", ["transposed mask", "flattened"])
def test_safe_new_named_slips_fail_the_hidden_test(key):
    assert _fails_hidden_safe(SAFE_WRONG[key])


@pytest.mark.parametrize(("dim", "named"), [(1, "dim=1 (dim=-2 counted from the end)"),
                                            (-2, "dim=0 (dim=-2 counted from the end)"),
                                            (0, "dim=0 (dim=-2 counted from the end)")])
def test_safe_softmax_over_the_queries_names_the_axis_and_fails_hidden_test(dim, named):
    """On 2-D scores dim=1 is the keys' axis: only a batched case refuses a softmax over the queries."""
    def wrong(s, m):
        return torch.nan_to_num(torch.softmax(s.masked_fill(~m, float("-inf")), dim=dim), nan=0.0)

    msg = _message(check_safe_weights, wrong)
    assert named in msg and "not over the keys" in msg, msg
    assert _fails_hidden_safe(wrong)


def test_safe_right_answers_pass_the_batched_hidden_case():
    def smallest_number(s, m):
        return torch.where(m, torch.softmax(s.masked_fill(~m, torch.finfo(s.dtype).min), dim=-1), 0.0)

    assert hidden_test_passes("09_positions_and_masks", "l09-safe-test", safe_weights=smallest_number)
    def nan_replaced(s, m):
        return torch.nan_to_num(torch.softmax(s.masked_fill(~m, float("-inf")), dim=-1), nan=0.0)

    assert hidden_test_passes("09_positions_and_masks", "l09-safe-test", safe_weights=nan_replaced)


def test_shift_nested_list_is_accepted_by_check_and_hidden_test(capsys):
    """A nested list is accepted: the check and the hidden test agree."""
    def as_list(delta, theta):
        c, s = np.cos(delta * theta), np.sin(delta * theta)
        return [[c, s], [-s, c]]

    _passes(check_shift_matrix, as_list, capsys)
    assert hidden_test_passes("09_positions_and_masks", "l09-shift-test", shift_matrix=as_list)
