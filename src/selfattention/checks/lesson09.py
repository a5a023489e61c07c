"""Checks for lesson 09 (positions and masks): a decoder's mask for a left-padded batch, the matrix that shifts
a sinusoidal encoding by delta positions, and masked softmax weights in PyTorch that stay finite on a row with no
allowed key.

Each check's own inputs make every named mistake give a result different from the right answer and from every
other named mistake (``tests/test_mistakes_lesson09.py`` feeds each one), and include hard inputs: scores near
1000, rows whose keys are all masked, a batch whose sequences have different lengths.
"""

from __future__ import annotations

import contextlib
import itertools
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ._engine import (
    ExerciseError,
    _learner_line,
    check_array,
    check_function,
    code_names,
    learners_functions,
    passed,
    stand_ins,
)
from .lesson03 import ReadyMadeCalled
from .lesson03 import ready_made_blocked as _ready_made_blocked

__all__ = ["check_decoder_inputs", "check_decoder_mask", "check_shift_matrix", "check_safe_weights"]


# ---------------------------------------------------------------- exercise 1: a left-padded decoder mask
def _real_keys(lengths: np.ndarray, T: int, *, shift: int = 0) -> np.ndarray:
    """(batch, T): True where position j holds a real token of a sequence padded on the left."""
    return np.arange(T)[None, :] >= T - np.asarray(lengths)[:, None] + shift


def _lower(T: int, k: int = 0) -> np.ndarray:
    return np.tril(np.ones((T, T), dtype=bool), k)


def _decoder_reference(lengths: np.ndarray, T: int) -> np.ndarray:
    return _lower(T)[None] & _real_keys(lengths, T)[:, None, :]


PADS_FROM_MAX = ("the padding was counted from lengths.max(), not from T: the batch is padded to T, which may "
                 "exceed every length, so sequence b has T - lengths[b] padding tokens.")
SHARED_OFFSET = ("one offset was subtracted for the whole batch: each sequence has its own number of padding "
                 "tokens, T - lengths[b], so each row of positions needs its own offset.")


def _from_max(lengths: np.ndarray) -> np.ndarray:
    """(batch, 1) padding counts taken from the longest sequence instead of T."""
    return np.max(lengths) - np.asarray(lengths)[:, None]


def _decoder_mistakes(case: tuple[np.ndarray, int]) -> dict[str, np.ndarray]:
    lengths, T = case
    real = _real_keys(lengths, T)
    batch = len(lengths)
    right_padded = np.arange(T)[None, :] < np.asarray(lengths)[:, None]
    return {
        "the padding is at the end of each sequence: that is right padding. Here the sequences are padded on "
        "the LEFT: a sequence of length n fills the last n positions, T - n to T - 1.":
            _lower(T)[None] & right_padded[:, None, :],
        "the causal part is missing: every query still sees the real tokens after it. Combine the padding "
        "mask with the causal mask (key j <= query i).": np.broadcast_to(real[:, None, :], (batch, T, T)),
        "the padding is not masked: queries still see the padding keys. Combine the causal mask with a mask "
        "that is False on padding keys.": np.broadcast_to(_lower(T), (batch, T, T)),
        "the padding was masked on the queries (rows), not on the keys (columns): a query must not attend TO "
        "a padding key; which queries are padding does not matter to the mask.":
            _lower(T)[None] & real[:, :, None],
        "the two masks were combined with OR: a key must be allowed by BOTH (the causal mask AND the padding "
        "mask), so combine them with &.": _lower(T)[None] | real[:, None, :],
        "the causal part points the wrong way: token i may see keys j <= i (on and below the diagonal, "
        "np.tril), not the keys after it.": _lower(T).T[None] & real[:, None, :],
        "two slips: np.triu was used where the causal part is np.tril (token i may see keys j <= i, on and "
        "below the diagonal), and the padding was applied to the rows (queries, axis 1 of the mask) instead of "
        "the keys (columns, axis 2): a query must not attend TO a padding key.":
            _lower(T).T[None] & real[:, :, None],
        "one real token too few: the first real token of each sequence is masked. With left padding, a "
        "sequence of length n has its real tokens at positions T - n, ..., T - 1 (T - n included).":
            _lower(T)[None] & _real_keys(lengths, T, shift=1)[:, None, :],
        "one padding token too many is allowed: the last padding position (T - n - 1) counts as real. The "
        "real tokens are at positions T - n, ..., T - 1.":
            _lower(T)[None] & _real_keys(lengths, T, shift=-1)[:, None, :],
        "the diagonal is masked too: a token may attend to itself (key j <= query i, not j < i).":
            _lower(T, -1)[None] & real[:, None, :],
        "one key too many above the diagonal: each query also sees the key right after it (np.tril(..., 1) "
        "keeps the first diagonal above the main one). A query may see keys j <= i only: np.tril(...) with "
        "no offset.": _lower(T, 1)[None] & real[:, None, :],
        "the padding queries may attend to themselves: a padding position is never a key anyone may attend, "
        "itself included. Their rows stay all False (Exercise 3 handles such rows).":
            (_lower(T)[None] & real[:, None, :]) | (np.eye(T, dtype=bool)[None] & ~real[:, :, None]),
        "lengths was read as the number of padding tokens: lengths[b] is the number of REAL tokens, so the "
        "real tokens are at positions T - lengths[b], ..., T - 1.":
            _lower(T)[None] & (np.arange(T)[None, :] >= np.asarray(lengths)[:, None])[:, None, :],
        "the causal part is missing: the padding was masked on both queries and keys, but every real query "
        "still sees the real tokens after it. Combine with the causal mask (key j <= query i).":
            real[:, :, None] & real[:, None, :],
        PADS_FROM_MAX: _lower(T)[None] & (np.arange(T)[None, :] >= _from_max(lengths))[:, None, :],
    }


def _decoder_cases() -> list[tuple[np.ndarray, int]]:
    return [(np.array([3, 5]), 5), (np.array([1, 4, 6]), 6), (np.array([2, 7, 5, 4]), 7),
            (np.array([2, 4]), 6)]                     # T above every length: T, not lengths.max()


def _positions_reference(lengths: np.ndarray, T: int) -> np.ndarray:
    """(batch, T): a real token's position counts the real tokens before it; padding positions hold 0."""
    pads = T - np.asarray(lengths)[:, None]
    return np.maximum(np.arange(T)[None, :] - pads, 0)


def _positions_mistakes(case: tuple[np.ndarray, int]) -> dict[str, np.ndarray]:
    lengths, T = case
    real = _real_keys(lengths, T)
    return {
        "every real token's position is shifted by the number of padding tokens before it: np.arange(T) "
        "counts the padding too. The first real token is position 0, as it would be without padding.":
            np.where(real, np.broadcast_to(np.arange(T), real.shape), 0),
        "the positions start at 1: the first real token is position 0 (count the real tokens BEFORE it, e.g. "
        "a running count of the real tokens minus 1).": np.where(real, np.cumsum(real, axis=1), 0),
        "the positions count down from the end: position p is the number of real tokens before the token, so "
        "they grow from 0 at the first real token to n - 1 at the last.":
            np.where(real, T - 1 - np.arange(T)[None, :], 0),
        PADS_FROM_MAX: np.where(real, np.arange(T)[None, :] - _from_max(lengths), 0),
        "lengths was read as the number of padding tokens: np.arange(T) - lengths[:, None] subtracts the real "
        "tokens' count. Sequence b has T - lengths[b] padding tokens; subtract that.":
            np.where(real, np.arange(T)[None, :] - np.asarray(lengths)[:, None], 0),
    } | {
        f"every real token of a sequence got the same position{extra}: the running count counted the "
        "padding instead of the real tokens (np.cumsum(~real) stops growing where the real tokens begin). "
        "Count the real tokens: np.cumsum(real, axis=1) - 1.": np.where(real, counts, 0)
        for extra, counts in (("", T - np.asarray(lengths)[:, None]),
                              (" (its padding count minus 1)", T - np.asarray(lengths)[:, None] - 1))
    } | {
        "the running count went down the batch (axis 0), not along each sequence: count the real tokens "
        "before each token with np.cumsum(real, axis=1) - 1.": np.where(real, np.cumsum(real, axis=0) - 1, 0),
    }


def check_decoder_inputs(decoder_inputs: Callable[[np.ndarray, int], Any]) -> None:
    """Exercise 1: a left-padded decoder batch's (batch, T, T) mask and (batch, T) position ids."""
    if decoder_inputs is None or decoder_inputs is Ellipsis or not callable(decoder_inputs):
        raise ExerciseError("decoder_inputs is not a function yet: write it in the answer cell above.")

    def both(lengths: np.ndarray, T: int) -> tuple[Any, Any]:
        what = f"lengths {lengths.tolist()} padded on the left to T = {T}"
        try:
            got = decoder_inputs(lengths, T)
        except ExerciseError:
            raise
        except Exception as exc:  # noqa: BLE001  (the learner's code crashed: say where, and why if we know)
            text = str(exc)
            shapes = set(re.findall(r"\((\d+),\)", text)) if "broadcast" in text else set()
            tables = {tuple(int(n) for n in re.findall(r"\d+", m)) for m in re.findall(r"\(([\d,\s]*)\)", text)}
            if "broadcast" in text and tables == {(T, T), (len(lengths), T)}:
                raise ExerciseError(
                    f"decoder_inputs raised {type(exc).__name__}{_learner_line(exc)} on {what}: {text.strip()}. "
                    f"The ({T}, {T}) causal mask met the ({len(lengths)}, {T}) table of real tokens with the batch "
                    "axis missing: NumPy lines up the last axes, so it read that table's sequences as queries. "
                    "Give that table a query axis ([:, None, :], shape (batch, 1, T)) to get one (T, T) mask per "
                    "sequence.") from None
            if shapes == {str(T), str(len(lengths))}:
                raise ExerciseError(
                    f"decoder_inputs raised {type(exc).__name__}{_learner_line(exc)} on {what}: {text.strip()}. "
                    f"An array over the T = {T} positions, such as np.arange(T), met one over the "
                    f"{len(lengths)} sequences, such as T - lengths, with no axis to line them up: give the "
                    "per-sequence one shape (batch, 1), (T - lengths)[:, None], so each sequence gets its own "
                    "row of positions.") from None
            raise ExerciseError(f"decoder_inputs raised {type(exc).__name__}{_learner_line(exc)} on {what}: "
                                f"{text.strip()}") from None
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise ExerciseError(f"decoder_inputs returned a {type(got).__name__}; return two arrays: "
                                "mask, positions.")
        if np.shape(got[0]) == (len(lengths), T) and np.shape(got[1]) == (len(lengths), T, T):
            raise ExerciseError("decoder_inputs returned the positions first and the mask second: the two are "
                                "swapped. Return mask (batch, T, T) first, then positions (batch, T).")
        return got[0], got[1]

    try:
        check_decoder_mask(lambda lengths, T: both(lengths, T)[0], name="the mask",
                           transposes=_transposes(decoder_inputs))
    except ExerciseError as err:  # "the result of the mask ..." reads badly: it is the mask decoder_inputs returned
        text = (str(err).replace("the result of the mask", "the mask decoder_inputs returned", 1)
                .replace("at index (", "at index (sequence, query, key) = (", 1))
        raise ExerciseError(text) from None
    for lengths, T in _decoder_cases()[::-1]:             # T above every length first: offsets all differ
        what = f"lengths {lengths.tolist()} padded on the left to T = {T}"
        positions = both(lengths.copy(), T)[1]
        if positions is None or positions is Ellipsis:
            raise ExerciseError(f"decoder_inputs returned {positions} as its positions ({what}): the mask is "
                                "right; return the (batch, T) positions as the second array.")
        positions = np.asarray(positions)
        real = _real_keys(lengths, T)
        if positions.shape != real.shape:
            flipped = (" (transposed: .T put the positions first; the batch axis comes first, one row per "
                       "sequence)" if positions.shape == real.shape[::-1] else "")
            raise ExerciseError(f"the positions have shape {positions.shape} on {what}; expected "
                                f"{real.shape}: one position per token of each sequence{flipped}.")
        if positions.dtype.kind not in "iu":
            raise ExerciseError(f"the positions hold {positions.dtype} values on {what}; positions are integers, "
                                "indices into the encoding's rows (a float such as 2.0 cannot index a table): "
                                "build them from integer arrays (np.arange, np.cumsum of booleans) or convert "
                                "with .astype(int).")
        mine = np.where(real, positions, 0)                          # padding positions do not matter
        offsets = (np.arange(T)[None, :] - positions)[real]
        if offsets.size and np.all(offsets == offsets[0]) and offsets[0] != 0:
            raise ExerciseError(f"the positions of the real tokens are not right yet ({what}): {SHARED_OFFSET}")
        try:
            check_array(mine, _positions_reference(lengths, T), f"the positions of the real tokens ({what})",
                        mistakes=_positions_mistakes((lengths, T)))
        except ExerciseError as err:                                 # "the positions ... are", not "is"
            raise ExerciseError(str(err).replace(") is not right yet", ") are not right yet", 1)
                                .replace(") differs from", ") differ from", 1)) from None
    passed("queries see themselves and earlier real tokens only, and every real token's position counts the "
           "real tokens before it, as without padding, in a batch of different lengths.")


_AXES = ("sequence", "query", "key")
_TRANSPOSES = {"swapaxes", "transpose", "T", "mT", "moveaxis", "rollaxis", "permute"}


def _permuted_axes(arr: np.ndarray, reference: np.ndarray, transposes: bool) -> str | None:
    """Why ``arr`` holds the right mask's values with its axes in another order, or None when it does not."""
    if arr.ndim != 3 or sorted(arr.shape) != sorted(reference.shape):
        return None
    for perm in itertools.permutations(range(3)):
        if perm == (0, 1, 2) or reference.transpose(perm).shape != arr.shape:
            continue
        if not np.array_equal(arr.astype(bool), reference.transpose(perm)):
            continue
        if perm == (0, 2, 1):
            if not transposes:
                return None                     # np.triu and padding on the rows give the same array: named below
            return ("the mask is the right one with its last two axes swapped (a swapaxes(1, 2), .transpose or "
                    ".mT too many): entry [b, i, j] must say whether query i may attend key j, so the queries are "
                    "the middle axis and the keys the last. Remove the swap.")
        order = ", ".join(_AXES[k] for k in perm)
        how = (" .T (or np.transpose with no axes) reverses ALL the axes of a 3-D array; to swap two axes name them "
               "(np.swapaxes(mask, 1, 2))." if perm == (2, 1, 0) else "")
        return (f"the mask holds the right values, but its axes are ({order}), shape {arr.shape}: they must be "
                f"(sequence, query, key), shape {reference.shape}.{how}")
    return None


def _transposes(fn: Callable[..., Any]) -> bool:
    """Whether the learner's code (``fn`` and the helpers of theirs it reaches) swaps or reorders axes."""
    return any(_TRANSPOSES & code_names(f.__code__) for f in learners_functions(fn) if hasattr(f, "__code__"))


def check_decoder_mask(decoder_mask: Callable[[np.ndarray, int], Any], *, name: str = "decoder_mask",
                       transposes: bool | None = None) -> None:
    """Exercise 1's mask: (batch, T, T) boolean mask of a causal decoder on a batch padded on the left;
    ``transposes``: whether the learner's code reorders axes (read from ``decoder_mask`` when None)."""
    if callable(decoder_mask):
        transposes = _transposes(decoder_mask) if transposes is None else transposes
        for lengths, T in _decoder_cases()[:1]:
            try:
                got = decoder_mask(lengths.copy(), T)
            except Exception:  # the general check below says where it crashed
                break
            arr = got.detach().cpu().numpy() if hasattr(got, "detach") else np.asarray(got) if got is not None \
                and got is not Ellipsis else None
            if arr is not None and (why := _permuted_axes(arr, _decoder_reference(lengths, T), transposes)):
                raise ExerciseError(f"{why} (on lengths {lengths.tolist()} padded on the left to T = {T})")
            if arr is not None and arr.shape == (len(lengths), 1, T):
                raise ExerciseError(
                    f"{'the mask decoder_inputs returned' if name == 'the mask' else name} has shape {arr.shape}, that of a padding mask alone (what sa.padding_mask returns, "
                    f"broadcast over the queries), on lengths {lengths.tolist()} padded on the left to T = {T}: "
                    "the causal part is missing. Combine it with the causal mask (key j <= query i), e.g. "
                    "sa.causal_mask(T) & padding, to get one (T, T) mask per sequence, (batch, T, T).")
            if arr is not None and arr.shape == (T, T) and len(set(lengths.tolist())) > 1:
                raise ExerciseError(
                    f"{'the mask decoder_inputs returned' if name == 'the mask' else name} has shape {arr.shape}: "
                    f"one mask for the whole batch, on lengths {lengths.tolist()} padded on the left to T = {T}. "
                    "The sequences have different numbers of padding tokens, so each needs its own (T, T) mask: "
                    "return (batch, T, T).")
            if arr is not None and arr.dtype != bool and arr.shape == (len(lengths), T, T):
                raise ExerciseError(
                    f"your mask holds {arr.dtype} values; a mask is boolean (True = may attend), as "
                    "sa.causal_mask's is: sa.scaled_dot_product_attention refuses any other dtype. Combine "
                    "boolean arrays with & (or compare numbers, e.g. positions >= T - n).")
    check_function(decoder_mask, _decoder_reference, _decoder_cases(), name,
                   mistakes=_decoder_mistakes,
                   describe=lambda c: f"lengths {c[0].tolist()} padded on the left to T = {c[1]}")
    if name == "decoder_mask":
        passed("queries see themselves and earlier real tokens only; padding keys and the future are masked, "
               "in a batch of different lengths.")


# ---------------------------------------------------------------- exercise 2: the shift matrix
def _rotation(angle: float, *, transpose: bool = False, plus: bool = False) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    m = np.array([[c, s], [(s if plus else -s), c]])
    return m.T if transpose else m


def _shift_reference(delta: int, theta: float) -> np.ndarray:
    return _rotation(delta * theta)


def _shift_mistakes(case: tuple[int, float]) -> dict[str, np.ndarray]:
    delta, theta = case
    c, s = np.cos(delta * theta), np.sin(delta * theta)
    if delta < 0:  # the positive-delta cases came first and passed: |delta| is the likely slip here
        back = ("negative delta is handled wrong: your matrix for delta = -2 is the one for delta = +2. Use delta itself in the "
                "angle, delta * theta: a negative angle turns the pair back.")
    else:
        back = ("your matrix moves the encoding BACK by delta positions: it is [[cos, -sin], [sin, cos]] of delta "
                "theta, the transpose of M_delta. Both the textbook rotation (made for a column (cos, sin)) and a "
                "matrix built for a row, pair @ M, give it. Here the column is (sin, cos), multiplied as "
                "M_delta @ pair: row 1 from sin(a + b), row 2 from cos(a + b), coefficient of sin a first.")
    return {
        "the second row follows the formula's reading order, [cos, -sin]: M_delta multiplies the column "
        "[sin(i theta), cos(i theta)], so each row holds the coefficient of sin(i theta) first, then that of "
        "cos(i theta). For cos(a + b) = -sin a sin b + cos a cos b that is [-sin(delta theta), cos(delta theta)].":
            np.array([[c, s], [c, -s]]),
        "the rows are swapped: the first row must give sin((i + delta) theta), the second cos((i + delta) theta).":
            np.array([[-s, c], [c, s]]),
        "sin(delta theta) and cos(delta theta) are swapped: in sin(a + b) = sin a cos b + cos a sin b the coefficient "
        "of sin a (= sin(i theta)) is cos b (= cos(delta theta)).": np.array([[s, c], [-c, s]]),
        "sin(delta theta) and cos(delta theta) are swapped in both rows, [[sin, cos], [cos, -sin]]: in "
        "sin(a + b) = sin a cos b + cos a sin b the coefficient of sin a (= sin(i theta)) is cos b "
        "(= cos(delta theta)), and in cos(a + b) = cos a cos b - sin a sin b it is -sin b.":
            np.array([[s, c], [c, -s]]),
        back: _rotation(delta * theta, transpose=True),
    } | {
        "a sign is wrong: cos(a + b) = cos a cos b - sin a sin b, with a minus, so the second row is "
        "[-sin(delta theta), cos(delta theta)].": _rotation(delta * theta, plus=True),
        "the angle is delta, not delta * theta: the pair turns by theta per position, so delta positions turn it by "
        "delta * theta.": _rotation(float(delta)),
        "the angle is theta, whatever delta is: delta positions turn the pair by delta * theta.": _rotation(theta),
        "the first row has a minus sign: sin(a + b) = sin a cos b + cos a sin b, all plus, so the first row is "
        "[cos(delta theta), +sin(delta theta)]; the minus belongs to the second row, from cos(a + b).":
            np.array([[c, -s], [-s, c]]),
        "the angle was read as degrees (np.deg2rad or np.radians): theta is in radians, as np.sin and np.cos "
        "expect, so the angle is delta * theta itself, unconverted.": _rotation(np.deg2rad(delta * theta)),
        "the angle was converted to degrees (np.degrees): theta is in radians, as np.sin and np.cos expect, so "
        "the angle is delta * theta itself, unconverted.": _rotation(np.degrees(delta * theta)),
        "the angle is delta + theta: delta positions turn the pair by theta each time, delta * theta in all.":
            _rotation(delta + theta),
    }


def _shift_cases() -> list[tuple[int, float]]:
    return [(3, 0.7), (3, 0.1), (-2, 0.5), (7, 10000 ** (-2 * 1 / 8)), (40, 10000 ** (-2 * 3 / 8))]


# A matrix solved from the pairs at two positions (A @ inv(B)) is right wherever those pairs differ, so values
# alone cannot refuse it: the check reads the code (the answer and every helper of the learner's it reaches) for a
# numerical solve or the package's encoding, and tries theta = 0, where every position has the same pair and no
# matrix can be solved from them, while the closed form gives the identity.
_SOLVERS = {"inv", "pinv", "lstsq", "tensorinv", "tensorsolve"}
FITTED = ("shift_matrix fits M_delta numerically ({}) instead of deriving it: where the pairs do not move "
          "(theta = 0) the positions it is fitted on no longer determine it. Write the entries from the "
          "two angle-addition formulas, in cos(delta theta) and sin(delta theta).")
STILL_PAIR = ("for theta = 0 (a pair that never turns: every position has the same pair) shift_matrix {}; M_delta "
              "must be the identity there. A matrix solved from the pairs at two positions does not exist when "
              "the two pairs are equal: derive the entries from the angle-addition formulas instead.")


def fits_numerically(shift_matrix: Callable[..., Any]) -> str | None:
    """The solver or encoding that ``shift_matrix`` (or a helper of the learner's it calls) uses to fit M_delta from
    encodings, or None when it uses none."""
    for f in learners_functions(shift_matrix):
        code = getattr(f, "__code__", None)
        names = code_names(code) if code is not None else set()
        found = sorted(names & _SOLVERS) + (["linalg.solve"] if {"linalg", "solve"} <= names else [])
        if "sinusoidal_positional_encoding" in names:
            found.append("sa.sinusoidal_positional_encoding")
        if found:
            return ", ".join(found)
    return None


def _wrong_angles(shift_matrix: Callable[[int, float], Any]) -> str | None:
    """On the first case it gets wrong: whether ``shift_matrix`` returned M_delta's form, [[cos a, sin a],
    [-sin b, cos b]], with an angle other than delta * theta in one row or both; None when it did not."""
    for delta, theta in _shift_cases():
        try:
            got = np.asarray(shift_matrix(delta, theta), dtype=float)
        except Exception:  # noqa: BLE001  (check_function has said why)
            return None
        if got.shape != (2, 2) or np.allclose(got, _shift_reference(delta, theta)):
            continue
        if not np.allclose([got[0] @ got[0], got[1] @ got[1]], 1.0, atol=1e-6):
            return None
        a, b = np.arctan2(got[0, 1], got[0, 0]), np.arctan2(-got[1, 0], got[1, 1])
        if not (np.isclose(got[0, 0], np.cos(a)) and np.isclose(got[1, 1], np.cos(b))):
            return None
        right = np.angle(np.exp(1j * delta * theta))          # delta * theta, taken into (-pi, pi]
        off = [not np.isclose(np.angle(np.exp(1j * (x - right))), 0.0, atol=1e-6) for x in (a, b)]
        where = "both rows" if all(off) else "the first row" if off[0] else "the second row"
        angles = f"{a:.4g}" if all(off) and np.isclose(a, b) else f"{a:.4g} and {b:.4g}"
        return (f"shift_matrix is not right yet for delta = {delta}, theta = {theta:.4g}: it has M_delta's form, "
                f"[[cos, sin], [-sin, cos]], but {where} turn{'s' if where != 'both rows' else ''} by an angle "
                f"other than delta * theta (rows turn by {angles} rad, delta * theta is {right:.4g} rad taken "
                "into (-pi, pi]). Both rows use the same angle, delta * theta.")
    return None


def check_shift_matrix(shift_matrix: Callable[[int, float], Any]) -> None:
    """Exercise 2: the 2x2 matrix M_delta with [sin((i+delta)w), cos((i+delta)w)] = M_delta [sin(i w), cos(i w)] for every i, for
    any frequency w, 0 included; derived, not fitted from encodings."""
    if callable(shift_matrix) and (used := fits_numerically(shift_matrix)):
        raise ExerciseError(FITTED.format(used))
    try:
        check_function(shift_matrix, _shift_reference, _shift_cases(), "shift_matrix", mistakes=_shift_mistakes,
                       describe=lambda c: f"delta = {c[0]}, theta = {c[1]:.4g}")
    except ExerciseError as err:
        if "differs from the right answer" in str(err) and (named := _wrong_angles(shift_matrix)):
            raise ExerciseError(named) from None
        raise
    delta, theta = 5, 0.3
    pairs = np.stack([np.sin(np.arange(20) * theta), np.cos(np.arange(20) * theta)], axis=1)  # (20, 2)
    moved = pairs[:-delta] @ np.asarray(shift_matrix(delta, theta), dtype=float).T
    check_array(moved, pairs[delta:], "M_delta applied to the pairs of positions 0..14 (delta = 5, theta = 0.3)")
    try:
        with np.errstate(all="ignore"):
            still = np.asarray(shift_matrix(3, 0.0), dtype=float)
    except Exception as exc:  # noqa: BLE001  (a solve on equal pairs raises; say so in words)
        raise ExerciseError(STILL_PAIR.format(f"raised {type(exc).__name__}")) from None
    if still.shape != (2, 2) or not np.all(np.isfinite(still)) or not np.allclose(still, np.eye(2)):
        raise ExerciseError(STILL_PAIR.format(f"returned {np.round(still, 3).tolist()} for delta = 3"))
    with np.errstate(all="ignore"):
        try:
            flip = np.asarray(shift_matrix(3, np.pi), dtype=float)
        except Exception as exc:  # noqa: BLE001
            flip = None
            how = f"raised {type(exc).__name__}"
    if flip is not None:
        how = f"returned {np.round(flip, 3).tolist()}"
    if flip is None or flip.shape != (2, 2) or not np.allclose(flip, -np.eye(2), atol=1e-9):
        raise ExerciseError(
            f"for delta = 3, theta = pi shift_matrix {how}; M_delta must be -I there: three half turns flip "
            "every pair, (sin, cos) -> (-sin, -cos). At theta = pi every position's pair is (0, 1) or (0, -1), "
            "all on one line, so no matrix can be solved from encodings at two positions; the closed form in "
            "cos(delta theta) and sin(delta theta) gives -I.")
    passed("M_delta moves every position's (sine, cosine) pair delta positions on, the same matrix for every i (one "
           "per frequency theta), theta = 0 and theta = pi included.")


# ---------------------------------------------------------------- exercise 3: safe masked weights
NAN_ROWS_FIRST = ("a row whose keys are all masked came out NaN: with every score of the row at -inf, the softmax "
                  "divides 0 by 0. Such rows occur (the padding queries of a left-padded causal batch) and must "
                  "come out all 0. Try a fix of your own; run this check again for a hint.")
NAN_ROWS = ("a row whose keys are all masked came out NaN: softmax of a row of -inf is 0/0. Such rows occur "
            "(the padding queries of a left-padded causal batch); give them weight 0 everywhere, for example "
            "with torch.nan_to_num or torch.where, or fill with a large finite negative number and zero the "
            "masked weights afterwards.")
WRONG_AXIS = ("the softmax was taken over dim={} (dim={} counted from the end), an axis of the queries or the "
              "batch, not over the keys: each query's weights over its keys, the last axis, sum to 1. Use dim=-1.")
TRANSPOSED_MASK = ("the mask was read transposed (mask.T or mask.transpose(-1, -2)): mask[..., i, j] says whether "
                   "query i may attend to key j, lined up with scores[..., i, j] as given. Use the mask as it comes.")
FLATTENED = ("the softmax was taken over {} at once (a reshape or flatten before it), not over each query's keys: "
             "each row of weights, the last axis, sums to 1. Keep the scores' shape and use dim=-1.")
_NAN_ROWS_SEEN = {"count": 0}        # the first NaN-row message says what went wrong; later ones give the recipe
READY_MADE = ("safe_weights called a ready-made attention or masked softmax (F.scaled_dot_product_attention, "
              "torch.masked.softmax, torch._safe_softmax, sa.layers.attention_weights or the like) while it ran: turning the scores and the "
              "mask into weights is the exercise. Write it with torch.softmax and the mask (masked_fill, torch.where).")
UNIFORM_ROWS = ("a row whose keys are all masked gets equal weights 1/T on masked keys: a large finite fill "
                "(-1e9, torch.finfo(...).min) makes every score of that row equal. Masked weights must be exactly "
                "0, in that row too (multiply by the mask, or use torch.where).")
OVERFLOW = ("rows that HAVE allowed keys hold NaN or inf: on scores near 1000, exp(score) overflows to inf "
            "and inf / inf is NaN. Subtract each row's largest allowed score before exp (torch.softmax does "
            "that for you); replacing the NaN afterwards would hide this bug, not fix it.")
SOFT_THEN_MASK = ("the masked weights are exactly 0, but rows with allowed keys sum to less than 1: the masked "
                  "scores were filled with a value that is not low enough (like -10), took part of the weight "
                  "in the softmax, and multiplying by the mask then threw that part away. Fill with -inf or a "
                  "value so low that exp gives exactly 0 (torch.finfo(scores.dtype).min), then mask.")
FILL_NOT_BELOW = ("the masked weights are exactly 0, but rows with allowed keys sum to less than 1: your weights "
                  "match masked scores filled with {0:.4g}, and {2}, so the masked keys took part of the weight in the "
                  "softmax and multiplying by the mask threw that part away. What counts is the gap between the "
                  "fill and the allowed scores, whatever they are: fill with -inf or "
                  "torch.finfo(scores.dtype).min, then mask.")
FLOAT_MASK_ZEROED = ("Zeroing those weights afterwards (* mask) leaves each row summing to less than 1.")
FLOAT_MASK = ("the mask was turned into numbers and ADDED to the scores: a 0/1 float mask adds 1 to the allowed "
              "scores and 0 to the masked ones, so on these scores the masked keys still got {share:.0%} of the weight "
              "of the rows with an allowed key (0% under a real mask): it masks nothing out. "
              "That is what a float attn_mask does in F.scaled_dot_product_attention and nn.MultiheadAttention: "
              "it is added to the scores. Use the boolean mask to choose (torch.where, masked_fill), or add "
              "-inf (not 0) where the mask is False.")
TIMES_MASK_THEN_MASK = ("the masked scores became 0 (scores multiplied by the mask, or filled with 0), not -inf, so exp(0) = 1 "
                        "takes part of each row's weight, and multiplying the weights by the mask afterwards throws "
                        "that part away (the rows sum to less than 1). Fill the masked scores with -inf (or "
                        "torch.finfo(scores.dtype).min) instead of multiplying.")
TIMES_MASK = ("the masked scores became 0 (scores multiplied by the mask, or filled with 0), not -inf, and exp(0) = 1 still "
              "gets weight. Fill the masked scores with -inf (or torch.finfo(scores.dtype).min) instead.")
NOT_TENSOR = ("return a torch tensor computed with torch operations from scores, so that gradients reach the "
              "scores (a NumPy array, .detach() or .item() cuts the gradient).")
IN_PLACE = ("the backward pass failed: an in-place change (w[...] = 0, w.masked_fill_(...)) of the softmax's "
            "output breaks autograd, which needs that output. Build a new tensor instead (torch.where, "
            "torch.nan_to_num, w * mask).")


ADDED_INF = ("an additive -inf mask (scores + a tensor of 0 and -inf) passes the softmax's NaN gradient back to "
             "the scores: the weights are right, since the NaN of a row with no allowed key was replaced, but the "
             "backward pass of that addition hands the softmax's NaN gradient straight to every masked score. "
             "Choose with the mask instead (scores.masked_fill(~mask, ...) or torch.where(mask, scores, ...)): a "
             "masked score then gets no gradient at all.")
DISCARDED_NAN = ("a NaN or inf computed on the way (an exp that overflows, a 0/0, the softmax of a row of -inf) "
                 "was discarded by torch.where or torch.nan_to_num, so the weights are right, but it still flows "
                 "back: the backward pass still runs through the discarded branch, where its 0 gradient meets that "
                 "NaN or inf, and 0 x NaN, 0 x inf and 0/0 are all NaN. Keep every intermediate finite, e.g. fill "
                 "the masked scores with torch.finfo(scores.dtype).min before the softmax, then zero the masked "
                 "weights.")
RENORM_DOMINATED = ("the softmax was taken over all the scores, masked ones included, then the masked weights were "
                    "zeroed and each row divided by its new sum. That equals filling before the softmax only while "
                    "no masked score dominates: a masked score about 104 or more above the allowed ones (in "
                    "float32; 745 in float64) makes exp underflow the allowed weights to exactly 0 before the "
                    "division, and the row comes out all 0. Fill the masked scores before the softmax.")


_SA_WEIGHTS = ("attention_weights", "SelfAttention", "MultiHeadAttention")   # the package's own masked weights
_MASKED_API = ("softmax", "log_softmax", "softmin", "normalize", "masked_tensor", "as_masked_tensor")


@contextlib.contextmanager
def ready_made_blocked() -> Iterator[None]:
    """Lesson 03's ready-made attentions blocked, PyTorch's ``_safe_softmax`` (a softmax that already returns 0 on
    a row with no allowed key, which is what Exercise 3 asks the learner to build) and ``torch.masked``'s masked
    softmaxes."""
    import torch.masked._ops as masked_ops  # the helpers every torch.masked softmax runs, however it was imported

    torch = _torch()

    places = [(torch, ("_safe_softmax",)), (torch.ops.aten, ("_safe_softmax",)), (torch.masked, _MASKED_API),
              (masked_ops, ("_combine_input_and_mask", "_canonical_dim"))]
    places += [(module, _SA_WEIGHTS) for name, module in list(sys.modules.items())   # sa.layers.attention_weights
               if (name == "selfattention" or name.startswith("selfattention."))
               and not name.startswith("selfattention.checks")]
    with _ready_made_blocked(), stand_ins(places, ReadyMadeCalled):
        yield


def _graph_nodes(out: Any) -> Iterator[Any]:
    """Every node of the autograd graph of ``out``, each once (depth first from ``out.grad_fn``)."""
    seen, todo = set(), [out.grad_fn]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        todo.extend(f for f, _ in node.next_functions)


def _adds_a_constant_to(out: Any, leaf: Any) -> bool:
    """Whether the autograd graph of ``out`` adds (or subtracts) a tensor that needs no gradient to ``leaf``
    itself: an additive mask, scores + a tensor of 0 and -inf."""
    for node in _graph_nodes(out):
        if type(node).__name__ in ("AddBackward0", "SubBackward0", "AddBackward1", "SubBackward1"):
            nexts = list(node.next_functions)
            leaves = [getattr(f, "variable", None) for f, _ in nexts if f is not None]
            if any(v is leaf for v in leaves) and (len(nexts) < 2 or any(f is None for f, _ in nexts)):
                return True
    return False


def _has_node(out: Any, kind: str) -> bool:
    """Whether the autograd graph of ``out`` holds a node whose type name starts with ``kind``."""
    return any(type(node).__name__.startswith(kind) for node in _graph_nodes(out))


def _masked_share(weights: Any, mask: Any) -> float:
    """The mean share of weight on masked keys, over the rows with an allowed key (0 under a real mask)."""
    m = mask.expand_as(weights)
    rows = m.any(dim=-1)
    return float((weights * ~m).sum(dim=-1)[rows].mean()) if bool(rows.any()) else 0.0


def _implied_fill(got: Any, scores: Any, mask: Any) -> float | None:
    """The one fill value c with got == softmax(scores.masked_fill(~mask, c)) * mask, read from the rows that have
    both allowed and masked keys, or None when those rows do not agree on one (or do not tell)."""
    torch = _torch()
    fills = []
    for w, s, m in zip(got.reshape(-1, got.shape[-1]), scores.expand_as(got).reshape(-1, got.shape[-1]),
                       mask.reshape(-1, got.shape[-1]), strict=True):
        total = float(w[m].sum()) if m.any() else 0.0
        if not m.any() or m.all() or not 1e-300 < total < 1 - 1e-6:
            continue
        j = int(torch.where(m, w, -1.0).argmax())
        log_z = float(s[j]) - float(torch.log(w[j]))           # log of the softmax's denominator
        fills.append(log_z + float(np.log1p(-total)) - float(np.log(int((~m).sum()))))
    if not fills or max(fills) - min(fills) > 1e-3 * max(1.0, abs(fills[0])):
        return None
    return float(np.mean(fills))


def _torch():
    import torch

    return torch


def _safe_reference(scores: Any, mask: Any) -> Any:
    torch = _torch()
    filled = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    return torch.softmax(filled, dim=-1) * mask


def _safe_cases() -> list[tuple[Any, Any]]:
    torch = _torch()
    gen = torch.Generator().manual_seed(9)
    T = 5
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    left = torch.arange(T) >= T - torch.tensor([3, 5])[:, None]          # (2, T): lengths 3 and 5, left padded
    batch = causal & left[:, None, :]                                     # (2, T, T): rows 0, 1 of sequence 0 empty
    odd = torch.tensor([[True, False, True, False], [False, False, False, False],
                        [False, True, True, False], [True, True, True, True]])
    return [
        (torch.randn(T, T, generator=gen, dtype=torch.float64) * 2, batch[0]),
        (torch.randn(2, T, T, generator=gen, dtype=torch.float64) * 3, batch),
        (1000 + torch.randn(4, 4, generator=gen, dtype=torch.float64), odd),
        (torch.randn(4, 4, generator=gen, dtype=torch.float32), odd),
        (torch.where(odd, torch.randn(4, 4, generator=gen, dtype=torch.float64) - 13.0,
                     torch.tensor(30.0, dtype=torch.float64)), odd),              # allowed scores far below -10
        (torch.tensor([[0.0, 200.0, 1.0], [0.5, -1.0, 2.0]]),                     # float32: a masked score
         torch.tensor([[True, False, True], [True, False, True]])),               # dominates its row by 200
        (torch.where(odd, torch.randn(4, 4, generator=gen, dtype=torch.float64) - 300.0,
                     torch.randn(4, 4, generator=gen, dtype=torch.float64)), odd),   # allowed scores near -300
    ]


def _safe_mistakes(case: tuple[Any, Any]) -> dict[str, Any]:
    torch = _torch()
    s, m = case
    big = s.masked_fill(~m, -1e9)
    return {
        UNIFORM_ROWS: torch.softmax(big, dim=-1).detach(),
        "the mask was applied after the softmax: the masked keys' weights were set to 0, so the rows no longer "
        "sum to 1. Fill the masked scores before the softmax.": (torch.softmax(s, dim=-1) * m).detach(),
        "the mask is read the wrong way round: here True means 'may attend' (as in sa.causal_mask and the "
        "boolean attn_mask of F.scaled_dot_product_attention), not 'hide' (as in nn.MultiheadAttention's "
        "key_padding_mask).": _safe_reference(s, ~m).detach(),
    }


def _empty_row_named(got: Any, case: tuple[Any, Any], empty: Any) -> str:
    """What a row with no allowed key holds, where it is not all 0 (and no other row leaks): said from the row
    the learner returned."""
    torch = _torch()
    index = tuple(int(k) for k in torch.nonzero(empty & (got.detach() != 0).any(dim=-1))[0])
    row = got.detach()[index].to(torch.float64)
    original = torch.softmax(case[0].expand_as(got)[index].to(torch.float64), dim=-1)
    shown = f"row {index[-1] if len(index) == 1 else index} has no allowed key and came out {np.round(row.numpy(), 3).tolist()}"
    if torch.allclose(row, torch.full_like(row, 1.0 / row.numel()), rtol=1e-4, atol=1e-7):
        return (f"{shown}: it gets equal weights 1/{row.numel()}, not 0. A finite fill (-1e9, torch.finfo(...).min) "
                "makes every score of that row the same number, and the softmax, which subtracts the row's largest "
                "score, turns equal scores into equal weights. Masked weights must be exactly 0, in that row too: "
                "multiply the weights by the mask, or use torch.where.")
    if torch.allclose(row, original, rtol=1e-4, atol=1e-7):
        return (f"{shown}: the softmax of that row's own scores, as if nothing were masked. Adding a finite amount "
                "(-1e9) to every masked score lowers every score of that row by the same, and the softmax only sees "
                "differences between scores. Masked weights must be exactly 0, in that row too: multiply the "
                "weights by the mask, or use torch.where.")
    return (f"{shown}, summing to {float(row.sum()):.3g}: a row with no allowed key must be all 0. Its weights came "
            "from masked scores, which only a zero after the softmax can remove: multiply the weights by the mask, "
            "or use torch.where.")


def _describe(case: tuple[Any, Any]) -> str:
    s, m = case
    empty = int((~m.any(dim=-1)).sum())
    return (f"{s.dtype} scores of shape {tuple(s.shape)} up to {float(s.max()):.4g}, "
            f"{empty} row(s) with no allowed key")


def check_safe_weights(safe_weights: Callable[[Any, Any], Any]) -> None:
    """Exercise 3: softmax weights under a boolean mask, in PyTorch, exact zeros on masked keys and on rows with
    no allowed key, finite gradients."""
    torch = _torch()
    name = "the result of safe_weights"
    if safe_weights is None or safe_weights is Ellipsis or not callable(safe_weights):
        check_function(safe_weights, _safe_reference, [], "safe_weights")
    for case in _safe_cases():
        scores = case[0].clone().requires_grad_(True)
        mask = case[1].clone()
        what = _describe(case)
        try:
            with ready_made_blocked():
                got = safe_weights(scores, mask)
        except ReadyMadeCalled:
            raise ExerciseError(READY_MADE) from None
        except Exception as exc:
            raise ExerciseError(f"safe_weights raised {type(exc).__name__} on {what}: {exc}") from None
        if got is None or got is Ellipsis:
            raise ExerciseError("safe_weights returned None: write your code in the answer cell above and "
                                "`return` the weights.")
        if not isinstance(got, torch.Tensor):
            raise ExerciseError(f"{name} is a {type(got).__name__}, not a torch tensor: {NOT_TENSOR}")
        expected = _safe_reference(case[0], case[1])
        if got.is_floating_point() and got.dtype != case[0].dtype:
            raise ExerciseError(f"{name} is a {got.dtype} tensor on {what}: the weights were computed in another precision "
                                f"than the scores (a cast such as .float() or .double() on the way). Keep the scores' "
                                f"dtype, {case[0].dtype}, throughout: torch.softmax and masked_fill keep it.")
        if got.shape == expected.shape:
            with torch.no_grad():
                added = torch.softmax(case[0] + case[1].to(case[0].dtype), dim=-1)
                multiplied = torch.softmax(case[0] * case[1], dim=-1)
            float_mask = FLOAT_MASK.format(share=_masked_share(added, case[1]))   # from the learner's weights
            if torch.allclose(got.detach().to(added.dtype), added, rtol=1e-4, atol=1e-7):
                raise ExerciseError(f"{name} is not right yet on {what}: {float_mask}")
            if (torch.allclose(got.detach().to(added.dtype), added * case[1], rtol=1e-4, atol=0.0)  # tiny weights
                    and not torch.allclose(added * case[1], expected.detach(), rtol=1e-4, atol=1e-7)):  # count too
                raise ExerciseError(f"{name} is not right yet on {what}: {float_mask} {FLOAT_MASK_ZEROED}")
            if torch.allclose(got.detach().to(multiplied.dtype), multiplied, rtol=1e-4, atol=1e-7):
                raise ExerciseError(f"{name} is not right yet on {what}: {TIMES_MASK}")
            if (torch.allclose(got.detach().to(multiplied.dtype), multiplied * case[1], rtol=1e-4, atol=0.0)
                    and not torch.allclose(multiplied * case[1], expected.detach(), rtol=1e-4, atol=1e-7)):
                raise ExerciseError(f"{name} is not right yet on {what}: {TIMES_MASK_THEN_MASK}")
            empty = ~case[1].expand_as(expected).any(dim=-1)
            if (~empty).any() and not bool(torch.isfinite(got.detach()[~empty]).all()):
                raise ExerciseError(f"{name} is not right yet: {OVERFLOW} (on {what})")
            if empty.any() and torch.isnan(got.detach()[empty]).any():
                _NAN_ROWS_SEEN["count"] += 1
                hint = NAN_ROWS_FIRST if _NAN_ROWS_SEEN["count"] == 1 else NAN_ROWS
                raise ExerciseError(f"{name} is not right yet: {hint} (on {what})")
            masked = ~case[1].expand_as(expected) & ~empty[..., None]   # masked keys of rows with a real key
            leak = got.detach()[masked]
            if empty.any() and bool((leak == 0).all()) and bool((got.detach()[empty] != 0).any()):
                raise ExerciseError(f"{name} is not right yet on {what}: {_empty_row_named(got, case, empty)}")
            if bool((leak != 0).any()) and float(leak.abs().max()) < 0.05:
                raise ExerciseError(
                    f"{name} puts small but not exactly 0 weight on masked keys (largest "
                    f"{float(leak.abs().max()):.3g}) on {what}: a score lowered by a modest amount still gets "
                    "weight. Use -inf, or a fill so large that exp underflows to exactly 0 (below about -745 "
                    "in float64), or multiply by the mask.")
            with torch.no_grad():
                zeroed = torch.softmax(case[0], dim=-1) * case[1]
                renormalised = zeroed / zeroed.sum(dim=-1, keepdim=True).clamp_min(torch.finfo(zeroed.dtype).tiny)
            if (torch.allclose(got.detach().to(renormalised.dtype), renormalised, rtol=1e-4, atol=0.0)
                    and not torch.allclose(renormalised, expected.detach(), rtol=1e-4, atol=1e-7)):
                raise ExerciseError(f"{name} is not right yet on {what}: {RENORM_DOMINATED}")
            with torch.no_grad():
                filled = case[0].masked_fill(~case[1].expand_as(case[0]), float("-inf"))
                for dim in range(filled.dim() - 1):                 # softmax over the queries or the batch
                    other = torch.nan_to_num(torch.softmax(filled, dim=dim), nan=0.0)
                    if torch.allclose(got.detach().to(other.dtype), other, rtol=1e-4, atol=1e-7):
                        raise ExerciseError(f"{name} is not right yet on {what}: {WRONG_AXIS.format(dim, dim - filled.dim())}")
                flats = {"all the entries": filled.reshape(-1), "each query-key matrix": filled.flatten(-2)}
                for over, flat in flats.items():                    # the softmax over several axes together
                    other = torch.nan_to_num(torch.softmax(flat, dim=-1), nan=0.0).reshape(filled.shape)
                    if torch.allclose(got.detach().to(other.dtype), other, rtol=1e-4, atol=1e-7):
                        raise ExerciseError(f"{name} is not right yet on {what}: {FLATTENED.format(over)}")
                turned = case[1].expand_as(case[0]).transpose(-1, -2)
                if turned.shape == case[0].shape and not torch.equal(turned, case[1].expand_as(case[0])):
                    other = torch.nan_to_num(torch.softmax(case[0].masked_fill(~turned, float("-inf")), dim=-1), nan=0.0)
                    if torch.allclose(got.detach().to(other.dtype), other, rtol=1e-4, atol=1e-7):
                        raise ExerciseError(f"{name} is not right yet on {what}: {TRANSPOSED_MASK}")
            after = (torch.softmax(case[0], dim=-1) * case[1]).to(got.dtype)
            sums = got.detach()[~empty].sum(dim=-1)
            if (bool((leak == 0).all()) and float((1 - sums).max()) > 1e-4
                    and not torch.allclose(got.detach(), after, rtol=1e-4, atol=0.0)):
                fill = _implied_fill(got.detach().to(torch.float64), case[0].to(torch.float64),
                                     case[1].expand_as(expected))
                if fill is not None:
                    lowest = float(case[0][case[1].expand_as(case[0])].min())
                    where = (f"a fill of {fill:.4g} is not below every allowed score (here they go down to "
                             f"{lowest:.4g})" if fill >= lowest else f"a fill of {fill:.4g} is only "
                             f"{lowest - fill:.3g} below the lowest allowed score ({lowest:.4g}), too little "
                             "for exp to give exactly 0")
                    raise ExerciseError(f"{name} is not right yet on {what}: {FILL_NOT_BELOW.format(fill, lowest, where)}")
                raise ExerciseError(f"{name} is not right yet on {what}: {SOFT_THEN_MASK}")
        for low, digits, rtol in ((torch.float32, 7, 1e-6), (torch.float16, 3, 2e-3)):
            if (low == case[0].dtype or torch.finfo(low).eps < torch.finfo(case[0].dtype).eps
                    or got.shape != expected.shape
                    or torch.allclose(got.detach().to(expected.dtype), expected, rtol=1e-5, atol=1e-8)):
                continue
            with torch.no_grad():
                lowered = _safe_reference(case[0].to(low), case[1]).to(case[0].dtype)
            if torch.allclose(got.detach().to(lowered.dtype), lowered, rtol=rtol, atol=rtol * 1e-3):
                raise ExerciseError(f"{name} is right only to about {digits} digits on {what}: the weights were "
                                    f"computed in {low} (a .to({low}) or the like on the way) and cast back to "
                                    f"{case[0].dtype}, which keeps the dtype but not the precision. Keep the "
                                    "scores' dtype throughout.")
        check_array(got.detach().to(torch.float64).numpy(), expected.detach().to(torch.float64).numpy(), name,
                    mistakes={k: v.to(torch.float64).numpy() for k, v in _safe_mistakes(case).items()},
                    rtol=1e-4 if case[0].dtype == torch.float32 else 1e-5)
        if not bool((got.detach()[~case[1].expand_as(expected)] == 0).all()):
            raise ExerciseError(f"{name} is close to the right weights but a masked key's weight is not exactly "
                                f"0 on {what}: masked weights must be exactly 0.")
        if not got.requires_grad:
            raise ExerciseError(f"{name} carries no gradient: {NOT_TENSOR}")
        weights_for_loss = torch.linspace(-1, 1, got.numel(), dtype=got.dtype).reshape(got.shape)
        try:
            (grad,) = torch.autograd.grad((got * weights_for_loss).sum(), scores)
        except RuntimeError as exc:
            if "inplace" in str(exc):
                raise ExerciseError(f"{name}: {IN_PLACE}") from None
            raise ExerciseError(f"the backward pass through safe_weights failed on {what}: {exc}") from None
        ref_scores = case[0].clone().requires_grad_(True)
        ref = _safe_reference(ref_scores, case[1])
        (ref_grad,) = torch.autograd.grad((ref * weights_for_loss.to(ref.dtype)).sum(), ref_scores)
        bad = ~torch.isfinite(grad)
        if (bool(bad.any()) and not bool((bad & case[1].expand_as(grad)).any()) and _adds_a_constant_to(got, scores)
                and not _has_node(got, "DivBackward")):          # a renormalised empty row: 0/0, named below
            raise ExerciseError(f"the gradient with respect to the scores holds NaN on {what}, at masked scores only: "
                                f"{ADDED_INF}")
        if bool(bad.any()):
            raise ExerciseError(f"the gradient of your weights with respect to the scores holds NaN or inf on "
                                f"{what}, although the weights are right: {DISCARDED_NAN}")
        check_array(grad.to(torch.float64).numpy(), ref_grad.to(torch.float64).numpy(),
                    "the gradient of your weights with respect to the scores",
                    rtol=1e-3 if case[0].dtype == torch.float32 else 1e-5, atol=1e-6)
    passed("masked keys get exactly 0, rows with no allowed key are all 0 (no NaN), the other rows sum to 1, "
           "and gradients reach the scores, in float32 and float64.")
