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
    assert not hidden_test_passes("01_static_embeddings", "l01-disagree-test", D=D, D_longest=LONGEST)


LONGEST = 11 / (np.sqrt(13) * 0.95)            # |D| = 11 / (|C| cos(theta)) at the smallest cosine allowed
PREDICTION = {
    "blank": "D_longest has no value yet",
    "not a number": "is not a number",
    "cosine 1": "at cosine 1: the shortest D can be",
    "A's length": "is A's length",
    "C . C for |C|": "divides by C . C",
    "times the cosine": "multiplies by the cosine",
    "other": "does not follow from D . C",
}
PREDICTION_WRONG = {"blank": None, "not a number": "shorter", "cosine 1": 11 / np.sqrt(13),
                    "A's length": np.sqrt(17), "C . C for |C|": 11 / (13 * 0.95),
                    "times the cosine": 11 * 0.95 / np.sqrt(13), "other": 5.0}


@pytest.mark.parametrize("mistake", sorted(PREDICTION_WRONG))
def test_disagree_prediction_names_the_mistake(mistake: str) -> None:
    """D = [3, 1], found by integer trial, is right; the prediction, D's largest length, is graded too."""
    D = np.array([3.0, 1.0])
    said = message(lambda longest: checks.check_dot_cosine_disagree(D, longest), PREDICTION_WRONG[mistake])
    names_only(said, mistake, PREDICTION)
    assert f"{LONGEST:.3f}" not in said and f"{LONGEST:.2f}" not in said, said   # keeps the answer back
    assert not hidden_test_passes("01_static_embeddings", "l01-disagree-test", D=D,
                                  D_longest=PREDICTION_WRONG[mistake])


@pytest.mark.parametrize("D_longest", [LONGEST, 3.2115, np.float32(LONGEST)])
def test_disagree_prediction_right(D_longest, capsys: pytest.CaptureFixture[str]) -> None:
    checks.check_dot_cosine_disagree(np.array([3.0, 1.0]), D_longest)
    assert capsys.readouterr().out.startswith("Correct:")
    assert hidden_test_passes("01_static_embeddings", "l01-disagree-test", D=np.array([3.0, 1.0]),
                              D_longest=D_longest)


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


# ------------------------------------------------------------ exercise 2: probes for the hand sense of "palm"
PROBES = {
    "blank": "palm_probes has no value yet",
    "one string": "palm_probes is one string",
    "not words": "which is not a word",
    "too few": "has 2 words",
    "a repeated word": "uses 'hand' more than once",
    "made from the word": "contains \"palm\", the word under test",
    "a control as a probe": "a control: the controls must be judged",
    "not in the table": "is not a whole word of the table",
    "the tree sense": "above the chance level of your probes (",
    "too general": "scores just under the chance level of your probes, by 0.041",
    "unrelated words": "is no nearer your probes than 1 in 100 frequent words",
    "filler": "filler. Alone, 'table' (palm +0.143, chance +0.224), 'car'",
    "all filler": "no probe finds the hand sense by itself",
    "a place": "another sense of \"palm\": a place",
}
PROBES_WRONG = {
    "blank": None,
    "one string": "hand fingers wrist",
    "not words": [1, 2, 3],
    "too few": ["hand", "wrist"],
    "a repeated word": ["hand", "hand", "wrist"],
    "made from the word": ["palms", "hand", "wrist"],          # the shortcut: found by spelling, not by sense
    "a control as a probe": ["oak", "hand", "wrist"],
    "not in the table": ["knuckle", "hand", "wrist"],          # WordPiece splits "knuckle"
    "the tree sense": ["coconut", "tropical", "beach"],        # lifts "palm" above chance, and controls
    "too general": ["body", "head", "arm", "leg"],             # related to the hand, but near many words
    "unrelated words": ["the", "and", "of", "to"],             # common words: near nothing in particular
    "filler": ["hand", "table", "car"],                        # the shortcut: one hand word carries two
    "all filler": ["skin", "body", "touch"],                   # near the hand together, no word alone
    "a place": ["springs", "beach", "florida"],                # Palm Springs: another sense, not the hand
}
PROBE_SHORTCUTS = ["made from the word", "a control as a probe", "the tree sense", "filler"]
# Tree-sense probe sets, tropical and temperate: some lift "palm" above chance, yet each lifts a tree control.
TREE_PROBES = [
    ["coconut", "tropical", "beach"],
    ["coconut", "date", "tropical", "oasis"],
    ["coconut", "tree", "tropical", "leaves"],
    ["oasis", "sand", "desert"],
    ["date", "fig", "olive"],
    ["coconut", "mango", "fruit"],
    ["tree", "trees", "leaf", "forest"],
    ["tree", "leaves", "trunk"],
]


@pytest.mark.parametrize("mistake", sorted(PROBES_WRONG))
def test_probes_name_the_mistake(mistake: str) -> None:
    names_only(message(checks.check_sense_probes, PROBES_WRONG[mistake]), mistake, PROBES)


@pytest.mark.parametrize("probes", TREE_PROBES)
def test_probes_tree_words_are_named_by_a_control(probes: list[str]) -> None:
    names_only(message(checks.check_sense_probes, probes), "the tree sense", PROBES)


def test_probes_a_tropical_control_among_tree_words_is_named() -> None:
    said = message(checks.check_sense_probes, ["coconut", "banana", "tropical"])
    names_only(said, "a control as a probe", PROBES)


@pytest.mark.parametrize("mistake", sorted(set(PROBES_WRONG) - {"blank", "not words"}))
def test_probes_hidden_test_refuses_what_the_check_refuses(mistake: str) -> None:
    assert not hidden_test_passes("01_static_embeddings", "l01-probes-test",
                                  palm_probes=PROBES_WRONG[mistake])


@pytest.mark.parametrize("probes", TREE_PROBES[:3] + [["coconut", "banana", "tropical"]])
def test_probes_hidden_test_refuses_tree_words(probes: list[str]) -> None:
    assert not hidden_test_passes("01_static_embeddings", "l01-probes-test", palm_probes=probes)


@pytest.mark.parametrize("k", [3, 4, 5, 6])
def test_probes_copied_from_the_neighbour_list_are_named(k: int) -> None:
    """The shortcut: copying the top of "palm"'s neighbour list (leaving out words that contain "palm") takes
    "coconut", a tree word, and the check names the tree sense."""
    from selfattention.data import load_static_embeddings

    near = [w for w, _ in load_static_embeddings().neighbours("palm", k=20) if "palm" not in w][:k]
    assert "coconut" in near
    names_only(message(checks.check_sense_probes, near), "the tree sense", PROBES)
    assert not hidden_test_passes("01_static_embeddings", "l01-probes-test", palm_probes=near)


def test_probes_a_word_that_alone_stays_under_its_own_chance_level_is_filler() -> None:
    said = message(checks.check_sense_probes, ["skin", "grip", "fist"])   # skin +0.195 < its chance +0.214
    names_only(said, "filler", {**PROBES, "filler": "filler. Alone, 'skin' (palm +0.195, chance +0.214)"})


@pytest.mark.parametrize("probes", [
    ["hand", "fingers", "wrist", "thumb"],
    ("Hands", "grip", "fist"),                                  # a tuple, capitals
    ["glove", "hand", "thumb", "fingers", "wrist"],
    ["grip", "fist", "knuckles", "gloves"],
    ["hands", "wrist", "knuckles"],
    ["finger", "thumb", "fist", "grip"],
])
def test_probes_right_answers(probes, capsys: pytest.CaptureFixture[str]) -> None:
    right_answer_passes(checks.check_sense_probes, probes, capsys)
    assert hidden_test_passes("01_static_embeddings", "l01-probes-test", palm_probes=probes)


# ---------------------------------------------------------------- exercise 3: outvote "money"
RIVER_SIDE = ["shore", "stream", "water", "lake", "canal", "creek", "flood", "muddy", "fishing", "riverside"]
FINANCE = ["loan", "cash", "deposit", "mortgage", "credit", "finance", "loans", "savings", "account",
           "payment"]


def votes_of(sentence, how: str = "right") -> dict:
    """Each word's vote x_j . r, computed from the lesson's words (r = toward_river), or with a named slip."""
    from selfattention.data import load_static_embeddings, mean_unit_row

    table = load_static_embeddings()
    r = mean_unit_row(table, RIVER_SIDE) - mean_unit_row(table, FINANCE)
    words = [w.strip(".,").lower() for w in sentence]
    rows = {w: table.vector(w).astype(np.float64) if w in table.index else np.zeros(len(r)) for w in words}
    vote = {"right": lambda x: x @ r, "unit rows": lambda x: x / np.linalg.norm(x) @ r,
            "divided by T": lambda x: x @ r / len(words), "wrong sign": lambda x: -(x @ r),
            "another r": lambda x: x @ (mean_unit_row(table, RIVER_SIDE[:5])
                                        - mean_unit_row(table, FINANCE[:5]))}[how]
    return {w: float(vote(x)) for w, x in rows.items()}


SENTENCE = ["river", "fish", "boat", "bank", "money"]
VOTES = {
    "votes blank": "votes has no value yet",
    "votes not a dict": "votes should be a dict",
    "a word's vote missing": "missing 'boat'",
    "unit rows": "the rows were scaled to length 1 first",
    "divided by T": "each vote was divided by the number of words T",
    "wrong sign": "the votes have the wrong sign",
    "one vote typed wrong": "the vote of 'fish' is not x_j . r",
    "another r": "every vote differs from x_j . r with section 4's r",
}
VOTES_WRONG = {
    "votes blank": None,
    "votes not a dict": [0.1, 0.2, 0.3, -0.2, -0.3],
    "a word's vote missing": {w: v for w, v in votes_of(SENTENCE).items() if w != "boat"},
    "unit rows": votes_of(SENTENCE, "unit rows"),
    "divided by T": votes_of(SENTENCE, "divided by T"),
    "wrong sign": votes_of(SENTENCE, "wrong sign"),
    "one vote typed wrong": {**votes_of(SENTENCE), "fish": 0.5},   # the shortcut: a vote typed, not computed
    "another r": votes_of(SENTENCE, "another r"),                  # r from 5 words of each list, not 10
}


@pytest.mark.parametrize("mistake", sorted(VOTES_WRONG))
def test_outvote_votes_name_the_mistake(mistake: str) -> None:
    names_only(message(lambda v: checks.check_outvote(SENTENCE, v), VOTES_WRONG[mistake]), mistake, VOTES)


@pytest.mark.parametrize("mistake", ["a word's vote missing", "unit rows", "divided by T", "wrong sign",
                                     "one vote typed wrong"])
def test_outvote_hidden_test_refuses_wrong_votes(mistake: str) -> None:
    assert not hidden_test_passes("01_static_embeddings", "l01-outvote-test", sentence=SENTENCE,
                                  votes=VOTES_WRONG[mistake])


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
    assert hidden_test_passes("01_static_embeddings", "l01-outvote-test", sentence=sentence,
                              votes=votes_of(sentence)) is not barred


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
    right_answer_passes(lambda a: checks.check_outvote(*a), (sentence, votes_of(sentence)), capsys)
    assert hidden_test_passes("01_static_embeddings", "l01-outvote-test", sentence=sentence,
                              votes=votes_of(sentence))
