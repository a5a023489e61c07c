"""Lesson 04's checks name each typical mistake, and only that one.

Every wrong answer below is written the way a learner would write it. Each test asserts that the message names
its own mistake and none of the others (``tests/mistakes.py``), that two different right answers pass, and
that a shortcut which skips what the exercise teaches does not.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from mistakes import hidden_test_passes, message, names_only, right_answer_passes

from selfattention import checks


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


X_TOY = np.array([[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 0, 0, 1], [0, 0, 1, 1, 1]], dtype=float)


# ------------------------------------------------------------------ Exercise 3: different weights, one output
# v_ate = v_apple = (1, 0), v_Sam = (0, 1)
V_GOOD = np.array([[0, 1], [1, 0], [1, 0], [0, 0], [0, 0]], dtype=float)
V_TARGET = X_TOY @ V_GOOD                                                # the values per word, (4, 2)


def values_design(rows):
    """A (5, 2) W_V from the rows a learner sets: person, action, food, fruit, red."""
    W = np.zeros((5, 2))
    for f, row in rows.items():
        W[f] = row
    return W


VALUES = {
    "transposed": "rows and columns are swapped",
    "per word": "those are the values V themselves",
    "shape": "it should be (d_model, d_v) = (5, 2)",
    "too large": "keep every entry between",
    "all equal": "every word hands over the same value",
    "sam too close": "give Sam a value at least 0.4 from v_ate",
    "red cancels": "your v_red cancels most of what v_Sam adds",
    "own values": "your v_Sam = v_red is not needed",
    "apple rows": "its value is the sum of the food, fruit and red rows",
    "other design": "which two values must agree",
    "wrong pair": "z_Sam = z_red does not need",
    "ate apple differ": "and those two values must agree",
    "idle": "hand over nothing",
    "unchanged": "still the lesson's W_V",
    "no value": "W_V_new has no value yet",
}
W_V_LESSON = np.array([[1, 0], [0, 0], [0, 1], [0, 0], [0, 0]], dtype=float)   # the lesson's own W_V


def check_values(W):
    checks.check_values(W)


def values_hidden(W):
    return hidden_test_passes("04_learnable_projections", "l04-values-test", W_V_new=W)


def test_values_right_answers(capsys):
    other = values_design({1: [0, 1], 3: [0, 1], 0: [2, 0]})                   # the answers file's design
    split = values_design({1: [1, 1], 2: [0.5, 0.5], 3: [0.5, 0.5], 4: [0, 0], 0: [-1, 0]})
    for W in (V_GOOD, other, split):
        right_answer_passes(check_values, W, capsys)
        assert values_hidden(W)


@pytest.mark.parametrize(
    ("answer", "mistake"),
    [
        (None, "no value"),
        (V_GOOD.T, "transposed"),
        (V_TARGET, "per word"),                              # the values, not W_V
        (np.zeros((5, 3)), "shape"),
        (V_GOOD * 4, "too large"),
        (np.zeros((5, 2)), "all equal"),                      # the shortcut: every value zero
        # v_Sam = v_ate = v_apple = (1, 0), v_red = 0: not all equal, but red's factor is only 0.014
        (values_design({0: [1, 0], 1: [1, 0], 2: [1, 0]}), "sam too close"),
        (values_design({0: [1.2, 0], 1: [1, 0], 2: [1, 0]}), "sam too close"),
        # v_Sam 0.5 from v_ate (0.064 on its own), v_red 3 away on the same axis takes 0.040 back
        (values_design({0: [0.5, 0], 2: [-3, 0], 4: [3, 0]}), "red cancels"),
        (values_design({0: [1, 1], 4: [1, 1], 1: [0, 1]}), "own values"),  # v_Sam = v_red
        (values_design({0: [1, 0], 4: [1, 0]}), "own values"),             # v_Sam = v_red, the rest zero
        (values_design({1: [1, 0], 2: [1, 0], 4: [0, 1]}), "apple rows"),  # apple's red row kept
        (np.ones((5, 2)), "apple rows"),                  # v_ate = (1, 1), v_apple = (3, 3); v_Sam = v_red
        (values_design({0: [1, 0], 1: [0, 1], 4: [1, 0]}), "own values"),  # v_ate = (0, 1), v_apple = (1, 0)
        (values_design({0: [1, 0], 1: [0, 1], 2: [2, 0]}), "other design"),  # no two values equal
        (values_design({0: [1, 0], 1: [1, 0], 3: [0, 1]}), "wrong pair"),  # v_Sam = v_ate
        (values_design({0: [1, 0], 1: [1, 0]}), "wrong pair"),             # v_Sam = v_ate, v_apple = 0
        # v_ate = v_red = (1, 0): the red row copies the action row, as if the rows differed on ate and red
        (np.array([[0, 1], [1, 0], [0, 1], [0, 0], [1, 0]], dtype=float), "wrong pair"),
        # zero food and fruit rows: v_red = v_apple = (0, 1) follows; the mistake is v_ate = 0 != v_apple
        (values_design({0: [1, 0], 4: [0, 1]}), "ate apple differ"),
        (values_design({0: [1, 0], 1: [2, 0], 4: [0, 1]}), "ate apple differ"),  # v_ate = (2, 0)
        # v_Sam = v_apple = (1, 1), v_ate = (0, 1): the food row copies the action row, but the pair made
        # equal is Sam and apple, not a missed apple row
        (values_design({0: [1, 1], 1: [0, 1], 2: [0, 1], 3: [1, 0]}), "wrong pair"),
        (values_design({0: [1, 0], 4: [1, 0], 2: [1, 0], 3: [-1, 0]}), "own values"),  # v_Sam = v_red
        # the shortcut: only the person row set, v_ate = v_apple = 0; z_Sam = z_red, z_ate 0.129 away
        (values_design({0: [1, 0]}), "idle"),
        (values_design({0: [3, 0], 4: [0, 0]}), "idle"),
        (values_design({0: [1, 0], 2: [1, 0], 3: [-1, 0]}), "idle"),     # apple's rows cancel: v_apple = 0
        (W_V_LESSON, "unchanged"),           # handed in as given: its zero fruit row = action row
    ],
)
def test_values_mistakes_are_named(answer, mistake):
    names_only(message(check_values, answer), mistake, VALUES)


def test_values_wrong_pair_names_the_pair_not_apples_rows():
    """v_ate = v_red (the red row copies the action row): the message names that pair, not apple's rows."""
    text = message(check_values, np.array([[0, 1], [1, 0], [0, 1], [0, 0], [1, 0]], dtype=float))
    assert "you made v_ate = v_red = (1, 0)" in text and "food, fruit and red rows" not in text, text


def test_values_person_row_alone_is_refused_by_check_and_hidden_test():
    """The shortcut: only Sam's row set. Sam's and red's rows agree on Sam (0.096 each), so z_Sam = z_red
    without any design; both the check and the hidden test refuse it."""
    W = values_design({0: [1, 0]})
    text = message(check_values, W)
    assert "'ate', 'red' and 'apple' hand over nothing" in text, text
    assert not values_hidden(W)


def test_values_own_values_message_names_the_mistake_without_the_fix():
    """v_Sam = v_red cancels anyway: the message says so and asks where the weight rows differ, without naming
    the two words (ate, apple) whose values must agree."""
    text = message(check_values, values_design({0: [1, 0], 4: [1, 0]}))
    assert text.startswith("z_Sam") and "your v_Sam = v_red is not needed" in text, text
    assert "v_ate" not in text and "v_apple" not in text and "equal" not in text, text


@pytest.mark.parametrize(
    "answer",
    [np.zeros((5, 2)), values_design({0: [1, 0], 1: [1, 0], 2: [1, 0]}),
     values_design({0: [0.5, 0], 2: [-3, 0], 4: [3, 0]}), values_design({0: [1, 0], 4: [1, 0]}),
     V_TARGET, V_GOOD.T, V_GOOD * 4, values_design({1: [1, 0], 2: [1, 0], 4: [0, 1]}), W_V_LESSON,
     np.ones((5, 2)), values_design({0: [1, 0], 1: [0, 1], 4: [1, 0]}),
     np.array([[0, 1], [1, 0], [0, 1], [0, 0], [1, 0]], dtype=float), values_design({0: [1, 0]}),
     values_design({0: [1, 0], 2: [1, 0], 3: [-1, 0]})],
)
def test_values_answers_the_check_refuses_fail_the_hidden_test(answer):
    """The shortcut (equal values everywhere, so every word receives the same) and the named wrong designs
    fail both."""
    message(check_values, answer)
    with np.errstate(all="ignore"):
        assert not values_hidden(answer)


# ------------------------------------------------------------------ Exercise 1: the next word, d_k = 2
K_NEXT = np.array([[1, 0], [0, 1], [1, -1], [0, 0], [-1, 0]], dtype=float)  # keys point 4 ways
Q_NEXT = np.array([[0, 3], [-3, 0], [3, 3], [0, 0], [0, -3]], dtype=float)   # 3 x the next word's key


def keys_and_queries(keys: np.ndarray, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """W_Q, W_K (5, d) that give these four word queries and keys (X_TOY has full row rank)."""
    pinv = np.linalg.pinv(X_TOY)
    return pinv @ queries, pinv @ keys


def check_next(answer):
    checks.check_next_word(*answer)


NEXT = {
    "linear layout": "rows and columns are swapped",
    "d_k": "the exercise asks for d_k = 2",
    "sizes": "a dot product needs the same d_k",
    "itself": "points where its own key points",
    "previous": "at the word before it",
    "too small": "Make the scores' gaps larger",
    "wrap": "Only 'apple' is wrong",
    "apple only": "Only 'apple' fails",
    "zero query": "spreads its attention evenly",
    "tie": "no longer query can separate them",
    "keys given": "the keys are given: change only the queries",
    "word rows": "one row per word (T x d_k)",
    "word columns": "one column per word",
    "per word": "one row per word. But W_Q_next has one row per feature",
    "other": "four points in the plane",
    "one word aims elsewhere": "point the query there",
}

KEYS = np.array([[1, 0], [0, 1], [-1, 0], [0, -1]], dtype=float)


def next_hidden(W_q, W_k):
    return hidden_test_passes("04_learnable_projections", "l04-next-test", W_Q_next=W_q, W_K_next=W_k)


def test_next_word_right_answers(capsys):
    # the solution's rows, and the least-squares rows for queries 4 x the next key (fruit's row used too),
    # with the given W_K_next and with another W_K_next that gives the same four keys
    other = keys_and_queries(KEYS, 4 * np.roll(KEYS, -1, axis=0))
    for answer in ((Q_NEXT, K_NEXT), (other[0], K_NEXT), other):
        right_answer_passes(check_next, answer, capsys)
        assert next_hidden(answer[0], K_NEXT)


def keys_edited() -> tuple[np.ndarray, np.ndarray]:
    """The given keys made 3 times longer and the solution's queries divided by 3: the same scores, but the
    keys were given, and the hidden test grades with them."""
    return Q_NEXT / 3, 3 * K_NEXT


def test_next_word_edited_keys_are_refused_as_the_hidden_test_refuses_them():
    text = message(check_next, keys_edited())
    names_only(text, "keys given", NEXT)
    assert not next_hidden(*keys_edited())


def one_hot_axes() -> tuple[np.ndarray, np.ndarray]:
    """The shortcut: one axis per word (d_k = 4), which needs no design."""
    return keys_and_queries(np.eye(4), 5 * np.roll(np.eye(4), -1, axis=0))


def apple_wrong() -> tuple[np.ndarray, np.ndarray]:
    queries = 3 * np.roll(KEYS, -1, axis=0)
    queries[3] = 3 * KEYS[2]  # apple looks at red, not at Sam
    return keys_and_queries(KEYS, queries)


def zero_query() -> tuple[np.ndarray, np.ndarray]:
    queries = 3 * np.roll(KEYS, -1, axis=0)
    queries[2] = 0.0
    return keys_and_queries(KEYS, queries)


def scrambled() -> tuple[np.ndarray, np.ndarray]:
    queries = 3 * KEYS[[2, 3, 1, 0]]  # Sam -> red, ate -> apple, red -> ate, apple -> Sam
    return keys_and_queries(KEYS, queries)


def red_forgotten() -> tuple[np.ndarray, np.ndarray]:
    """Sets the food row to apple's intended key (0, -1), forgetting that red's row (-1, 0) enters apple's
    key too: apple's key is (-1, -1), and 'ate' scores red and apple 3 each."""
    W_K = np.array([[1, 0], [0, 1], [0, -1], [0, 0], [-1, 0]], dtype=float)
    W_Q = np.array([[0, 3], [-3, 0], [3, 0], [0, 0], [0, -3]], dtype=float)
    return W_Q, W_K


def red_query_forgotten() -> tuple[np.ndarray, np.ndarray]:
    """Keys right (apple (0, -1)); apple's query meant to be 3 k_Sam = (3, 0) through the food row alone,
    forgetting that red's query row (0, -3) enters it: apple's query is (3, -3) and ties Sam with itself."""
    W_K = np.array([[1, 0], [0, 1], [1, -1], [0, 0], [-1, 0]], dtype=float)
    W_Q = np.array([[0, 3], [-3, 0], [3, 0], [0, 0], [0, -3]], dtype=float)
    return W_Q, W_K


def apple_at_ate() -> tuple[np.ndarray, np.ndarray]:
    """Every query right but apple's, which points at ate's key (0, 1)."""
    queries = 3 * np.roll(KEYS, -1, axis=0)
    queries[3] = 3 * KEYS[1]
    return keys_and_queries(KEYS, queries)


def zero_query_not_worst() -> tuple[np.ndarray, np.ndarray]:
    """Sam's query is (0, 0) (weight 0.25 on 'ate'), while 'ate' fails worse (0.05 on 'red')."""
    queries = 3 * np.roll(KEYS, -1, axis=0)
    queries[0], queries[1] = 0.0, 3 * KEYS[3]
    return keys_and_queries(KEYS, queries)


def on_one_line() -> tuple[np.ndarray, np.ndarray]:
    """Keys moved onto the diagonal (Exercise 3's one-axis case): the keys are given, so this is refused."""
    keys = np.array([[1, 1], [2, 2], [-1, -1], [-2, -2]], dtype=float)
    return keys_and_queries(keys, 3 * np.roll(keys, -1, axis=0))


def per_word(row4=(0.0, 0.0)) -> np.ndarray:
    """The right shape, built one row per word: row i holds 3 x the key of the word after word i, as if rows
    were Sam, ate, red, apple; red's query is row 4 and apple's rows 2 + 3 + 4."""
    W = np.zeros((5, 2))
    W[:4], W[4] = 3 * np.roll(KEYS, -1, axis=0), row4
    return W


def test_next_word_tie_in_apples_row_blames_its_query_not_its_key():
    text = message(check_next, red_query_forgotten())
    assert "red's row of W_Q_next enters apple's query" in text and "[3.0, -3.0]" in text, text
    assert "W_K_next enters apple's key" not in text, text


def test_next_word_zero_query_is_named_when_another_row_fails_worse():
    text = message(check_next, zero_query_not_worst())
    assert "the query of 'Sam' is [0, 0]" in text, text


@pytest.mark.parametrize(
    ("answer", "mistake"),
    [
        ((Q_NEXT.T, K_NEXT.T), "linear layout"),
        (one_hot_axes(), "d_k"),
        ((Q_NEXT, K_NEXT[:, :1]), "sizes"),
        ((K_NEXT * 3, K_NEXT), "itself"),
        ((np.array([[0, 3], [-3, 0], [0, 0], [3, 0], [0, -3]], dtype=float), K_NEXT), "per word"),  # row 3
        (keys_and_queries(KEYS, 3 * np.roll(KEYS, 1, axis=0)), "previous"),
        ((Q_NEXT / 3, K_NEXT), "too small"),
        (apple_wrong(), "wrap"),
        (zero_query(), "zero query"),
        (scrambled(), "other"),
        (red_forgotten(), "keys given"),
        (red_query_forgotten(), "tie"),
        (apple_at_ate(), "apple only"),
        (zero_query_not_worst(), "zero query"),
        (on_one_line(), "keys given"),
        (keys_edited(), "keys given"),
        ((3 * np.roll(KEYS, -1, axis=0), K_NEXT), "word rows"),        # the queries Q, (4, 2)
        ((3 * np.roll(KEYS, -1, axis=0).T, K_NEXT), "word columns"),   # Q transposed, (2, 4)
        ((K_NEXT, KEYS), "word rows"),                                 # the keys K given as W_K_next
        ((per_word(), K_NEXT), "per word"),                            # (5, 2), row i = word i's query
        ((per_word(row4=[1.0, 1.0]), K_NEXT), "per word"),
        (keys_and_queries(KEYS, 3 * KEYS[[0, 1, 2, 0]]), "itself"),            # apple's query alone is right
        (keys_and_queries(KEYS, 3 * KEYS[[3, 0, 1, 0]]), "previous"),          # apple's query alone is right
        (keys_and_queries(np.array([[1, 0], [2, 0], [-1, 0], [-2, 0]], dtype=float),
                          3 * np.array([[2, 0], [-1, 0], [-2, 0], [1, 0]], dtype=float)), "keys given"),
    ],
)
def test_next_word_mistakes_are_named(answer, mistake):
    names_only(message(check_next, answer), mistake, NEXT)


def test_next_word_messages_read_well():
    text = message(check_next, one_hot_axes())
    assert "one axis per word" not in text and "With more axes" in text, text
    text = message(check_next, (Q_NEXT / 3, K_NEXT))
    assert "and most to" not in text, text


def test_next_word_draws_the_plane_when_asked(capsys):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    before = len(plt.get_fignums())
    checks.check_next_word(Q_NEXT, K_NEXT, draw=True)
    assert len(plt.get_fignums()) == before + 1
    plt.close("all")


def test_next_word_moved_keys_leave_exercise_2_to_the_learner():
    text = message(check_next, on_one_line())
    assert "one line" not in text and "one end" not in text and "Exercise 2" not in text, text


def test_next_word_pass_message_says_the_pattern_goes_by_content(capsys):
    checks.check_next_word(Q_NEXT, K_NEXT)
    out = capsys.readouterr().out
    assert "happens to come next" in out and "lesson 09" in out, out


def test_next_word_names_three_words_that_look_at_themselves():
    text = message(check_next, keys_and_queries(KEYS, 3 * KEYS[[0, 1, 2, 0]]))
    assert "'Sam', 'ate' and 'red' look most at themselves" in text, text
    text = message(check_next, keys_and_queries(KEYS, 3 * KEYS[[3, 0, 1, 0]]))
    assert "'Sam', 'ate' and 'red' each look most at the word before it" in text, text


def test_next_word_self_looking_words_are_the_ones_named():
    """Queries 3 times each word's own key: Sam, ate and red look at themselves, apple (whose red row points
    at red's key) at red. The message names the three, then apple's own pick, not 'apple' as looking at
    itself."""
    text = message(check_next, (np.array([[3, 0], [0, 3], [0, 0], [0, 0], [-3, 0]], dtype=float), K_NEXT))
    head = "'Sam', 'ate' and 'red' look most at themselves (Sam 0.91, ate 0.91, red 0.91)"
    assert text.startswith(head), text
    assert "'apple' gives most to 'red'" in text, text
    assert not next_hidden(np.array([[3, 0], [0, 3], [0, 0], [0, 0], [-3, 0]], dtype=float), K_NEXT)


def test_next_word_one_word_aimed_elsewhere_names_its_query():
    """Every row right but ate's action row, aimed at apple's key: the message names ate's query, the key it
    points to and the key of the word after 'ate'."""
    W = np.array([[0, 3], [0, -3], [3, 3], [0, 0], [0, -3]], dtype=float)
    text = message(check_next, (W, K_NEXT))
    names_only(text, "one word aims elsewhere", NEXT)
    assert "The query of 'ate' is its action row of W_Q_next (row 1), [0.0, -3.0]" in text, text
    assert "towards the key of 'apple', [0.0, -1.0]" in text, text
    assert "'red', whose key is [-1.0, 0.0]" in text, text
    assert not next_hidden(W, K_NEXT)
    W = np.array([[0, 3], [-3, 0], [3, 3], [0, 0], [3, 0]], dtype=float)   # red's row aimed at Sam
    text = message(check_next, (W, K_NEXT))
    names_only(text, "one word aims elsewhere", NEXT)
    assert "The query of 'red' is its red row" in text and "enters apple's query too" in text, text
    assert not next_hidden(W, K_NEXT)


def test_next_word_pass_message_says_most_of_its_attention(capsys):
    checks.check_next_word(Q_NEXT, K_NEXT)
    assert "gives most of its attention to the word that happens to come next" in capsys.readouterr().out


@pytest.mark.parametrize(
    "answer",
    [keys_edited(), red_forgotten(), on_one_line(), (Q_NEXT / 3, K_NEXT), apple_wrong(), zero_query(),
     scrambled(), red_query_forgotten(), apple_at_ate(), zero_query_not_worst(), (per_word(), K_NEXT),
     (3 * np.roll(KEYS, -1, axis=0), K_NEXT),
     (np.array([[0, 3], [-3, 0], [0, 0], [3, 0], [0, -3]], dtype=float), K_NEXT)],
)
def test_next_word_answers_the_check_refuses_fail_the_hidden_test(answer):
    message(check_next, answer)
    assert not next_hidden(answer[0], K_NEXT)


def test_no_output_above_an_exercise_gives_its_answer():
    """Exercise 3's weights (0.711 - 0.096) and the weights a query at one key gets (0.87 for scores
    0, 3, 0, 0; 0.948 for 0, 4, 0, 0) are not printed before the exercises: the demo queries point between
    two keys."""
    import json

    from mistakes import NOTEBOOKS

    cells = json.loads((NOTEBOOKS / "04_learnable_projections.ipynb").read_text())["cells"]
    first = next(i for i, c in enumerate(cells) if "### Exercise 1" in "".join(c["source"]))
    printed = "".join(o.get("text", "") if isinstance(o.get("text", ""), str) else "".join(o["text"])
                      for c in cells[:first] if c["cell_type"] == "code" for o in c.get("outputs", []))
    for number in ("0.711", "0.096", "0.615", "0.948", "0.87", "2.48", "2.49"):
        assert number not in printed, number


def test_values_near_miss_prints_the_difference_rounding_would_hide():
    """v_apple = (1.001, 0) against v_ate = (1, 0): z_Sam and z_red differ by 6e-4, which 3 digits hide; the
    message shows digits that differ and the size of the gap, and names no other mistake."""
    text = message(check_values, values_design({0: [0, 1], 1: [1, 0], 2: [1, 0], 3: [0.001, 0]}))
    assert "by up to 0.00061" in text and "(1.001, 0)" in text, text
    names_only(text, "other design", VALUES)
    assert not values_hidden(values_design({0: [0, 1], 1: [1, 0], 2: [1, 0], 3: [0.001, 0]}))


def test_values_sam_apple_pair_is_named_not_apples_rows():
    """v_Sam = v_apple = (1, 1), v_ate = (0, 1): the message names that pair, not apple's three features."""
    text = message(check_values, values_design({0: [1, 1], 1: [0, 1], 2: [0, 1], 3: [1, 0]}))
    assert "you made v_Sam = v_apple = (1, 1)" in text and "three features" not in text, text


def test_values_zero_food_and_fruit_rows_name_v_ate_against_v_apple():
    """Zero food and fruit rows make v_red = v_apple: the message names v_ate != v_apple, not that pair."""
    text = message(check_values, values_design({0: [1, 0], 4: [0, 1]}))
    assert "v_ate = (0, 0) but v_apple = (0, 1)" in text and "you made v_red" not in text, text


def test_next_word_query_between_two_keys_is_told_it_points_at_both():
    """Sam's query (2, 3) scores 'ate' highest but points partly at its own key: the message says so, besides
    'make the gaps larger'."""
    W_k = np.array([[1, 0], [0, 1], [1, -1], [0, 0], [-1, 0]], dtype=float)
    W_q = np.array([[2, 3], [-3, 0], [3, 3], [0, 0], [0, -3]], dtype=float)
    text = message(check_next, (W_q, W_k))
    names_only(text, "too small", NEXT)
    assert "also points partly at its own key, [1.0, 0.0] (score 2)" in text, text


# ------------------------------------------------------------------ Exercise 4: our matrices in nn.Linear
L_WQ = np.array([[0, 2, 0], [1, 0, 2], [0, 0, 0], [0, 0, 0], [0, 0, 2]], dtype=float)
L_WK = np.vstack([np.eye(3), np.zeros((2, 3))])
L_WV = np.array([[1, 0], [0, 0], [0, 1], [0, 0], [0, 0]], dtype=float)

LAYER = {
    "untransposed": "nn.Linear computes x @ weight.T, so its weight",
    "reshaped": "reshape refills the same numbers row by row",
    "swapped": "each part takes its own matrix",
    "random": "it still holds other numbers",
    "bias": "unless made with bias=False",
    "float64": "torch.tensor of a NumPy array is float64",
    "shape": "it should be W_",
}


class Steps(torch.nn.Module):
    """The lesson's SelfAttentionSteps."""

    def __init__(self, d_model: int, d_k: int, d_v: int) -> None:
        super().__init__()
        self.W_query = torch.nn.Linear(d_model, d_k, bias=False)
        self.W_key = torch.nn.Linear(d_model, d_k, bias=False)
        self.W_value = torch.nn.Linear(d_model, d_v, bias=False)

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        A = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
        return A @ v, A


def loaded(weights, *, assign: bool = False, bias_in: str | None = None) -> Steps:
    """A fresh Steps(5, 3, 2) with ``weights`` (query, key, value) copied in, as a learner would: with
    ``weight.copy_`` under no_grad, or (``assign``) by assigning new Parameters (any shape, any dtype).
    ``bias_in`` replaces that part by an nn.Linear made without bias=False before loading."""
    torch.manual_seed(0)
    layer = Steps(5, 3, 2)
    if bias_in:
        setattr(layer, bias_in, torch.nn.Linear(5, 3))
    for linear, W in zip((layer.W_query, layer.W_key, layer.W_value), weights, strict=True):
        if assign:
            linear.weight = torch.nn.Parameter(torch.tensor(W))
        else:
            with torch.no_grad():
                linear.weight.copy_(torch.tensor(W))
    return layer


def layer_hidden(layer) -> bool:
    """The hidden test, where a layer(x) that raises (a shape or dtype mismatch) fails as in grading."""
    try:
        return hidden_test_passes("04_learnable_projections", "l04-layer-test", layer=layer)
    except RuntimeError:
        return False


def test_layer_right_answers(capsys):
    right_answer_passes(checks.check_loaded_layer, loaded((L_WQ.T, L_WK.T, L_WV.T)), capsys)
    zero_bias = loaded((L_WQ.T, L_WK.T, L_WV.T), bias_in="W_key")
    with torch.no_grad():
        zero_bias.W_key.bias.zero_()                 # a bias left on but zero: x @ W all the same
    right_answer_passes(checks.check_loaded_layer, zero_bias, capsys)
    assert layer_hidden(loaded((L_WQ.T, L_WK.T, L_WV.T)))


@pytest.mark.parametrize(
    ("layer", "mistake"),
    [
        (lambda: loaded((L_WQ, L_WK, L_WV), assign=True), "untransposed"),
        (lambda: loaded((L_WQ.reshape(3, 5), L_WK.T, L_WV.T)), "reshaped"),
        (lambda: loaded((L_WK.T, L_WQ.T, L_WV.T)), "swapped"),
        (lambda: loaded((L_WQ.T, L_WQ.T, L_WV.T)), "swapped"),            # W_Q in both query and key
        (lambda: Steps(5, 3, 2), "random"),                               # nothing loaded
        (lambda: loaded((L_WQ.T, L_WK.T, L_WV.T), bias_in="W_query"), "bias"),
        (lambda: loaded((L_WQ.T, L_WK.T, L_WV.T), assign=True), "float64"),
        (lambda: loaded((L_WQ.T, L_WK.T, L_WV[:, :1].T), assign=True), "shape"),
    ],
)
def test_layer_mistakes_are_named(layer, mistake):
    wrong = layer()
    names_only(message(checks.check_loaded_layer, wrong), mistake, LAYER)
    assert not layer_hidden(wrong)


def test_layer_judge_on_recorded_data_agrees():
    """The grader runs the check on the recorded weights and biases, not on the module."""
    from selfattention.coursework.results import judge, to_plain

    def record(layer):
        parts = [layer.W_query, layer.W_key, layer.W_value]
        return to_plain([p.weight for p in parts] + [p.bias for p in parts])

    assert judge("check_loaded_layer", record(loaded((L_WQ.T, L_WK.T, L_WV.T)))) is None
    assert "unless made with bias=False" in judge(
        "check_loaded_layer", record(loaded((L_WQ.T, L_WK.T, L_WV.T), bias_in="W_key")))
    assert "each part takes its own matrix" in judge(
        "check_loaded_layer", record(loaded((L_WK.T, L_WQ.T, L_WV.T))))


def test_values_wrong_pair_names_the_real_violation_first():
    """v_Sam = v_ate but v_ate != v_apple: the message names v_ate != v_apple before the unneeded pair."""
    text = message(check_values, values_design({0: [1, 0], 1: [1, 0], 3: [0, 1]}))
    assert "but v_apple = (0, 1)" in text and "you made v_Sam = v_ate = (1, 0)" in text, text
    assert text.index("v_apple") < text.index("you made"), text
