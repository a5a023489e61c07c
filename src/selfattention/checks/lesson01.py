"""Checks for lesson 01 (static embeddings): a vector on which the dot product and the cosine disagree, four
rankings of neighbours, and a sentence whose mean row outvotes "money" for the river sense of "bank"."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from ._engine import ExerciseError, passed

__all__ = ["check_dot_cosine_disagree", "check_outvote", "check_rankings"]

# The lesson's hand-checkable 2-D vectors: A . C = 11, B . C = 26.
_A, _B, _C = np.array([1.0, 4.0]), np.array([4.0, 7.0]), np.array([3.0, 2.0])


DISAGREE_MIN_COS = 0.95  # exercise 1: cos(D, C) must exceed this while D . C = A . C


def _reference_cosine(u: np.ndarray, v: np.ndarray) -> float:
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


def _rounding_hint(dot: float, target: float) -> str:
    if abs(dot - target) < 0.05:
        return (" within 1e-6; yours is off by a little, most likely because its numbers were rounded: compute D "
                "with NumPy instead of typing rounded decimals")
    return ""


_NOT_GIVEN = object()  # exercise 1's prediction, when a caller (an older record) passes D alone


def check_dot_cosine_disagree(D: Any, D_is: Any = _NOT_GIVEN) -> None:
    """Exercise 1: a (2,) vector D with D . C = A . C = 11 but cos(D, C) > 0.95 (A's cosine is 0.740), and the
    prediction ``D_is``, "longer" or "shorter" than A (it must be "shorter": |D| |C| cos = 11 with a larger cos); a
    wrong prediction is told to compare the lengths, without being told the answer."""
    if D is None or D is Ellipsis:
        raise ExerciseError("D has no value yet: set it to a NumPy array of two numbers.")
    try:
        d = np.asarray(D, dtype=float)
    except (TypeError, ValueError):
        raise ExerciseError(f"D should be two numbers, but it is a {type(D).__name__}: {D!r:.80}") from None
    if d.shape != _C.shape:
        raise ExerciseError(f"D has shape {d.shape}; it lives in the same 2-D plane as A and C, shape (2,).")
    if not np.all(np.isfinite(d)):
        raise ExerciseError(f"D = {d.tolist()} contains NaN or infinity; use two ordinary numbers.")
    target = float(_A @ _C)
    dot = float(d @ _C)
    cos = _reference_cosine(d, _C) if np.linalg.norm(d) > 0 else 0.0
    if np.allclose(d, _A):
        raise ExerciseError(f"D is A itself: the dot product is right ({target:g}) but the cosine is A's, {cos:.3f}; "
                            "turn D towards C, and change its length so that D . C stays 11.")
    if not np.isclose(dot, target, rtol=0, atol=1e-6):
        along_a = abs(float(d @ _A)) > 0 and abs(d[0] * _A[1] - d[1] * _A[0]) < 1e-9 * np.linalg.norm(d)
        if along_a:
            scale = float(d @ _A / (_A @ _A))          # D = scale * A
            times = {1.0: "", -1.0: "-"}.get(scale, f"{scale:.3g}")
            if scale < 0:
                did = (f"D is A flipped (D = {times}A): it points against A, so its cosine is A's with the sign "
                       f"turned, {cos:.3f}, and the dot product turns negative too, D . C = {dot:.6g}")
            else:
                did = (f"D is A {'lengthened' if scale > 1 else 'shortened'} (D = {times}A): it points exactly "
                       f"like A, so its cosine stays A's, {cos:.3f}, while the dot product scales with the length, "
                       f"D . C = {dot:.6g}")
            raise ExerciseError(f"{did}, not {target:g}. Changing A's length or sign cannot raise the cosine: turn D "
                                "towards C instead.")
        if cos > 1 - 1e-9:
            raise ExerciseError(f"D points exactly along C (cosine 1), but D . C = {dot:.6g}, not {target:g}: "
                                f"scale it so that D . C = {target:g}{_rounding_hint(dot, target)}.")
        raise ExerciseError(f"D . C = {dot:.6g}, but it must equal A . C = {target:g} (the same dot product as A)"
                            f"{_rounding_hint(dot, target)}.")
    if cos <= DISAGREE_MIN_COS:
        raise ExerciseError(f"D . C = {target:g} as asked, but cos(D, C) = {cos:.3f}; it must be above "
                            f"{DISAGREE_MIN_COS}: turn D more towards C, keeping D . C = {target:g}.")
    shorter = "shorter" if np.linalg.norm(d) < np.linalg.norm(_A) else "longer"
    if D_is is not _NOT_GIVEN:
        said = D_is.strip().lower() if isinstance(D_is, str) else D_is
        if said is None or said is Ellipsis:
            raise ExerciseError("D is right, but D_is has no value yet: set it to \"longer\" or \"shorter\", "
                                "your prediction of D's length against A's.")
        if said not in ("longer", "shorter"):
            raise ExerciseError(f"D is right, but D_is = {D_is!r:.40}; it should be the word \"longer\" or "
                                "\"shorter\".")
        if said != "shorter":
            raise ExerciseError(f"D is right, but D_is = {said!r} is not what your D shows: compute |D| and |A| "
                                "and compare them, then check it against D . C = |D| |C| cos(theta), which stays "
                                "11 while cos(theta) grows.")
    passed(f"D . C = {dot:.3f} = A . C, but cos(D, C) = {cos:.3f} against cos(A, C) = {_reference_cosine(_A, _C):.3f}; "
           f"|D| = {np.linalg.norm(d):.3f} is {shorter} than |A| = {np.linalg.norm(_A):.3f}.")


# Exercise 2's toy table: the neighbours of "bank" = [1, 1] among six words. "giant" is long and points elsewhere,
# "dust" is tiny (length 0.0145) and points almost exactly like "bank".
_TOY_WORDS = ["money", "cash", "river", "giant", "shore", "dust"]
_TOY_ROWS = np.array([[0.75, 0.25], [0.9, 0.4], [0.1, 1.0], [6.0, -1.5], [0.5, 1.0], [1e-2, 1.05e-2]])
_TOY_BANK = np.array([1.0, 1.0])
_MEASURES = {  # name -> (what it is, score of each word: higher is nearer)
    "by_dot": ("the plain dot product", _TOY_ROWS @ _TOY_BANK),
    "by_cosine": ("the cosine", _TOY_ROWS @ _TOY_BANK / (np.linalg.norm(_TOY_ROWS, axis=1) * np.linalg.norm(_TOY_BANK))),
    "by_distance": ("the Euclidean distance between the rows as given", -np.linalg.norm(_TOY_ROWS - _TOY_BANK, axis=1)),
    "by_unit_distance": ("the distance between the rows scaled to length 1",
                         -np.linalg.norm(_TOY_ROWS / np.linalg.norm(_TOY_ROWS, axis=1, keepdims=True)
                                         - _TOY_BANK / np.linalg.norm(_TOY_BANK), axis=1)),
}


_LENGTHS = np.linalg.norm(_TOY_ROWS, axis=1)               # distance from the origin: a mistake for by_distance
_MANHATTAN = -np.abs(_TOY_ROWS - _TOY_BANK).sum(axis=1)   # the L1 distance: a mistake for by_distance
_BY_COLUMN = _TOY_ROWS / np.linalg.norm(_TOY_ROWS, axis=0)  # columns scaled, not rows: a mistake for (b), (d)
_COLUMN_SCALED = {  # the ranking each of (b) and (d) gets with the columns scaled to length 1 instead of the rows
    "by_cosine": _BY_COLUMN @ _TOY_BANK / np.linalg.norm(_TOY_BANK),
    "by_unit_distance": -np.linalg.norm(_BY_COLUMN - _TOY_BANK / np.linalg.norm(_TOY_BANK), axis=1),
}
# Each dot product divided by the row's length squared: a mistake for (b) and (d).
_SQUARED = _TOY_ROWS @ _TOY_BANK / (_LENGTHS ** 2 * np.linalg.norm(_TOY_BANK))
# Rows not each brought to length 1 (one norm for the whole table, or each row over its squared length): (d).
_NOT_UNIT = -np.linalg.norm(_TOY_ROWS / np.linalg.norm(_TOY_ROWS) - _TOY_BANK / np.linalg.norm(_TOY_BANK), axis=1)


def _top(name: str, k: int = 3, farthest: bool = False) -> list[str]:
    scores = _MEASURES[name][1]
    order = np.argsort(scores if farthest else -scores, kind="stable")
    return [_TOY_WORDS[j] for j in order[:k]]


def _as_words(got: Any, name: str) -> list[str]:
    if got is None or got is Ellipsis:
        raise ExerciseError(f"{name} has no value yet: set it to a list of three words, nearest first.")
    if isinstance(got, np.ndarray):
        got = got.tolist()
    if isinstance(got, str) or not isinstance(got, (list, tuple)):
        raise ExerciseError(f"{name} should be a list of three words such as ['money', 'cash', 'river'], but it is "
                            f"a {type(got).__name__}.")
    if got and all(isinstance(w, (int, np.integer)) and not isinstance(w, bool) and 0 <= w < len(_TOY_WORDS)
                   for w in got):
        raise ExerciseError(f"{name} = {[int(w) for w in got]} holds row numbers, not words: map the indices "
                            "through toy_words, e.g. [toy_words[j] for j in order[:3]].")
    words = [str(w).strip().lower() if isinstance(w, str) else w for w in got]
    unknown = [w for w in words if w not in _TOY_WORDS and w != "bank"]
    if unknown:
        raise ExerciseError(f"{name} holds {unknown[0]!r}, which is not a word of the toy table "
                            f"({', '.join(_TOY_WORDS)}).")
    return words


_OWNER = {"by_dot": "the dot product's", "by_cosine": "the cosine's", "by_distance": "the Euclidean distance's",
          "by_unit_distance": "the unit-row distance's"}


def _judge(name: str, words: list[str], answers: dict[str, list[str]]) -> None:
    what, _ = _MEASURES[name]
    expected = _top(name)
    if words == expected:
        return
    if "bank" in words:
        raise ExerciseError(f"{name} holds 'bank' itself: every measure ranks a word nearest to itself, so leave "
                            "it out and list the three nearest OTHER words.")
    if len(words) == 2 and set(words) == set(_TOY_WORDS[:2]) and "distance" in name:
        raise ExerciseError(f"{name} = {words} holds 2 words, rows 0 and 1: a norm over axis=0 gives one number "
                            "per COLUMN, and the toy table has two; take it over axis=1, one distance per row.")
    if len(words) != 3:
        raise ExerciseError(f"{name} holds {len(words)} words; it should hold the three nearest, nearest first.")
    if words == _top(name, k=4)[1:] and not any(words == _top(other) for other in _MEASURES):
        raise ExerciseError(f"{name} = {words} skips the nearest word, {_top(name)[0]!r}: the toy table has no "
                            "row for \"bank\", so nothing needs to be left out; keep the first three.")
    if words == expected[::-1]:
        raise ExerciseError(f"{name} = {words} has the right three words, but reversed: nearest last. np.argsort "
                            "and sorted() go from small to large, so [-3:] of an ascending order ends with the "
                            "nearest; list the nearest first (reverse it with [::-1]).")
    if words == _top(name, farthest=True)[::-1]:
        raise ExerciseError(f"{name} = {words} lists the three FARTHEST words by {what}, farthest last: "
                            + ("the smallest distance is the nearest, so take the first three of an ascending "
                               "order, not the last." if "distance" in name else
                               "the largest score is the nearest, so take the last three of an ascending order "
                               "reversed, or the first three of a descending one."))
    if words == _top(name, farthest=True):
        raise ExerciseError(f"{name} = {words} lists the three FARTHEST words by {what}; nearest means the "
                            + ("smallest distance." if "distance" in name else "largest score."))
    if sorted(words) == sorted(expected):
        raise ExerciseError(f"{name} has the right three words in the wrong order; list the nearest first.")
    if name == "by_distance" and words == [_TOY_WORDS[j] for j in np.argsort(_LENGTHS, kind="stable")[:3]]:
        raise ExerciseError(f"{name} = {words} ranks the rows by their own length, their distance from the origin; "
                            "the distance asked for is from \"bank\": the length of x_bank - x_j.")
    if name == "by_distance" and words == [_TOY_WORDS[j] for j in np.argsort(-_MANHATTAN, kind="stable")[:3]]:
        raise ExerciseError(f"{name} = {words} is the ranking by the Manhattan (L1) distance, the sum of the "
                            "absolute differences; the Euclidean distance squares the differences, adds them and "
                            "takes the square root: np.linalg.norm(toy_rows - toy_bank, axis=1).")
    if name in _COLUMN_SCALED and words == [_TOY_WORDS[j] for j in np.argsort(-_COLUMN_SCALED[name],
                                                                             kind="stable")[:3]]:
        raise ExerciseError(f"{name} = {words} is what you get by scaling the COLUMNS of toy_rows to length 1 "
                            "(axis=0); each ROW is a word and must be scaled by its own length: "
                            "np.linalg.norm(toy_rows, axis=1, keepdims=True).")
    if name == "by_cosine" and words == _top("by_dot"):
        raise ExerciseError(f"{name} = {words} is the dot product's ranking: the lengths were not divided out row "
                            "by row. np.linalg.norm(toy_rows) without axis=1 is one number for the whole table, "
                            "which leaves the dot product's order; divide each dot product by that row's own "
                            "length, np.linalg.norm(toy_rows, axis=1).")
    if name in _COLUMN_SCALED and words == [_TOY_WORDS[j] for j in np.argsort(-_SQUARED, kind="stable")[:3]]:
        raise ExerciseError(f"{name} = {words} is what dividing each dot product by the row's length SQUARED "
                            "gives (|x_j|^2, e.g. x_j . x_j); the cosine divides by each length once: "
                            "x_j . x_bank / (|x_j| |x_bank|).")
    if name == "by_unit_distance" and words == [_TOY_WORDS[j] for j in np.argsort(-_NOT_UNIT, kind="stable")[:3]]:
        raise ExerciseError(f"{name} = {words} is what the distance gives when the rows are not each scaled to "
                            "length 1: divided by one norm of the whole table (np.linalg.norm without axis=1) "
                            "or by their lengths squared. Divide every row by its own length: "
                            "np.linalg.norm(toy_rows, axis=1, keepdims=True).")
    if name == "by_unit_distance" and words == _top("by_distance"):
        raise ExerciseError(f"{name} = {words} is the ranking by the distance to rows of their own lengths: the "
                            "rows of toy_rows were not scaled to length 1 (scaling \"bank\" alone does not change "
                            "this order). Divide every row by its own length first.")
    # Another measure's ranking: say whose, where that gives nothing away (the learner gave the same list for
    # that measure too, or swapped the two lists), so a misplaced list is not taken for a wrong computation.
    for other in _MEASURES:
        if other != name and words == _top(other) and answers.get(other) in (words, expected):
            swapped = answers.get(other) == expected and words != expected
            raise ExerciseError(f"{name} = {words} is {_OWNER[other]} ranking, not the ranking by {what}"
                                + (f"; {name} and {other} look swapped." if swapped else "; " + _WHY[name]))
    raise ExerciseError(f"{name} = {words} is not the ranking by {what}: {_first_wrong_place(name, words, expected)}; "
                        + _WHY[name])


def _first_wrong_place(name: str, words: list[str], expected: list[str]) -> str:
    """The first place where ``words`` departs from ``expected``, with the learner's word's value under the
    measure; the right word is not named, so the message cannot be used to guess the list place by place."""
    i = next(i for i, (w, e) in enumerate(zip(words, expected, strict=True)) if w != e)
    sign = -1.0 if "distance" in name else 1.0            # distances are stored negated (higher is nearer)
    mine = sign * float(_MEASURES[name][1][_TOY_WORDS.index(words[i])])
    return (f"place {i + 1} is the first wrong one: {words[i]!r} has {mine:.3f} under this measure, and another "
            "row is nearer; compute the measure for every row and sort")


_WHY = {
    "by_dot": "the dot product grows with the lengths, so a long row can win while pointing elsewhere.",
    "by_cosine": "the cosine divides both lengths out and keeps only the direction, however short a row is.",
    "by_distance": "the distance counts a difference in length as much as one in direction, so very short and "
                   "very long rows are both far.",
    "by_unit_distance": "for rows of length 1, |u - v|^2 = |u|^2 + |v|^2 - 2 u . v = 2 - 2 cos(u, v): work out "
                        "which of the other rankings that gives.",
}


def check_rankings(by_dot: Any, by_cosine: Any, by_distance: Any, by_unit_distance: Any) -> None:
    """Exercise 2: the three nearest neighbours of "bank" in the toy table by four measures, nearest first.

    Each list is judged on its own: "bank" itself kept, the three farthest words, the right words in the wrong
    order, a wrong length, row numbers instead of words, and for by_distance the Manhattan (L1) distance or the
    rows' own lengths are each named, as are a norm without axis=1 or over axis=0, a division by the squared
    length, and rows not each scaled to length 1; another measure's ranking is named as
    such where that gives nothing away (the learner gave it for that measure too, or swapped two lists); any
    other wrong list is told it is not the ranking asked for, with why that measure ranks as it does.
    """
    given = {"by_dot": by_dot, "by_cosine": by_cosine, "by_distance": by_distance,
             "by_unit_distance": by_unit_distance}
    answers = {name: _as_words(got, name) for name, got in given.items()}
    for name, words in answers.items():
        _judge(name, words, answers)
    passed("by dot product " + ", ".join(_top("by_dot")) + "; by cosine " + ", ".join(_top("by_cosine"))
           + "; by distance " + ", ".join(_top("by_distance")) + "; by distance between unit rows "
           + ", ".join(_top("by_unit_distance")) + ". Why: the dot product puts \"giant\" first, over four times "
           "longer than \"bank\" though it points 59 degrees away; the cosine puts the tiny \"dust\" first, as it "
           "points almost exactly like \"bank\"; the distance buries both (\"dust\" sits near the origin, 1.4 from "
           "\"bank\") and brings in \"money\", as it asks for the same length and direction. For rows of length 1, "
           "|u - v|^2 = 2 - 2 cos(u, v), so (d) is the cosine's list (with \"bank\" left unscaled, too: "
           "|u - b|^2 = 1 + |b|^2 - 2 |b| cos(u, b)). Were your predictions right?")


# ---- exercise 3: a sentence with "bank" and "money" whose mean row still leans to the river side

RIVER_SIDE = ("shore", "stream", "water", "lake", "canal", "creek", "flood", "muddy", "fishing", "riverside")
FINANCE = ("loan", "cash", "deposit", "mortgage", "credit", "finance", "loans", "savings", "account", "payment")
OUTVOTE_LENGTH = (3, 8)  # the sentence has 3 to 8 words
PUNCTUATION = ".,;:!?'\"()"  # stripped from both ends of each word, as the hidden test does ("bank," is "bank")


@lru_cache(maxsize=1)
def _outvote_table() -> tuple[Any, np.ndarray]:
    """The lesson's table and its direction r = mean unit row of RIVER_SIDE - mean unit row of FINANCE (float64)."""
    from ..data import load_static_embeddings

    table = load_static_embeddings()

    def mean_unit(words: tuple[str, ...]) -> np.ndarray:
        rows = np.stack([table.vector(w).astype(np.float64) for w in words])
        return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).mean(axis=0)

    return table, mean_unit(RIVER_SIDE) - mean_unit(FINANCE)


# The rule the lesson states, by spelling alone: a word is barred if its letters contain a judge word, or one of
# the stems below, anywhere ("lakes", "lakeside", "upstream", "blake", "cashew", "financial", "saving"). The stems
# cover the forms that drop a judge word's last letters (finance -> financial, savings -> saving, mortgage ->
# mortgaging, muddy -> muddied). "credible" is free: it holds "credi", not "credit"; "river" is free: it does not
# hold "riverside".
STEMS = ("financ", "saving", "mortgag", "mudd")


def _judge_part(word: str) -> tuple[str, str] | None:
    """(the judge word, the letters of `word` that match it) if `word` contains a judge word or a stem."""
    for judge in RIVER_SIDE + FINANCE:
        if judge in word:
            return judge, judge
    stem_of = {"financ": "finance", "saving": "savings", "mortgag": "mortgage", "mudd": "muddy"}
    for stem in STEMS:
        if stem in word:
            return stem_of[stem], stem
    return None


def _where(word: str, part: str) -> str:
    if word.startswith(part):
        return "begins with"
    return "ends with" if word.endswith(part) else "contains"


def check_outvote(sentence: Any) -> None:
    """Exercise 3: a list of 3 to 8 whole words of the table, with "bank" and "money" and none of the 20 words of
    the two judge lists nor a word whose letters contain one (or a stem of STEMS) anywhere, whose mean row z
    leans to the river side: z . r > 0, r = toward_river.

    Punctuation at either end of a word is dropped ("bank," is "bank"), as in the hidden test.
    Named mistakes: no value, one string instead of a list, a punctuation mark as a word, several words in one
    string, a wrong length, no "bank", no "money", a word of the
    judge lists or a word that contains one (the shortcut; the message says which letters, whatever the word means), a word the table does not hold whole, a word used twice, and a mean that leans
    to finance (with the sum of the votes x_j . r). Every message after the first two shows the learner's list
    as given, and the votes are listed word by word in that order, so the sum can be checked.
    """
    if sentence is None or sentence is Ellipsis:
        raise ExerciseError("sentence has no value yet: replace None with a list of words.")
    if isinstance(sentence, (str, bytes)):
        raise ExerciseError(f"sentence is one string, {sentence!r:.60}: make it a list of words, such as "
                            "['the', 'bank', ...] (sentence.split() does it).")
    try:
        raw = [str(w).strip().lower() for w in sentence]
    except TypeError:
        raise ExerciseError(f"sentence should be a list of words, but it is a {type(sentence).__name__}.") from None
    not_text = [w for w in sentence if not isinstance(w, str)]
    if not_text:
        raise ExerciseError(f"sentence holds {not_text[0]!r} (of type {type(not_text[0]).__name__}), "
                            "which is not a word. Write each word as a string in quotes, e.g. ['the', 'river', 'bank', ...].")
    words = [w.strip(PUNCTUATION) for w in raw]                      # "bank," is "bank"
    low, high = OUTVOTE_LENGTH
    given = f"sentence = {words}"
    marks = [r for r, w in zip(raw, words, strict=True) if not w]
    if marks:
        raise ExerciseError(f"sentence = {raw} holds {marks[0]!r}, punctuation and not a word: leave it out.")
    several = [w for w in words if len(w.split()) > 1]
    if several:
        raise ExerciseError(f"{given}: {several[0]!r} is several words in one string; give each word on its own, "
                            "e.g. with .split().")
    if not low <= len(words) <= high:
        raise ExerciseError(f"{given} has {len(words)} words: the exercise asks for {low} to {high}.")
    if "bank" not in words:
        raise ExerciseError(f"{given} has no \"bank\": the word whose sense is at stake must be in it.")
    if "money" not in words:
        raise ExerciseError(f"{given} has no \"money\": the exercise asks you to outvote it, so it must be in "
                            "the sentence too.")
    repeated = [w for w in dict.fromkeys(words) if words.count(w) > 1]
    if repeated:
        raise ExerciseError(f"{given} uses {', '.join(repr(w) for w in repeated)} more than once: each word may "
                            "appear only once, so find distinct words whose votes x_j . r you have computed.")
    listed = [w for w in dict.fromkeys(words) if w in RIVER_SIDE or w in FINANCE]
    if listed:
        raise ExerciseError(f"{given}: {', '.join(repr(w) for w in listed)} "
                            f"{'is a word' if len(listed) == 1 else 'are words'} of the judge's lists. The lists "
                            "judge the sense, so using them would let the judge vote; choose other words.")
    parts = {w: _judge_part(w) for w in dict.fromkeys(words) if _judge_part(w)}
    if parts:
        raise ExerciseError(f"{given}: " + ", ".join(f"{w!r} {_where(w, part)} "
                                                     + (f"the judge word {j!r}" if part == j else
                                                        f"{part!r}, the stem of the judge word {j!r}")
                                                     for w, (j, part) in parts.items())
                            + ". The rule goes by spelling, whatever the word means: no word whose letters "
                            "contain a judge word or one of the stems " + ", ".join(STEMS) + "; choose other "
                            "words.")
    table, d = _outvote_table()
    unknown = [w for w in dict.fromkeys(words) if not (w.isalpha() and w in table)]
    if unknown:
        raise ExerciseError(f"{given}: {', '.join(repr(w) for w in unknown)} "
                            f"{'is not a whole word' if len(unknown) == 1 else 'are not whole words'} of the table "
                            "(letters only, and in the table whole, not split by WordPiece into pieces); check "
                            "with `word in E`.")
    votes = {w: float(table.vector(w).astype(np.float64) @ d) for w in words}
    total = sum(votes[w] for w in words)
    shown = ", ".join(f"{w} {votes[w]:+.3f}" for w in words)          # every word as given
    if total <= 0:
        against = [w for w in dict.fromkeys(words) if votes[w] < 0 and w not in ("bank", "money")]
        drop = (f", or take out {', '.join(repr(w) for w in against)}, which "
                f"{'votes' if len(against) == 1 else 'vote'} for finance too" if against else "")
        raise ExerciseError(f"the mean row leans to finance: the votes x_j . r, one per word of your sentence "
                            f"({shown}), sum to {total:+.3f}, not above 0. Add words whose votes are large and "
                            f"positive{drop}.")
    passed(f"the votes ({shown}) sum to {total:+.3f} > 0, so the mean row leans to the river side. \"bank\" and "
           "\"money\" alone vote -0.506 and \"river\" +0.276: in a plain mean it takes two or three such words to "
           "outvote them, and \"the\" (+0.008) barely counts. Was your prediction right?")
