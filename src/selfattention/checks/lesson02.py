"""Checks for lesson 02 (basic self-attention: a word as a weighted sum of its sentence).

Every check builds its own inputs (the lesson's toy vectors, or rows of scores chosen so that different
mistakes give different results, overflowing rows included) and its own reference answer, and names the
typical mistakes of its exercise in words.
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
    _to_array,
    body_lines,
    check_array,
    code_names,
    is_learners,
    learners_functions,
    passed,
    reference_softmax,
    stand_ins,
    used_objects,
)

__all__ = ["check_notes_scores", "check_softmax_row", "check_one_sided"]

# The lesson's toy vectors; axes: (finance, nature, food, tech).
_TOY: dict[str, np.ndarray] = {
    "money": np.array([1.0, 0.1, 0.0, 0.0]),
    "bank": np.array([0.7, 0.7, 0.0, 0.0]),
    "grows": np.array([0.5, 0.3, 0.1, 0.0]),
    "river": np.array([0.1, 1.0, 0.0, 0.0]),
}
#: The typed-in weights for "bank" in *money bank grows* (money, bank, grows).
NOTES_BANK = np.array([0.25, 0.70, 0.05])
#: Their other rows: "money" in *money bank grows*, "bank" in *river bank flows*.
_NOTES_MONEY = np.array([0.70, 0.20, 0.10])
_NOTES_RIVER_BANK = np.array([0.20, 0.78, 0.02])


def _vector(got: Any, name: str, size: int, what: str) -> np.ndarray:
    """``got`` as a float vector of ``size`` finite numbers, or an ExerciseError that says what it is."""
    if got is None or got is Ellipsis:
        raise ExerciseError(f"{name} has no value yet: replace `None` with {what}.")
    if isinstance(got, str) or isinstance(got, (list, tuple)) and any(isinstance(v, str) for v in got):
        raise ExerciseError(f"{name} is text (a string), {got!r:.40}, not a number: it should be {what}; "
                            "write the numbers themselves, without quotes.")
    try:
        v = np.asarray(got.detach().cpu().numpy() if hasattr(got, "detach") else got, dtype=float)
    except (TypeError, ValueError):
        raise ExerciseError(f"{name} should be {what}, but it is a {type(got).__name__}: {got!r:.80}") from None
    if v.shape != (size,):
        raise ExerciseError(f"{name} has shape {v.shape}; it should be {what}, shape ({size},).")
    if not np.isfinite(v).all():
        raise ExerciseError(f"{name} contains NaN or infinite values; use ordinary finite numbers.")
    return v


def _fmt(x: np.ndarray) -> str:
    return str(np.round(np.asarray(x, dtype=float), 3).tolist())


# --------------------------------------------------------------------------- exercise 1
_UNSET = object()
#: The gain that lifts bank's weight from 0.70 to 0.90: 0.7 e^g / (0.7 e^g + 0.3) = 0.9.
BANK_GAIN = float(np.log(0.9 * 0.3 / (0.1 * 0.7)))


def check_notes_scores(notes_scores: Any, bank_gain: Any = _UNSET) -> None:
    """Exercise 1: three scores (money, bank, grows) whose softmax is bank's typed-in row
    [0.25, 0.70, 0.05] (any constant may be added to all three: the weights only see differences), and,
    when given, ``bank_gain``: the number added to bank's score alone that makes bank's weight 0.90."""
    s = _vector(notes_scores, "notes_scores", 3, "three scores (for money, bank, grows)")
    w = reference_softmax(s)
    said = f"softmax of your scores is {_fmt(w)}"
    if np.allclose(w, NOTES_BANK, atol=1e-3):
        gap = s[1] - s[0]
        ln_ratio = f"{np.log(0.70 / 0.25):.3f}"
        first = (f"{said}, bank's row asked for. Bank's score is {gap:.3f} above money's, "
                 + (f"ln(0.70 / 0.25) = {ln_ratio}" if f"{gap:.3f}" == ln_ratio else
                    f"close to ln(0.70 / 0.25) = {ln_ratio} (your scores are rounded)")
                 + ", whatever number your three scores start from.")
        if bank_gain is _UNSET:
            passed(first)
            return
        one = bank_gain
        if one is not None and not isinstance(one, str) and np.ndim(one) == 0:
            one = [one]                                   # a plain number, as the exercise asks
        if np.size(one) != 1 and not isinstance(one, str) and one is not None and one is not Ellipsis:
            raise ExerciseError(f"bank_gain holds {np.size(one)} numbers; it should be a single number: the "
                                "amount added to bank's score alone.")
        g = float(_vector(one, "bank_gain", 1, "a single number")[0])
        e = np.exp(np.log(NOTES_BANK) + [0.0, g, 0.0])
        got = float(e[1] / e.sum())
        if abs(got - 0.9) < 1e-3:
            factor, exact = f"{np.exp(g):.3f}", f"{np.exp(BANK_GAIN):.3f}"   # e^g, and the exact (0.9/0.1)/(0.7/0.3)
            if factor == exact:
                why = f"e^{g:.3f} = {factor} = (0.90 / 0.10) / (0.70 / 0.30)"
            else:   # a rounded gain: within the tolerance, but its e^g is not the exact factor at these digits
                why = (f"e^{g:.3f} = {factor}, close to (0.90 / 0.10) / (0.70 / 0.30) = {exact} (your gain is "
                       f"rounded; the exact one is ln({exact}) = {BANK_GAIN:.4f})")
            passed(f"{first} And adding {g:.3f} to bank's score makes its weight {got:.3f}: {why}, the factor by "
                   "which bank's odds (its weight over the other two's) must grow.")
            return
        then = f"with bank's score raised by {g:.3g}, bank's weight becomes {got:.3f}, not 0.90"
        if abs(g - np.log(0.9 / 0.7)) < 1e-3:
            raise ExerciseError(
                f"notes_scores is right, but {then}: you made bank's exponential 0.90 / 0.70 times larger, "
                "and the sum it is divided by grows with it. The other two exponentials stay as they are.")
        if abs(g - np.log(0.9 / 0.1)) < 1e-3:
            raise ExerciseError(
                f"notes_scores is right, but {then}: you set bank's odds (its weight over the other "
                "two's) to 9 (0.90 / 0.10), but they were already 0.70 / 0.30 = 7/3. Raising the score "
                "multiplies the odds by e^g: e^g is the new odds over the old.")
        if abs(g - np.exp(BANK_GAIN)) < 1e-3:
            raise ExerciseError(
                f"notes_scores is right, but {then}: {g:.3f} = (0.90 / 0.10) / (0.70 / 0.30) is the factor by "
                "which bank's odds (its weight over the other two's) must grow, but you forgot the log: a score "
                "raised by g multiplies the odds by e^g, so the gain is the logarithm of that factor.")
        if abs(g - (np.log(0.9 / 0.1) - np.log(0.70 / 0.25))) < 1e-3:
            raise ExerciseError(
                f"notes_scores is right, but {then}: your old odds, 0.70 / 0.25, are bank against money only. "
                "The new odds 0.90 / 0.10 are bank against the other two together, so the old ones must be "
                "too: 0.70 / 0.30.")
        if abs(g - 0.9 / 0.7) < 1e-3:
            raise ExerciseError(
                f"notes_scores is right, but {then}: {g:.3f} = 0.90 / 0.70 is the ratio of the two weights, "
                "not a score. A score raised by g multiplies bank's odds (its weight over the other two's) by "
                "e^g: take the log of the factor the odds must grow by.")
        if abs(g - (s[1] + BANK_GAIN)) < 1e-3 and abs(s[1]) > 1e-3:
            raise ExerciseError(
                f"notes_scores is right, but {then}: {g:.3f} is bank's new score, not the gain. bank_gain is "
                f"the number added to bank's score ({s[1]:.3f} in your notes_scores).")
        if abs(g - np.log(0.9)) < 1e-3:
            raise ExerciseError(
                f"notes_scores is right, but {then}: ln(0.90) = {g:.3f} is the log of the target weight. The "
                "gain is the log of a ratio of odds: the factor e^g by which bank's odds (its weight over the "
                "other two's) must grow, from 0.70 / 0.30 to 0.90 / 0.10.")
        if abs(g - np.log(0.9 * 0.3 / 0.7)) < 1e-3:
            raise ExerciseError(
                f"notes_scores is right, but {then}: ln(0.90 x 0.30 / 0.70) = {g:.3f} divides the target weight "
                "0.90 by bank's old odds 0.70 / 0.30, but the target must be odds too: the other two's weight "
                "becomes 0.10, so bank's new odds are 0.90 / 0.10.")
        if abs(g + BANK_GAIN) < 1e-3:
            raise ExerciseError(
                f"notes_scores is right, but {then}: your gain has the wrong sign. Lowering bank's score shrinks "
                "its weight; the gain that raises it to 0.90 is positive.")
        if abs(g - np.log10(np.exp(BANK_GAIN))) < 1e-3:
            raise ExerciseError(
                f"notes_scores is right, but {then}: {g:.3f} is the base-10 logarithm of the factor "
                f"{np.exp(BANK_GAIN):.3f}. Softmax uses e^x, so the gain is its natural logarithm, np.log.")
        if abs(g - 0.2) < 1e-3:
            raise ExerciseError(
                f"notes_scores is right, but {then}: you added the change of weight (0.90 - 0.70) to the "
                "score. A score is not a weight; softmax exponentiates it first.")
        raise ExerciseError(
            f"notes_scores is right, but {then}. Raising one score by g multiplies its exponential by e^g and "
            "leaves the others: write bank's new weight with that factor and solve for g.")

    def same(scores: np.ndarray) -> bool:
        return bool(np.allclose(w, reference_softmax(scores), atol=1e-3))

    if same(NOTES_BANK):
        raise ExerciseError(
            f"these are the weights themselves (or the weights plus a constant): {said}, flatter than the "
            "row asked for. Softmax exponentiates the scores, so undo it with the logarithm: np.log.")
    if same(np.exp(NOTES_BANK)):
        raise ExerciseError(
            f"you exponentiated the weights: {said}. Softmax already exponentiates; to go back from weights "
            "to scores take the logarithm (np.log), the inverse of np.exp.")
    if same(np.log10(NOTES_BANK)):
        raise ExerciseError(
            f"you used the base-10 logarithm: {said}. Softmax uses e^x, so its inverse is the natural "
            "logarithm, np.log.")
    if same(np.log2(NOTES_BANK)):
        raise ExerciseError(
            f"you used the base-2 logarithm: {said}. Softmax uses e^x, so its inverse is the natural "
            "logarithm, np.log.")
    if same(-np.log(NOTES_BANK)):
        raise ExerciseError(
            f"your scores have the wrong sign: {said}; the largest weight needs the largest score.")
    for order in itertools.permutations(range(3)):
        if order != (0, 1, 2) and same(np.log(NOTES_BANK[list(order)])):
            raise ExerciseError(
                f"your scores are in the wrong order: {said}. The order is money, bank, grows.")
    if same(np.log(_NOTES_RIVER_BANK)):
        raise ExerciseError(
            f"these give bank's row of *river bank flows*, {_fmt(_NOTES_RIVER_BANK)}: the exercise asks for "
            f"*money bank grows*, {_fmt(NOTES_BANK)}.")
    if same(np.log(_NOTES_MONEY)):
        raise ExerciseError(
            f"these give the row of *money*, {_fmt(_NOTES_MONEY)}: the exercise asks for the row of *bank*, "
            f"{_fmt(NOTES_BANK)}.")
    factor = _log_factor(w)
    if factor is not None:
        raise ExerciseError(
            f"your scores are the logarithms of the weights times {factor:.3g}: {said}. Adding the same number "
            "to every score keeps the weights; multiplying every score by a number does not (it sharpens or "
            "flattens the row).")
    raise ExerciseError(
        f"{said}, not the row asked for, {_fmt(NOTES_BANK)}. Write the softmax formula for one weight "
        "(section 3, From scores to weights) and solve it for the score: which function undoes the exponential, and what else may the scores contain?")


def _log_factor(w: np.ndarray) -> float | None:
    """c if the weights ``w`` are the notes' row raised to a power c > 0, c != 1 (the scores are c ln(alpha_j)
    plus a constant), else None."""
    got, want = np.log(w) - np.log(w).mean(), np.log(NOTES_BANK) - np.log(NOTES_BANK).mean()
    c = float(got @ want / (want @ want))
    if c > 0 and abs(c - 1) > 0.01 and np.allclose(got, c * want, atol=2e-3):
        return c
    return None


# --------------------------------------------------------------------------- exercise 2
_SMALL = ([[1.0, 2.0, 3.0], [0.77, 0.98, 0.56], [3.0, -1.0, 0.5]], [[-1.0, 0.5], [2.0, 0.0]], [[3.0]])
# Matrices that make one unstable version fail at a time (the small ones, whose rows have different maxima,
# already catch a shift or a sum that forgot keepdims=True): the first overflows without any shift, the second
# underflows without one, the third keeps a row [-1000, -1001] next to [0, 1], so one shift for the whole
# matrix underflows the first row; then [800, 0] overflows after subtracting the row's smallest score, [0, 800]
# after subtracting its first, [1600, 1600, 0] after subtracting half its largest, [0, 1600] after its mean.
# The last one catches each of these done in a longer float (np.longdouble reaches about e^11356 on x86).
_WIDE = ([[1000.0, 999.0, 998.0], [998.0, 1000.0, 999.0]], [[-1000.0, -1001.0], [-1001.0, -1000.0]],
         [[-1000.0, -1001.0], [0.0, 1.0]], [[800.0, 0.0], [0.0, 1.0]], [[0.0, 800.0], [1.0, 0.0]],
         [[1600.0, 1600.0, 0.0], [0.0, 1.0, 2.0]], [[0.0, 1600.0], [1.0, 0.0]],
         [[40000.0, 0.0], [0.0, 40000.0], [-40000.0, -40001.0], [0.0, 1.0]])
_UNSTABLE = {
    0: "np.exp(1000) overflows to inf, and inf / inf is NaN: your softmax exponentiates the scores as they are. "
       "Section 3's shift property lets you subtract any number c from a row without changing its weights: "
       "which c keeps every exponential from overflowing without letting all of them underflow to 0?",
    1: "every exponential underflows to 0 here, and 0 / 0 is NaN: your shift leaves every exponent far below 0 "
       "(subtracting each row's largest |score|, 1001 here, moves these scores down to about -2000). A shift "
       "by the same c keeps the weights: your c must keep at least one exponential from underflowing, and none "
       "from overflowing.",
    # the same matrix when the shift left [-600, -601] finite: c was near 0, not pushed further down
    -1: "every exponential underflows to 0 here, and 0 / 0 is NaN: your shift leaves these scores near -1000, "
        "below about -745, where np.exp underflows to 0 (on [[-600, -601]] your weights are right, so on this "
        "row you subtracted a number near 0). A shift that only guards against overflow, such as "
        "np.maximum(scores.max(axis=1, keepdims=True), 0), does that. Subtract each row's own largest score, "
        "here -1000, so that row's largest exponent is exactly 0.",
    2: "you subtracted one number for the whole matrix (its largest score, 1): the row [-1000, -1001] then "
       "underflows to 0 / 0. The shift property holds row by row: subtract each row's own largest score, "
       "scores.max(axis=1, keepdims=True).",
    3: "subtracting anything but the row's largest score does that (here the smallest, which in [800, 0] is "
       "also the second largest): the largest exponent is still 800 - 0 = 800, and np.exp(800) overflows. "
       "Subtract the row's largest score, so no exponent is above 0.",
    4: "subtracting the first score (or any score but the largest) does that: here the largest exponent is "
       "still 800 - 0 = 800, and np.exp(800) overflows. Subtract the largest score, so no exponent is above 0.",
    5: "subtracting half the largest score (or another fraction of it) does that: here the largest exponent "
       "is still 1600 - 800 = 800, and np.exp(800) overflows. Subtract the largest score itself, so no exponent "
       "is above 0.",
    6: "subtracting the mean does that: here the largest exponent is still 1600 - 800 = 800, and "
       "np.exp(800) overflows. Subtract the largest score instead, so no exponent is above 0.",
    7: "a longer float (np.longdouble) only moves the limit, to about e^11356, and these scores reach 40000. "
       "No float holds every exponential: shift each row by a number c instead, chosen so that no "
       "exponential overflows and not all of them underflow.",
}
_LIBRARY = re.compile(r"\b(softmax|logsumexp)\s*\(|\blogaddexp\b")
#: Names of library functions that do the shift themselves: a softmax, scipy's logsumexp or numpy's logaddexp.
_LIBRARY_NAMES = ("softmax", "logsumexp", "logaddexp")


def _calls_a_library_softmax(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` uses some library softmax: a call ``softmax(...)`` in its source, a name such as
    ``sa.softmax`` or ``special.softmax`` in its code (also when stored under another name first, as in
    ``g = sa.softmax``), or a global or closure variable that is such a function. A function the learner
    wrote (defined where ``fn`` was, e.g. an earlier ``softmax_row`` kept under another name) is no
    library: it is looked into in turn, also when it is called ``softmax``."""
    def library(name: str) -> bool:
        return any(k in name.lower() for k in _LIBRARY_NAMES)

    home = getattr(fn, "__module__", None)
    for f in learners_functions(fn):
        named = used_objects(f)
        for line in body_lines(f):
            for m in _LIBRARY.finditer(line):
                bare = m.group(1) and not line[:m.start()].rstrip().endswith(".")
                if not (bare and is_learners(named.get(m.group(1)), home)):   # the learner's own softmax
                    return True
        code = getattr(f, "__code__", None)
        if code is None:
            continue
        scope = getattr(f, "__globals__", {})
        if any(library(name) and not is_learners(scope.get(name), home)       # e.g. special.softmax
               for name in code_names(code) - {f.__name__}):
            return True
        if any(callable(g) and not is_learners(g, home) and library(getattr(g, "__name__", ""))
               for g in used_objects(f).values()):                           # e.g. g = sa.softmax
            return True
    return False


class LibrarySoftmaxCalled(Exception):
    """Raised by the stand-ins of library softmaxes while a learner's softmax_row runs."""


#: Where the library softmaxes live: module name -> attributes that do the shift for the caller.
_LIBRARY_PLACES = {
    "selfattention": ("softmax",), "selfattention.core": ("softmax",),
    "scipy.special": ("softmax", "log_softmax", "logsumexp"),
    "torch": ("softmax", "log_softmax", "logsumexp"), "torch.special": ("softmax", "log_softmax", "logsumexp"),
    "torch.nn.functional": ("softmax", "log_softmax"),
}


@contextlib.contextmanager
def library_softmaxes_blocked() -> Iterator[None]:
    """While the block runs, every library softmax (selfattention's, scipy's, torch's, their logsumexp and
    numpy's logaddexp) in a module already imported is replaced by a stand-in that raises
    LibrarySoftmaxCalled, so a call reached by any route (``getattr(sa, "soft" + "max")`` included) is seen.
    Everything is put back afterwards."""
    places: list[tuple[Any, tuple[str, ...]]] = [(sys.modules.get(name), attrs)
                                                 for name, attrs in _LIBRARY_PLACES.items()]
    places.append((np, ("logaddexp",)))
    torch = sys.modules.get("torch")
    if torch is not None:                                   # x.softmax(dim=1) on a tensor
        places.append((torch.Tensor, ("softmax", "log_softmax", "logsumexp")))
    with stand_ins(places, LibrarySoftmaxCalled):
        yield


_LIBRARY_MESSAGE = (
    "softmax_row calls a library function that does the shift for you (sa.softmax, scipy's softmax or "
    "logsumexp, np.logaddexp, torch's softmax): the exercise asks you to write the shift, the "
    "exponentials and the division yourself, with np.exp.")


def _right_on(softmax_row: Callable[[np.ndarray], Any], rows: list[list[float]]) -> bool:
    """Whether ``softmax_row`` gives the right weights on ``rows`` (False if it fails in any way)."""
    s = np.array(rows)
    try:
        with np.errstate(all="ignore"), library_softmaxes_blocked():
            got = np.asarray(softmax_row(s.copy()), dtype=float)
        return got.shape == s.shape and bool(np.allclose(got, reference_softmax(s)))
    except Exception:  # noqa: BLE001  (any failure means: not right on these rows)
        return False


def check_softmax_row(softmax_row: Callable[[np.ndarray], Any]) -> None:
    """Exercise 2: a softmax of each row of a matrix of scores, shape (n, T) -> (n, T), that never overflows:
    tried on small matrices, then on matrices where each unstable version (no shift; one shift for the whole
    matrix; the smallest, the first or the mean subtracted) fails."""
    if softmax_row is None or softmax_row is Ellipsis:
        raise ExerciseError("softmax_row is not defined yet: write the function in the answer cell above.")
    if not callable(softmax_row):
        raise ExerciseError(f"softmax_row should be a function, but it is a {type(softmax_row).__name__}.")
    if _calls_a_library_softmax(softmax_row):
        raise ExerciseError(_LIBRARY_MESSAGE)
    for number, rows in enumerate(_SMALL + _WIDE):
        s = np.array(rows)
        where = f"the scores {rows}"
        try:
            with np.errstate(all="ignore"), library_softmaxes_blocked():
                got = softmax_row(s.copy())
        except ExerciseError:
            raise
        except LibrarySoftmaxCalled:
            raise ExerciseError(_LIBRARY_MESSAGE) from None
        except Exception as exc:  # the learner's code crashed: say where, in one line
            raise ExerciseError(f"softmax_row raised {type(exc).__name__} on {where}: {exc}") from None
        try:
            arr = np.asarray(got, dtype=float)
        except (TypeError, ValueError):
            arr = None
        wide = number - len(_SMALL)
        if wide >= 0 and arr is not None and arr.shape == s.shape and not np.isfinite(arr).all():
            if wide == 1 and _right_on(softmax_row, [[-600.0, -601.0]]):
                wide = -1                               # the shift was near 0 here, not too far down
            raise ExerciseError(f"softmax_row gives {_fmt(arr)} on {where}: {_UNSTABLE[wide]}")
        with np.errstate(all="ignore"):
            top = s.max(axis=1, keepdims=True)
            e = np.exp(s - top)
            mistakes = {
                "you divided the scores by their sum. Softmax divides the *exponentials* by their sum, "
                "which keeps every weight positive.": s / s.sum(axis=1, keepdims=True),
                "these are the exponentials np.exp(scores), not yet normalised: divide them by their row's sum "
                "so that each row of weights adds up to 1.": np.exp(s),
                "you shifted the scores by their maximum but did not exponentiate them: the weights are the "
                "exponentials of the shifted scores divided by their sum.": s - top,
                "your weights are np.exp(scores - max), the exponentials over the largest one: they do not add "
                "up to 1. Divide the shifted exponentials by their sum.": e,
                "your rows do not add up to 1: you divided by the sum of the whole matrix. Each row is its own "
                "softmax: sum over axis=1 with keepdims=True.": e / e.sum(),
                "your weights are all equal, yet the scores differ: the differences between the scores were "
                "lost (clipping large scores, or replacing NaN by equal weights, does that), and softmax needs "
                "exactly those differences. Shift every score by the same number instead.":
                    np.full(s.shape, 1 / s.shape[1]),
                "you shifted by scores.max(axis=0, ...): each column's largest score, so the scores of one row "
                "are shifted by different numbers and their differences change. The shift must be the same "
                "for a whole row: scores.max(axis=1, keepdims=True).": (
                    np.exp(s - s.max(axis=0, keepdims=True))
                    / np.exp(s - s.max(axis=0, keepdims=True)).sum(axis=1, keepdims=True)),
                "each column of your weights sums to 1, not each row: you took the softmax down the columns "
                "(axis=0). Row i of the scores gives row i of the weights: use axis=1.": reference_softmax(s, 0),
                "your weights are all 0 here, so they do not add up to 1: np.exp overflowed and the inf or NaN "
                "was replaced (np.nan_to_num does that), which hides the overflow instead of avoiding it. Shift "
                "every score by the same number first.": np.zeros(s.shape),
            }
            if s.shape[0] == s.shape[1] > 1:   # only a square matrix broadcasts an (n,) array without an error
                flat = np.exp(s - s.max(axis=1))
                mistakes["you subtracted scores.max(axis=1) without keepdims=True: that (n,) array is subtracted "
                         "from every row, so column j is shifted by row j's maximum and each row by different "
                         "numbers. Keep the axis: scores.max(axis=1, keepdims=True), shape (n, 1)."] = (
                    flat / flat.sum(axis=1, keepdims=True))
                mistakes["your result is the right weights transposed: row i of the scores must give row i "
                         "of the weights, but yours are in column i (a .T, or a softmax down the columns of "
                         "scores.T, not turned back). Return the weights with the rows of the scores."] = (
                    reference_softmax(s).T)
                mistakes["you divided by e.sum(axis=1) without keepdims=True: that (n,) array divides the "
                         "columns, not the rows, so the rows do not add up to 1. Keep the axis: "
                         "e.sum(axis=1, keepdims=True)."] = e / e.sum(axis=1)
        try:
            check_array(got, reference_softmax(s), "the result of softmax_row", mistakes=mistakes)
        except ExerciseError as err:
            raise ExerciseError(f"{err} (on {where})") from None
    trap = np.array(_WIDE[2])
    passed(f"your softmax is right on small matrices and stays finite on the wide ones: on [[-1000, -1001], "
           f"[0, 1]] it gives {_fmt(reference_softmax(trap))}, with no overflow and no 0 / 0; on "
           f"[[0, 1600], [1, 0]] {_fmt(reference_softmax(np.array(_WIDE[6])))}.")


# --------------------------------------------------------------------------- exercise 3
#: The toy "bank" between the two designed words, and the bars of exercise 3.
_BANK = np.array([0.7, 0.7, 0.0, 0.0])
ONE_SIDED_HIGH, ONE_SIDED_LOW, ONE_SIDED_BOUND = 0.5, 0.2, 2.0


def _toy_word(got: Any, name: str) -> np.ndarray:
    v = _to_array(got, name, empty=f"{name} has no value yet: write 4 numbers (finance, nature, food, tech).",
                  not_numbers=f"{name} should be 4 numbers, but it is a {type(got).__name__}.")
    if v.shape != (4,):
        raise ExerciseError(f"{name} has shape {v.shape}: give 4 numbers (finance, nature, food, tech).")
    if not np.isfinite(v).all():
        raise ExerciseError(f"{name} = {_fmt(v)} is not finite.")
    return v


def check_one_sided(x_1: Any, x_3: Any = _UNSET) -> None:
    """Exercise 3: toy vectors x_1, x_3 (every coordinate in [-2, 2]) for the sentence (x_1, bank, x_3) with
    alpha_13 > 0.5 but alpha_31 < 0.2. Both weights have the numerator e^omega_13; they differ by the row sums,
    alpha_13 / alpha_31 = S_3 / S_1. Names the typical mistakes."""
    v1 = _toy_word(x_1, "x_1")
    v3 = _toy_word(None if x_3 is _UNSET else x_3, "x_3")
    big = max(np.abs(v1).max(), np.abs(v3).max())
    if big > ONE_SIDED_BOUND + 1e-9:
        raise ExerciseError(
            f"a coordinate of {big:.3g} is beyond 2: a huge vector wins any row by brute force. Within [-2, 2] "
            "the row sums must do it: the two weights share the numerator e^omega_13, so what else differs?")
    X = np.stack([v1, _BANK, v3])
    omega = X @ X.T
    e = np.exp(omega - omega.max())
    sums = e.sum(axis=1)
    A = e / sums[:, None]
    a13, a31 = float(A[0, 2]), float(A[2, 0])
    said = f"alpha_13 = {a13:.3f}, alpha_31 = {a31:.3f}"
    ratio = sums[2] / sums[0]
    if a13 > ONE_SIDED_HIGH and a31 < ONE_SIDED_LOW:
        passed(f"{said}, though omega_13 = omega_31 = {omega[0, 2]:.2f}. Both weights are e^{omega[0, 2]:.2f} "
               f"over a row sum, so alpha_13 / alpha_31 = S_3 / S_1 = {ratio:.2f}: word 3's row holds its own "
               f"large score |x_3|^2 = {omega[2, 2]:.2f}, word 1's row only {omega[0, 0]:.2f}. Symmetric scores, "
               "one-sided weights.")
        return
    if abs(a13 - a31) < 1e-3:
        raise ExerciseError(
            f"{said}: equal, because the two rows have equal row sums (S_1 = S_3). The weights share the "
            "numerator e^omega_13; only different row sums can make them differ.")
    if a31 > ONE_SIDED_HIGH and a13 < ONE_SIDED_LOW:
        raise ExerciseError(
            f"{said}: the roles are swapped, word 3 gives word 1 most of its row. Asked: word 1 gives word 3 "
            "more than half, word 3 gives word 1 less than 0.2.")
    zero = [name for name, v in (("x_1", v1), ("x_3", v3)) if not v.any()]
    if zero and a13 <= ONE_SIDED_HIGH:
        raise ExerciseError(
            f"{said}: {' and '.join(zero)} {'is' if len(zero) == 1 else 'are'} the zero vector, so "
            "omega_13 = x_1 . x_3 = 0 and e^omega_13 = 1, while word 1's own score gives at least e^0 = 1 in "
            "the same row: word 3 cannot get more than half. Give both words a length, x_1 pointing partly "
            "the way x_3 points.")
    if a13 <= ONE_SIDED_HIGH and omega[0, 2] <= 0:
        raise ExerciseError(
            f"{said}: omega_13 = x_1 . x_3 = {omega[0, 2]:.2f} is not above 0, because x_1 points away from x_3 "
            f"(or across it). Then e^omega_13 = {np.exp(omega[0, 2]):.2f} is at most 1, while word 1's own score "
            "gives at least e^0 = 1 in the same row: word 3 cannot get more than half. Point x_1 partly the "
            "way x_3 points.")
    if a13 <= ONE_SIDED_HIGH:
        rest = float(np.exp(omega[0, 0]) + np.exp(omega[0, 1]))
        raise ExerciseError(
            f"{said}: word 1 gives word 3 only {a13:.3f}. In row 1, e^omega_13 = {np.exp(omega[0, 2]):.2f} must "
            f"beat the rest, e^omega_11 + e^omega_12 = {rest:.2f}: word 1's own score and its score with bank "
            "compete with word 3.")
    raise ExerciseError(
        f"{said}: word 3 still gives word 1 {a31:.3f}, not below 0.2. alpha_13 / alpha_31 = S_3 / S_1 is only "
        f"{ratio:.2f}. Two levers raise it: a larger own score |x_3|^2 (now {omega[2, 2]:.2f}) fills S_3"
        + (", though x_3 already reaches the bound of 2 on one coordinate (the others can still lengthen it),"
           if np.abs(v3).max() >= ONE_SIDED_BOUND - 1e-9 else "")
        + f" and a shorter x_1 (own score |x_1|^2 = {omega[0, 0]:.2f}) keeps S_1 smaller.")
