"""Lesson 01's checks name each typical mistake, and only that one; right answers get "Correct:".

Every wrong answer below is written as a learner would write it; the check's message must name that mistake (a
phrase of its explanation) and no other; two different right answers must pass, and a shortcut that skips what
the exercise teaches must not.
"""

from __future__ import annotations

import numpy as np
import pytest
from mistakes import hidden_test_passes, message, names_only, right_answer_passes

from selfattention import checks

# ---------------------------------------------------------------- exercise 1: D . C = A . C, cos(D, C) > 0.95
A, C = np.array([1.0, 4.0]), np.array([3.0, 2.0])
DISAGREE = {
    "A itself": "D is A itself",
    "along C, wrong length": "points exactly along C",
    "wrong dot product": "it must equal A . C",
    "cosine too small": "it must be above 0.95",
    "wrong shape": "shape (3,)",
    "blank": "no value yet",
    "A lengthened": "D is A lengthened",
    "A shortened": "D is A shortened",
    "A flipped": "D is A flipped",
}
DISAGREE_WRONG = {
    "A itself": A.copy(),                        # the shortcut: A has the right dot product, not the cosine
    "along C, wrong length": C.copy(),
    "wrong dot product": np.array([1.0, 1.0]),
    "cosine too small": np.array([11 / 3, 0.0]),
    "wrong shape": np.array([3.0, 1.0, 0.0]),
    "blank": None,
    "A lengthened": 2 * A,                       # points like A: the dot product doubles, the cosine stays
    "A shortened": 0.5 * A,                      # points like A: the dot product halves, the cosine stays
    "A flipped": -A,                             # points against A: both change sign
}


@pytest.mark.parametrize("D, did, says", [
    (2 * A, "lengthened (D = 2A)", "D . C = 22, not 11"),
    (0.5 * A, "shortened (D = 0.5A)", "D . C = 5.5, not 11"),
    (-A, "flipped (D = -A)", "D . C = -11, not 11"),
    (-3 * A, "flipped (D = -3A)", "cosine is A's with the sign turned, -0.740"),
])
def test_disagree_along_a_says_what_was_done_to_a(D: np.ndarray, did: str, says: str) -> None:
    text = message(checks.check_dot_cosine_disagree, D)
    assert did in text and says in text, text
    assert "lengthening" not in text and ("raise" not in text or "cannot raise the cosine" in text), text


@pytest.mark.parametrize("D", [2 * A, 0.5 * A, -A])
def test_disagree_hidden_test_refuses_a_rescaled_a(D: np.ndarray) -> None:
    assert not hidden_test_passes("01_static_embeddings", "l01-disagree-test", D=D, D_is="shorter")


PREDICTION = {
    "blank": "D_is has no value yet",
    "longer": "is not what your D shows: compute |D| and |A| and compare them",
    "not the word": "it should be the word \"longer\" or \"shorter\"",
}
PREDICTION_WRONG = {"blank": None, "longer": "longer", "not the word": "smaller"}


@pytest.mark.parametrize("mistake", sorted(PREDICTION_WRONG))
def test_disagree_prediction_names_the_mistake(mistake: str) -> None:
    """D = [3, 1], found by integer trial, is right; the prediction "longer or shorter" is graded too."""
    D = np.array([3.0, 1.0])
    said = message(lambda d_is: checks.check_dot_cosine_disagree(D, d_is), PREDICTION_WRONG[mistake])
    names_only(said, mistake, PREDICTION)
    assert "shorter" not in said.replace('"longer" or "shorter"', ""), said   # keeps the answer back
    assert not hidden_test_passes("01_static_embeddings", "l01-disagree-test", D=D,
                                  D_is=PREDICTION_WRONG[mistake])


@pytest.mark.parametrize("D_is", ["shorter", " Shorter"])
def test_disagree_prediction_right(D_is: str, capsys: pytest.CaptureFixture[str]) -> None:
    checks.check_dot_cosine_disagree(np.array([3.0, 1.0]), D_is)
    assert capsys.readouterr().out.startswith("Correct:")
    assert hidden_test_passes("01_static_embeddings", "l01-disagree-test", D=np.array([3.0, 1.0]), D_is=D_is)


@pytest.mark.parametrize("mistake", sorted(DISAGREE_WRONG))
def test_disagree_names_the_mistake(mistake: str) -> None:
    names_only(message(checks.check_dot_cosine_disagree, DISAGREE_WRONG[mistake]), mistake, DISAGREE)


@pytest.mark.parametrize("D", [C, 2 * C, 0.5 * C])
def test_disagree_along_c_does_not_give_the_formula(D: np.ndarray) -> None:
    text = message(checks.check_dot_cosine_disagree, D)
    assert "scale it so that D . C = 11" in text and "C @ C" not in text and "/" not in text, text


def test_disagree_rounded_answer_is_called_rounded() -> None:
    text = message(checks.check_dot_cosine_disagree, np.array([2.538, 1.692]))   # 11/13 C, typed rounded
    assert "10.998" in text and "rounded" in text, text


@pytest.mark.parametrize("D", [11 / 13 * C, np.array([3.0, 1.0])])
def test_disagree_right_answers(D: np.ndarray, capsys: pytest.CaptureFixture[str]) -> None:
    checks.check_dot_cosine_disagree(D)
    out = capsys.readouterr().out
    assert out.startswith("Correct:") and "shorter than |A|" in out, out


# ---------------------------------------------------------------- exercise 2: four rankings of the neighbours
TOY_WORDS = ["money", "cash", "river", "giant", "shore", "dust"]
TOY_ROWS = np.array([[0.75, 0.25], [0.9, 0.4], [0.1, 1.0], [6.0, -1.5], [0.5, 1.0], [1e-2, 1.05e-2]])
X_BANK = np.array([1.0, 1.0])


def top3(scores, nearest_is_high=True):
    order = np.argsort(-scores if nearest_is_high else scores)
    return [TOY_WORDS[j] for j in order[:3]]


DOT = top3(TOY_ROWS @ X_BANK)
COSINE = top3(TOY_ROWS @ X_BANK / (np.linalg.norm(TOY_ROWS, axis=1) * np.linalg.norm(X_BANK)))
DISTANCE = top3(np.linalg.norm(TOY_ROWS - X_BANK, axis=1), nearest_is_high=False)
UNIT_ROWS = TOY_ROWS / np.linalg.norm(TOY_ROWS, axis=1, keepdims=True)
UNIT = top3(np.linalg.norm(UNIT_ROWS - X_BANK / np.linalg.norm(X_BANK), axis=1), nearest_is_high=False)
MANHATTAN = top3(np.abs(TOY_ROWS - X_BANK).sum(axis=1), nearest_is_high=False)   # L1: shore, cash, river
LENGTH = top3(np.linalg.norm(TOY_ROWS, axis=1), nearest_is_high=False)           # from the origin
RIGHT = dict(by_dot=DOT, by_cosine=COSINE, by_distance=DISTANCE, by_unit_distance=UNIT)

RANKINGS = {
    "cosine given the dot ranking": "by_cosine = ['giant', 'shore', 'cash'] is the dot product's ranking",
    "dot given the cosine ranking": "is the cosine's ranking, not the ranking by the plain dot product; the",
    "distance given the cosine ranking": "by_distance = ['dust', 'shore', 'cash'] is the cosine's ranking",
    "unit distance given the raw distance": "the rows of toy_rows were not scaled to length 1",
    "cosine with columns scaled": "by scaling the COLUMNS of toy_rows",
    "dot and cosine swapped": "by_dot and by_cosine look swapped",
    "a wrong list": "is not the ranking by",
    "row numbers": "map the indices through toy_words",
    "farthest by distance": "FARTHEST words by the Euclidean distance between the rows as given; nearest",
    "keeps bank": "'bank' itself",
    "wrong order": "wrong order",
    "argsort's last three": "has the right three words, but reversed: nearest last",
    "argsort's last three distances": "farthest last: the smallest distance is the nearest",
    "first word skipped": "skips the nearest word, 'shore'",
    "too few": "holds 2 words",
    "blank": "no value yet",
    "not a word": "not a word of the toy table",
    "a string": "should be a list of three words",
    "Manhattan distance": "is the ranking by the Manhattan (L1) distance",
    "distance from the origin": "ranks the rows by their own length",
    "cosine over squared lengths": "dividing each dot product by the row's length SQUARED",
    "unit distance, rows not each of length 1": "when the rows are not each scaled to length 1",
}
RANKINGS_WRONG = {
    "cosine given the dot ranking": dict(by_cosine=DOT),       # the shortcut: one ranking for every measure
    "dot given the cosine ranking": dict(by_dot=COSINE),
    "distance given the cosine ranking": dict(by_distance=COSINE),
    "unit distance given the raw distance": dict(by_unit_distance=DISTANCE),   # or toy_rows - unit bank
    "cosine with columns scaled": dict(by_cosine=["shore", "river", "cash"]),  # toy_rows / norm(axis=0)
    "dot and cosine swapped": dict(by_dot=COSINE, by_cosine=DOT),
    "a wrong list": dict(by_dot=["money", "cash", "river"]),
    "row numbers": dict(by_dot=[3, 4, 1]),                      # np.argsort's indices, not mapped to words
    "farthest by distance": dict(by_distance=["giant", "dust", "river"]),   # largest distance first
    "keeps bank": dict(by_cosine=["bank", "dust", "shore"]),
    "wrong order": dict(by_distance=["cash", "shore", "money"]),
    "argsort's last three": dict(by_dot=DOT[::-1]),             # [toy_words[j] for j in np.argsort(s)[-3:]]
    "argsort's last three distances": dict(by_distance=["river", "dust", "giant"]),   # np.argsort(d)[-3:]
    "first word skipped": dict(by_distance=["cash", "money", "river"]),   # np.argsort(d)[1:4]
    "too few": dict(by_dot=["giant", "shore"]),
    "blank": dict(by_unit_distance=None),
    "not a word": dict(by_dot=["giant", "shore", "coins"]),
    "a string": dict(by_cosine="dust, shore, cash"),
    "Manhattan distance": dict(by_distance=MANHATTAN),      # np.abs(toy_rows - toy_bank).sum(axis=1)
    "distance from the origin": dict(by_distance=LENGTH),   # np.linalg.norm(toy_rows, axis=1)
    # toy_rows @ toy_bank / (np.linalg.norm(toy_rows, axis=1) ** 2 * np.linalg.norm(toy_bank))
    "cosine over squared lengths": dict(
        by_cosine=top3(TOY_ROWS @ X_BANK / np.linalg.norm(TOY_ROWS, axis=1) ** 2)),
    # toy_rows / np.linalg.norm(toy_rows): one number for the whole table
    "unit distance, rows not each of length 1": dict(by_unit_distance=top3(
        np.linalg.norm(TOY_ROWS / np.linalg.norm(TOY_ROWS) - X_BANK / np.linalg.norm(X_BANK), axis=1),
        nearest_is_high=False)),
}


def test_rankings_cosine_norm_without_axis_is_named() -> None:
    """np.linalg.norm(toy_rows) without axis=1 is one number: the cosine list is the dot product's."""
    wrong = top3(TOY_ROWS @ X_BANK / (np.linalg.norm(TOY_ROWS) * np.linalg.norm(X_BANK)))
    said = message(lambda a: checks.check_rankings(**a), {**RIGHT, "by_cosine": wrong})
    assert "is the dot product's ranking" in said and "without axis=1" in said, said
    wrong_answer = {**RIGHT, "by_cosine": wrong}
    assert not hidden_test_passes("01_static_embeddings", "l01-neighbours-test", **wrong_answer)


@pytest.mark.parametrize("name", ["by_distance", "by_unit_distance"])
def test_rankings_distance_over_axis_0_is_named(name: str) -> None:
    """np.linalg.norm(... , axis=0) gives one number per column: nearest3 returns rows 0 and 1 only."""
    unit = TOY_ROWS / np.linalg.norm(TOY_ROWS, axis=1, keepdims=True)
    diff = (TOY_ROWS - X_BANK) if name == "by_distance" else unit - X_BANK / np.linalg.norm(X_BANK)
    wrong = top3(np.linalg.norm(diff, axis=0), nearest_is_high=False)[:2]
    said = message(lambda a: checks.check_rankings(**a), {**RIGHT, name: wrong})
    assert "a norm over axis=0 gives one number per COLUMN" in said, said
    assert not hidden_test_passes("01_static_embeddings", "l01-neighbours-test", **{**RIGHT, name: wrong})


def test_rankings_unit_distance_over_squared_lengths_is_named() -> None:
    lengths = np.linalg.norm(TOY_ROWS, axis=1, keepdims=True)
    wrong = top3(np.linalg.norm(TOY_ROWS / lengths ** 2 - X_BANK / (X_BANK @ X_BANK), axis=1),   # x / |x|^2
                 nearest_is_high=False)
    said = message(lambda a: checks.check_rankings(**a), {**RIGHT, "by_unit_distance": wrong})
    assert "by their lengths squared" in said, said


def test_rankings_wrong_list_names_the_first_wrong_place() -> None:
    """A list no named mistake explains is told where it first goes wrong, with its own word's value under the
    measure, never the right word (which would let a learner guess the list place by place)."""
    said = message(lambda a: checks.check_rankings(**a), {**RIGHT, "by_cosine": ["dust", "shore", "river"]})
    assert "place 3 is the first wrong one: 'river' has 0.774" in said and "cash" not in said, said
    wrong = {**RIGHT, "by_distance": ["shore", "money", "river"]}
    said = message(lambda a: checks.check_rankings(**a), wrong)
    assert "place 2 is the first wrong one: 'money' has 0.791" in said and "cash" not in said, said


@pytest.mark.parametrize("mistake", sorted(RANKINGS_WRONG))
def test_rankings_name_the_mistake(mistake: str) -> None:
    answer = {**RIGHT, **RANKINGS_WRONG[mistake]}
    names_only(message(lambda a: checks.check_rankings(**a), answer), mistake, RANKINGS)


def test_rankings_unit_distance_hint_derives_the_cosine() -> None:
    wrong = {**RIGHT, "by_unit_distance": ["cash", "money", "shore"]}
    said = message(lambda a: checks.check_rankings(**a), wrong)
    assert "2 - 2 cos(u, v)" in said, said


def computed() -> dict:
    """A second right answer: every ranking computed, as a learner would with the toy rows."""
    unit_bank = X_BANK / np.linalg.norm(X_BANK)
    scores = {"by_dot": TOY_ROWS @ X_BANK, "by_cosine": UNIT_ROWS @ unit_bank,
              "by_distance": -np.linalg.norm(TOY_ROWS - X_BANK, axis=1),
              "by_unit_distance": -np.linalg.norm(UNIT_ROWS - unit_bank, axis=1)}
    return {name: [TOY_WORDS[j] for j in np.argsort(-s)[:3]] for name, s in scores.items()}


@pytest.mark.parametrize("answer", [
    dict(by_dot=["giant", "shore", "cash"], by_cosine=["dust", "shore", "cash"],
         by_distance=["shore", "cash", "money"], by_unit_distance=["dust", "shore", "cash"]),   # typed
    computed(),
    {k: tuple(w.capitalize() for w in v) for k, v in RIGHT.items()},                        # tuples, capitals
])
def test_rankings_right_answers(answer, capsys: pytest.CaptureFixture[str]) -> None:
    right_answer_passes(lambda a: checks.check_rankings(**a), answer, capsys)


@pytest.mark.parametrize("answer", [
    dict(by_dot=COSINE, by_cosine=["shore", "cash", "money"], by_unit_distance=["shore", "cash", "money"]),
    dict(by_cosine=DISTANCE, by_distance=["river", "cash", "money"]),
])
def test_rankings_name_another_measure_only_where_that_gives_nothing_away(answer: dict) -> None:
    """A list that is another measure's ranking is named as such only if the learner holds that ranking
    already (same list there, or two lists swapped); otherwise naming it would hand over an answer."""
    said = message(lambda a: checks.check_rankings(**a), {**RIGHT, **answer})
    assert "is not the ranking by" in said and "'s ranking" not in said, said


def test_rankings_index_array_is_called_row_numbers() -> None:
    said = message(lambda a: checks.check_rankings(**a), {**RIGHT, "by_cosine": np.array([5, 4, 1])})
    assert "by_cosine = [5, 4, 1] holds row numbers" in said, said


# ---------------------------------------------------------------- exercise 3: outvote "money"
OUTVOTE = {
    "blank": "no value yet",
    "one string": "is one string",
    "length": "asks for 3 to 8",
    "no bank": "has no \"bank\"",
    "no money": "has no \"money\"",
    "judge's words": "are words of the judge's lists",
    "a judge word's plural": "'lakes' begins with the judge word 'lake'",
    "a judge word's stem": "'financial' begins with 'financ', the stem of the judge word 'finance'",
    "a judge word's letters, another meaning": "'cashew' begins with the judge word 'cash'. The rule goes by "
                                               "spelling, whatever the word means",
    "a judge word at the end": "'upstream' ends with the judge word 'stream'",
    "not in the table": "not a whole word of the table",
    "a compound of a judge word": "'lakeside' begins with the judge word 'lake'",
    "leans to finance": "leans to finance",
    "a punctuation mark": "punctuation and not a word",
    "several words in one string": "is several words in one string",
    "numbers, not words": "(of type int), which is not a word",
    "a repeated word": "uses 'river' more than once",
}
OUTVOTE_WRONG = {
    "blank": None,
    "one string": "river fish boat bank money",
    "length": ["river", "bank", "money", "the", "boat", "and", "the", "fish", "swim"],
    "no bank": ["river", "fish", "boat", "money"],
    "no money": "river bank flows".split(),                      # the lesson's own sentence: a shortcut
    "judge's words": ["water", "shore", "bank", "money"],         # the shortcut: let the judge's words vote
    "a judge word's plural": ["lakes", "streams", "bank", "money"],  # the same shortcut through other forms
    "a judge word's stem": ["waters", "river", "bank", "money", "financial"],
    "a judge word's letters, another meaning": ["cashew", "river", "pond", "bank", "money"],
    "a judge word at the end": ["upstream", "river", "pond", "bank", "money"],
    "not in the table": ["kayaking", "river", "fish", "bank", "money"],
    "a compound of a judge word": ["lakeside", "river", "bank", "money"],
    "leans to finance": ["river", "bank", "money"],              # one river word is not enough
    "a punctuation mark": ["river", "pond", "river", ",", "bank", "money"],   # "river , bank".split()
    "several words in one string": ["the river", "pond", "river", "bank", "money"],
    "numbers, not words": [1, 2, 3],                              # row numbers, not words
    "a repeated word": ["river", "river", "bank", "money"],      # the shortcut: +0.047, no vote computed
}
SHORTCUTS = ["no money", "judge's words", "a judge word's plural", "a judge word's stem",
             "a compound of a judge word", "a judge word's letters, another meaning",
             "a judge word at the end", "a repeated word"]


@pytest.mark.parametrize("mistake", sorted(OUTVOTE_WRONG))
def test_outvote_names_the_mistake(mistake: str) -> None:
    names_only(message(checks.check_outvote, OUTVOTE_WRONG[mistake]), mistake, OUTVOTE)


@pytest.mark.parametrize("mistake", ["leans to finance", "fish river bank money", "money bank grows"])
def test_outvote_finance_lean_gives_the_votes(mistake: str) -> None:
    words = OUTVOTE_WRONG.get(mistake, mistake.split())
    said = message(checks.check_outvote, words)
    assert "leans to finance" in said and "bank -0.235" in said and "money -0.271" in said, said


@pytest.mark.parametrize("sentence, shown", [
    ("river bank money bank".split(), "uses 'bank' more than once"),
    ("money money river bank".split(), "uses 'money' more than once"),
    ("bank money the the the".split(), "uses 'the' more than once"),
    (["bank", "money", "river", "River."], "uses 'river' more than once"),
    ("money river bank".split(), "money -0.271, river +0.276, bank -0.235), sum to -0.230"),
])
def test_outvote_votes_in_order_and_repeats_named(sentence: list[str], shown: str) -> None:
    said = message(checks.check_outvote, sentence)
    assert shown in said, said


@pytest.mark.parametrize("sentence, drop", [
    (["river", "bank", "money"], None),              # only bank and money vote for finance
    (["river", "pond", "bank", "money", "lent", "dollar"], "take out 'lent', 'dollar', which vote"),
    (["credible", "river", "pond", "bank", "money"], "take out 'credible', which votes for finance"),
])
def test_outvote_finance_lean_names_only_words_that_may_go(sentence: list[str], drop: str | None) -> None:
    said = message(checks.check_outvote, sentence)
    assert ("take out" not in said) if drop is None else (drop in said), said


SHOWN = ["length", "no bank", "no money", "judge's words", "a judge word's plural",
         "a compound of a judge word", "not in the table"]


@pytest.mark.parametrize("mistake", SHOWN)
def test_outvote_message_shows_the_learners_list(mistake: str) -> None:
    said = message(checks.check_outvote, OUTVOTE_WRONG[mistake])
    assert f"sentence = {[w.lower() for w in OUTVOTE_WRONG[mistake]]}" in said, said


def test_outvote_punctuation_is_dropped_before_judging() -> None:
    said = message(checks.check_outvote, ["river,", "bank,", "money."])
    assert "leans to finance" in said and "bank -0.235" in said and "has no" not in said, said


@pytest.mark.parametrize("mistake", SHORTCUTS + ["leans to finance", "not in the table", "length",
                                                 "a punctuation mark", "several words in one string",
                                                 "numbers, not words"])
def test_outvote_hidden_test_refuses_what_the_check_refuses(mistake: str) -> None:
    assert not hidden_test_passes("01_static_embeddings", "l01-outvote-test", sentence=OUTVOTE_WRONG[mistake])


@pytest.mark.parametrize("word, barred", [
    ("lakeside", True), ("lakes", True), ("shoreline", True), ("financing", True), ("savings", True),
    ("saving", True), ("creditors", True), ("mortgaged", True),
    ("river", False), ("rivers", False), ("pond", False), ("fish", False),
    ("blake", True), ("upstream", True), ("lakers", True), ("cashew", True), ("cashier", True),
    ("credible", False),
])
def test_outvote_check_and_hidden_test_apply_the_stated_rule_alike(word: str, barred: bool) -> None:
    """The rule as the exercise states it, by spelling: no word whose letters contain a judge word or one of
    the stems financ, saving, mortgag, mudd, wherever and whatever it means ("lakes", "blake", "upstream",
    "cashew", "financial"); "credible" holds "credi", not "credit"; "river" does not hold "riverside". Check
    and hidden test bar the same words."""
    sentence = [word, "sea", "ocean", "boat", "bank", "money"]
    try:
        checks.check_outvote(sentence)
        check_passes = True
    except checks.ExerciseError:
        check_passes = False
    assert check_passes is not barred
    assert hidden_test_passes("01_static_embeddings", "l01-outvote-test", sentence=sentence) is not barred


RIGHT_SENTENCES = [
    ["river", "fish", "boat", "bank", "money"],
    "the pond and river near a bank money".split(),
    ["River", "Pond", "Bank", "Money"],                         # capitals: +0.037
    ("sea", "river", "pond", "bank", "money"),                  # a tuple
    ["rivers", "river", "fish", "bank", "money"],               # "river" is no form of "riverside"
    ["credible", "river", "sea", "pond", "bank", "money"],      # "credible" holds no judge word whole
    ["the", "river,", "pond", "bank,", "money."],              # "...".split() of a written sentence
]


@pytest.mark.parametrize("sentence", RIGHT_SENTENCES)
def test_outvote_right_answers(sentence, capsys: pytest.CaptureFixture[str]) -> None:
    right_answer_passes(checks.check_outvote, sentence, capsys)
    assert hidden_test_passes("01_static_embeddings", "l01-outvote-test", sentence=sentence)


def test_rankings_toy_table_tells_manhattan_from_euclid() -> None:
    assert MANHATTAN != DISTANCE, (MANHATTAN, DISTANCE)


@pytest.mark.parametrize("mistake", ["argsort's last three", "argsort's last three distances",
                                     "first word skipped", "Manhattan distance", "distance from the origin",
                                     "cosine with columns scaled", "unit distance given the raw distance",
                                     "cosine over squared lengths",
                                     "unit distance, rows not each of length 1"])
def test_rankings_hidden_test_refuses_the_argsort_slips(mistake: str) -> None:
    answer = {**RIGHT, **RANKINGS_WRONG[mistake]}
    assert not hidden_test_passes("01_static_embeddings", "l01-neighbours-test", **answer)
