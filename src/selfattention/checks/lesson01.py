"""Checks for lesson 01 (static embeddings): a vector on which the dot product and the cosine disagree, probe
words that find one sense of "palm" and none of six tree controls, and a sentence whose mean row outvotes "money" for the river sense of "bank"."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from ._engine import ExerciseError, as_predicted_number, as_word_list, passed

__all__ = ["check_dot_cosine_disagree", "check_outvote", "check_sense_probes"]

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


def check_dot_cosine_disagree(D: Any, D_longest: Any = _NOT_GIVEN) -> None:
    """Exercise 1: a (2,) vector D with D . C = A . C = 11 but cos(D, C) > 0.95 (A's cosine is 0.740), and the
    prediction ``D_longest``, the length D can approach (11 / (|C| 0.95), about 3.211); a wrong prediction
    is told which slip it is (cosine 1, A's length, C . C for |C|, multiplying by the cosine), never the answer."""
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
    longest = target / (np.linalg.norm(_C) * DISAGREE_MIN_COS)
    if D_longest is not _NOT_GIVEN:
        _judge_longest(D_longest, target)
    passed(f"D . C = {dot:.3f} = A . C, but cos(D, C) = {cos:.3f} against cos(A, C) = {_reference_cosine(_A, _C):.3f}; "
           f"|D| = {np.linalg.norm(d):.3f} is {shorter} than |A| = {np.linalg.norm(_A):.3f}, and every such D is "
           f"shorter than {longest:.3f}.")


def _judge_longest(D_longest: Any, target: float) -> None:
    """Exercise 1's prediction: the length D can approach, |D| = 11 / (|C| * 0.95)."""
    said = as_predicted_number(
        D_longest,
        "D is right, but D_longest has no value yet: set it to a number, the length D can approach.",
        f"D is right, but D_longest = {D_longest!r:.40} is not a number: give the length D can approach, as a "
        "number.",
    )
    norm_c = float(np.linalg.norm(_C))
    if abs(said - target / (norm_c * DISAGREE_MIN_COS)) < 2e-3:
        return
    known = [
        (target / norm_c, "is the length of D along C, at cosine 1: the shortest D can be. The longest has the "
                          "smallest cosine allowed"),
        (float(np.linalg.norm(_A)), f"is A's length, but A's cosine is {_reference_cosine(_A, _C):.3f}, below "
                                    f"{DISAGREE_MIN_COS}; the longest D has the smallest cosine allowed"),
        (target / (float(_C @ _C) * DISAGREE_MIN_COS), "divides by C . C where the formula has the length "
                                                        "|C|, the square root of C . C"),
        (target * DISAGREE_MIN_COS / norm_c, "multiplies by the cosine, but D . C = |D| |C| cos(theta) = 11 "
                                             "solved for |D| divides by it"),
    ]
    for value, why in known:
        if abs(said - value) < 2e-3:
            raise ExerciseError(f"D is right, but D_longest = {said:.3f} {why}.")
    raise ExerciseError(f"D is right, but D_longest = {said:.3f} does not follow from D . C = |D| |C| cos(theta) "
                        f"= {target:g}: solve it for |D|, at the cosine where |D| is largest.")


# ---- exercise 2: probes that lift "palm" above chance and none of the tree controls

SENSE_WORD = "palm"
# One-sense trees and plants, temperate and tropical: any tree-sense probe set tried lifts at least one of them.
# Of 3,082 three- and four-word sets from 33 tree words that lift "palm" above chance, 5 escape all six.
SENSE_CONTROLS = ("oak", "pine", "maple", "bamboo", "cactus", "banana")
PROBE_COUNT = (3, 6)      # the learner chooses 3 to 6 probe words
NEAR_MISS = 0.05          # "palm" this close under the chance level: related words, but too general
# Reference rows for naming which sense a failing set points at: a place (Palm Springs, Palm Beach) or the hand.
PLACE_WORDS = ("florida", "california", "resort", "desert", "miami", "hawaii")
HAND_WORDS = ("hand", "fingers", "wrist", "thumb", "finger", "hands")
PLACE_NEAR = 0.3          # the probes' mean row at least this near the place row (and nearer it than the hand's)


@lru_cache(maxsize=1)
def _sense_table() -> tuple[Any, np.ndarray]:
    """The lesson's table and the row numbers of its 5,000 frequent words (section 3's ``base.frequent``)."""
    from ..data import cosine_groups, load_static_embeddings

    table = load_static_embeddings()
    return table, cosine_groups(table, n_random=1).frequent


def _as_probe_words(probes: Any) -> list[str]:
    items = as_word_list("palm_probes", probes, "['first', 'second', 'third']", wanted="a list of 3 to 6 words")
    not_text = [w for w in items if not isinstance(w, str)]
    if not_text:
        raise ExerciseError(f"palm_probes holds {not_text[0]!r} (of type {type(not_text[0]).__name__}), which is "
                            "not a word: write each word as a string in quotes.")
    return [w.strip().lower() for w in items]


def check_sense_probes(palm_probes: Any) -> None:
    """Exercise 2: 3 to 6 distinct whole words of the table for the hand sense of "palm", such that the sense
    cosine of "palm" with their mean unit row is above their chance level (``data.sense_chance_level``: the 99th
    percentile of that mean row's cosines with the 5,000 frequent words, probes and "palm" left out) and that of
    every tree control (SENSE_CONTROLS) is not.

    Named mistakes: no value, one string, a non-word, a wrong count, a word used twice, a probe that contains
    "palm" (the shortcut: it finds the spelling, not the sense), a control as a probe, a word the table does not
    hold whole, probes that a tree control is near too (the tree sense, tropical or temperate, or words near
    everything), probes "palm" is near but just under the chance level (related, too general), and probes that
    "palm" is no nearer than chance (unrelated or common words), probes of another sense (a place: Palm Springs),
    and filler: a probe that alone does not lift "palm" above its own chance level (one hand word carrying
    unrelated ones), or every probe so (no probe finds the hand sense by itself).
    """
    words = _as_probe_words(palm_probes)
    given = f"palm_probes = {words}"
    low, high = PROBE_COUNT
    if not low <= len(words) <= high:
        raise ExerciseError(f"{given} has {len(words)} word{'s' * (len(words) != 1)}: the exercise "
                            f"asks for {low} to {high}.")
    repeated = [w for w in dict.fromkeys(words) if words.count(w) > 1]
    if repeated:
        raise ExerciseError(f"{given} uses {', '.join(repr(w) for w in repeated)} more than once: a repeated "
                            "probe only weighs one word double; use distinct words.")
    circular = [w for w in words if SENSE_WORD in w]
    if circular:
        raise ExerciseError(f"{given}: {', '.join(repr(w) for w in circular)} contains \"palm\", the word under "
                            "test. A probe made from the word itself is near it by spelling and by every sense at "
                            "once, so it says nothing about which sense the row holds; choose probes independent "
                            "of the word.")
    used = [w for w in words if w in SENSE_CONTROLS]
    if used:
        raise ExerciseError(f"{given} holds {', '.join(repr(w) for w in used)}, a control: the controls must be "
                            "judged by the probes, not be among them.")
    table, frequent = _sense_table()
    unknown = [w for w in words if not (w.isalpha() and w in table)]
    if unknown:
        raise ExerciseError(f"{given}: {', '.join(repr(w) for w in unknown)} "
                            f"{'is not a whole word' if len(unknown) == 1 else 'are not whole words'} of the table "
                            "(letters only, held whole, not split into pieces); check with `word in E`.")
    from ..data import mean_unit_row, sense_chance_level, sense_cosine

    chance = sense_chance_level(table, frequent, SENSE_WORD, words)
    palm = sense_cosine(table, SENSE_WORD, words)
    controls = {c: sense_cosine(table, c, words) for c in SENSE_CONTROLS}
    lifted = {c: s for c, s in controls.items() if s > chance}
    if lifted:
        raise ExerciseError(f"{given}: the tree control{'s' * (len(lifted) > 1)} "
                            f"{', '.join(f'{c} {s:+.3f}' for c, s in lifted.items())} "
                            f"score{'s' * (len(lifted) == 1)} above the chance level of your probes "
                            f"({chance:+.3f}; palm {palm:+.3f}). Probes that a tree or plant is near too (trees, "
                            "leaves, tropical fruit and beaches, or words near everything) cannot tell the hand "
                            "sense from the tree sense; keep only words of the hand.")
    numbers = f"(palm {palm:+.3f}, chance level of your probes {chance:+.3f})"
    mean = mean_unit_row(table, words)
    place, hand = (float(mean @ (m := mean_unit_row(table, ref)) / (np.linalg.norm(mean) * np.linalg.norm(m)))
                   for ref in (PLACE_WORDS, HAND_WORDS))
    if palm <= chance and place > max(hand, PLACE_NEAR):
        raise ExerciseError(f"{given}: the row of \"palm\" stays at or below the chance level of your probes {numbers}. "
                            f"These words point at another sense of \"palm\": a place (Palm Springs, Palm Beach; "
                            f"their mean row has cosine {place:+.3f} with places such as Florida and California, "
                            f"{hand:+.3f} with hand words). The exercise asks for the hand sense.")
    if palm <= chance and chance - palm < NEAR_MISS:
        raise ExerciseError(f"{given}: the row of \"palm\" scores just under the chance level of your probes, "
                            f"by {chance - palm:.3f} {numbers}. These words are related, but too general: many "
                            "frequent words are as near them. Choose words that belong to the hand itself.")
    if palm <= chance:
        raise ExerciseError(f"{given}: the row of \"palm\" is no nearer your probes than 1 in 100 frequent words "
                            f"{numbers}, so these probes find no sense of \"palm\". Words that are common or "
                            "unrelated to the hand pull the mean row toward nothing in particular; choose words "
                            "used where a hand is.")
    alone = {w: (sense_cosine(table, SENSE_WORD, [w]), sense_chance_level(table, frequent, SENSE_WORD, [w]))
             for w in words}
    filler = {w: sc for w, sc in alone.items() if sc[0] <= sc[1]}
    if len(filler) == len(words):
        raise ExerciseError(f"{given}: no probe finds the hand sense by itself. Alone, "
                            f"{', '.join(f'{w!r} (palm {s:+.3f}, chance {c:+.3f})' for w, (s, c) in filler.items())} "
                            "each leaves \"palm\" at or below its own chance level; only their mean together passes. "
                            "Words near the hand in general (skin, body) are not enough: every probe must lift "
                            "\"palm\" above its own chance level.")
    if filler:
        one = len(filler) == 1
        raise ExerciseError(f"{given}: filler. Alone, {', '.join(f'{w!r} (palm {s:+.3f}, chance {c:+.3f})' for w, (s, c) in filler.items())} "
                            f"{'does' if one else 'do'} not lift \"palm\" above {'its' if one else 'their'} own "
                            "chance level: the set passes only on its other words. Every probe must find the hand "
                            "sense by itself.")
    top = max(controls, key=controls.__getitem__)
    passed(f"your probes pass the test: the sense cosine of \"palm\" is {palm:+.3f}, above their chance level "
           f"{chance:+.3f} (the 99th percentile over the 5,000 frequent words), and the highest of the "
           f"{len(SENSE_CONTROLS)} tree controls, \"{top}\", scores {controls[top]:+.3f}, below it. "
           "Was your prediction right?")


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


VOTE_TOLERANCE = 1e-3  # a vote x_j . r may differ by this much (float32 rows)


def _judge_votes(words: list[str], votes: Any, table: Any, d: np.ndarray) -> None:
    """Exercise 3's votes: a dict word -> x_j . r for every word of the sentence; each typical slip named."""
    if votes is None or votes is Ellipsis:
        raise ExerciseError("The sentence is fine, but votes has no value yet: make it a dict {word: its vote "
                            "x_j . r} for every word of your sentence.")
    if not isinstance(votes, dict):
        raise ExerciseError(f"votes should be a dict {{word: x_j . r}}, but it is a {type(votes).__name__}.")
    got = {str(k).strip().lower().strip(PUNCTUATION): v for k, v in votes.items()}
    missing = [w for w in dict.fromkeys(words) if w not in got]
    extra = [w for w in got if w not in words]
    if missing or extra:
        raise ExerciseError("votes should hold one vote for each word of your sentence and no other: "
                            + "; ".join(part for part in (
                                f"missing {', '.join(repr(w) for w in missing)}" if missing else "",
                                f"not in the sentence {', '.join(repr(w) for w in extra)}" if extra else "")
                                if part) + ".")
    try:
        mine = np.array([float(got[w]) for w in words])
    except (TypeError, ValueError):
        raise ExerciseError("every vote should be one number, x_j . r.") from None
    rows = np.stack([table.vector(w).astype(np.float64) for w in words])
    right = rows @ d
    if np.allclose(mine, right, rtol=0, atol=VOTE_TOLERANCE):
        return
    slips = {
        "the rows were scaled to length 1 first: a vote uses the row as it is, x_j . r, and its length counts": (
            rows / np.linalg.norm(rows, axis=1, keepdims=True)) @ d,
        "each vote was divided by the number of words T: the vote is x_j . r itself; only the mean divides their "
        "sum by T (which cannot change its sign)": right / len(words),
        "the votes have the wrong sign: r = toward_river points from finance to the river side, so a river word "
        "votes above 0": -right,
    }
    for what, values in slips.items():
        if np.allclose(mine, values, rtol=0, atol=VOTE_TOLERANCE):
            raise ExerciseError(f"The sentence is fine, but {what}.")
    wrong = [w for w, a, b in zip(words, mine, right, strict=True) if abs(a - b) > VOTE_TOLERANCE]
    if len(wrong) == len(words):
        raise ExerciseError("The sentence is fine, but every vote differs from x_j . r with section 4's r: they "
                            "were computed with another direction. Use toward_river itself (the mean unit row of "
                            "the 10 river-side words minus that of the 10 finance words).")
    raise ExerciseError(f"The sentence is fine, but the vote of {', '.join(repr(w) for w in wrong)} is not x_j . r "
                        "(the word's row times toward_river): compute each vote from the table rather than typing it.")


def check_outvote(sentence: Any, votes: Any = _NOT_GIVEN) -> None:
    """Exercise 3: a list of 3 to 8 whole words of the table, with "bank" and "money" and none of the 20 words of
    the two judge lists nor a word whose letters contain one (or a stem of STEMS) anywhere, whose mean row z
    leans to the river side: z . r > 0, r = toward_river.

    Punctuation at either end of a word is dropped ("bank," is "bank"), as in the hidden test.
    Named mistakes: no value, one string instead of a list, a punctuation mark as a word, several words in one
    string, a wrong length, no "bank", no "money", a word of the
    judge lists or a word that contains one (the shortcut; the message says which letters, whatever the word means), a word the table does not hold whole, a word used twice, and a mean that leans
    to finance (with the sum of the votes x_j . r). Every message after the first two shows the learner's list
    as given, and the votes are listed word by word in that order, so the sum can be checked.
    ``votes`` (word -> x_j . r, for every word of the sentence; older records pass the sentence alone) is judged
    before the lean: a missing or extra word, rows scaled to length 1, votes divided by T, and the wrong sign are
    named; any other wrong vote is named by its word.
    """
    given_words = as_word_list("sentence", sentence, "['the', 'bank', ...] (sentence.split() does it)")
    raw = [str(w).strip().lower() for w in given_words]
    not_text = [w for w in given_words if not isinstance(w, str)]
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
    if votes is not _NOT_GIVEN:
        _judge_votes(words, votes, table, d)
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
    the = ', and "the" (+0.008) barely counts' if "the" in words else ""
    passed(f"the votes ({shown}) sum to {total:+.3f} > 0, so the mean row leans to the river side. \"bank\" and "
           "\"money\" alone vote -0.506 and \"river\" +0.276: in a plain mean it takes two or three such words to "
           f"outvote them{the}. Was your prediction right?")
