"""The feedback engine names each typical mistake in plain words, with the numbers involved.

Every test builds one realistic wrong answer to a small attention exercise and checks the
message a learner would read: what is wrong, where, and what to do.
"""

from __future__ import annotations

import linecache
import re

import numpy as np
import pytest

from selfattention.checks import ExerciseError, check_array, check_function, check_value, passed

rng = np.random.default_rng(0)
Q, K, V = rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), rng.normal(size=(3, 2))  # T=3, d_k=4


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


SCORES = Q @ K.T / np.sqrt(4)  # (3, 3)
WEIGHTS = softmax(SCORES)  # (3, 3), rows sum to 1
OUT = WEIGHTS @ V  # (3, 2)


def message(got, expected, name="your weights", **kwargs) -> str:
    with pytest.raises(ExerciseError) as err:
        check_array(got, expected, name, **kwargs)
    text = str(err.value)
    assert "Traceback" not in text and text.strip(), text
    return text


def test_right_answer_passes_silently_and_success_is_one_line(capsys):
    check_array(WEIGHTS.copy(), WEIGHTS, "your weights", rows_sum_to_one=True)
    passed("the weights of every query sum to 1.")
    out = capsys.readouterr().out
    assert out == "Correct: the weights of every query sum to 1.\n"


def test_failure_is_an_assertion_shown_as_one_paragraph():
    err = ExerciseError("your weights are None")
    assert isinstance(err, AssertionError)  # the autograder counts the test as failed
    lines = err._render_traceback_()
    assert len(lines) == 1 and "Not yet:" in lines[0] and "your weights are None" in lines[0]


def test_transposed_square_matrix():
    text = message(WEIGHTS.T, WEIGHTS, rows_sum_to_one=True)
    assert "transpose" in text and "K.T" in text


def test_transposed_rectangular_matrix_names_both_shapes():
    text = message(OUT.T, OUT, "your output Z")
    assert "(2, 3)" in text and "(3, 2)" in text and "transposed" in text


def test_transposed_in_a_batch():
    batch = np.stack([OUT, 2 * OUT])  # (2, 3, 2)
    text = message(np.swapaxes(batch, -1, -2), batch, "your output Z")
    assert "(2, 2, 3)" in text and "transposed" in text


def test_missing_normalisation_names_the_row_and_its_sum():
    unnormalised = np.exp(SCORES)
    text = message(unnormalised, WEIGHTS, rows_sum_to_one=True)
    row_sum = f"{unnormalised[0].sum():.4g}"
    assert "row 0" in text and row_sum in text and "normalise" in text


def test_missing_normalisation_found_without_being_told_it_is_attention():
    text = message(np.exp(SCORES), WEIGHTS)
    assert "each row" in text and "multiple" in text and "normalisation" in text
    factors = np.exp(SCORES).sum(axis=-1)
    assert f"{factors.min():.4g}" in text and f"{factors.max():.4g}" in text


def test_missing_scale_is_recognised_as_sqrt_d_k_where_a_check_opts_in():
    text = message(Q @ K.T, SCORES, "your scores", any_scale=True)
    assert "2 (= sqrt(4))" in text and "scale" in text


def test_wrong_scale_1_over_d_instead_of_1_over_sqrt_d_where_a_check_opts_in():
    text = message(Q @ K.T / 4, SCORES, "your scores", any_scale=True)
    assert "0.5 (= 1/sqrt(4))" in text


def test_a_multiple_is_not_called_a_missing_scale_unless_the_check_opts_in():
    """Without any_scale, an answer that happens to be a multiple gets the plain difference message:
    neither "a scale factor is missing" nor "a different factor each time"."""
    for wrong in (Q @ K.T, 3 * SCORES):
        text = message(wrong, SCORES, "your scores")
        assert "scale" not in text and "different factor" not in text and "largest difference" in text, text


def test_a_single_wrong_number_is_never_called_a_multiple():
    text = message(np.array([0.3]), np.array([0.7]), "your weight", any_scale=True)
    assert "times the right answer" not in text and "largest difference" in text, text


def test_scale_hint_gives_the_lesson_explanation():
    hint = "you divided by d_k = 4; divide by sqrt(d_k) = 2 instead."
    text = message(Q @ K.T / 4, SCORES, "your scores", scale_hints={hint: 0.5})
    assert hint in text and "0.5 times" in text


def test_wrong_softmax_axis_with_weights():
    text = message(softmax(SCORES, axis=0), WEIGHTS, rows_sum_to_one=True)
    assert "columns" in text and "wrong axis" in text and "axis=-1" in text
    assert f"{softmax(SCORES, axis=0)[0].sum():.4g}" in text


def test_wrong_softmax_axis_found_without_being_told_it_is_attention():
    text = message(softmax(SCORES, axis=0), WEIGHTS)
    assert "columns" in text and "wrong axis" in text


def test_wrong_shape_summed_over_an_axis():
    text = message(OUT.sum(axis=1), OUT, "your output Z")
    assert "(3,)" in text and "(3, 2)" in text and "axis 1 (length 2) is missing" in text


def test_wrong_shape_extra_axis_of_length_one():
    text = message(OUT[None], OUT, "your output Z")
    assert "(1, 3, 2)" in text and "extra axis of length 1" in text


def test_wrong_shape_same_entries_different_layout():
    text = message(OUT.reshape(2, 3), OUT, "your output Z")
    assert "(2, 3)" in text and "(3, 2)" in text


def test_wrong_shape_unrelated():
    text = message(np.zeros((5, 7)), OUT, "your output Z")
    assert text == "your output Z has shape (5, 7), but it should have shape (3, 2)."


@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_nan_or_inf_names_the_first_place_and_the_overflow(bad):
    got = WEIGHTS.copy()
    got[1, 2] = bad
    text = message(got, WEIGHTS)
    assert "(1, 2)" in text and "1 NaN or infinite" in text and "maximum" in text


def test_naive_softmax_on_large_scores_overflows():
    big = SCORES * 1000
    with np.errstate(over="ignore", invalid="ignore"):
        naive = np.exp(big) / np.exp(big).sum(axis=-1, keepdims=True)
    text = message(naive, softmax(big), rows_sum_to_one=True)
    assert "NaN or infinite" in text and "np.exp" in text


@pytest.mark.parametrize(
    ("blank", "words"),
    [(None, "is None: write your code"), (..., "is still `...`"), (softmax, "is a function")],
)
def test_blank_answers(blank, words):
    assert words in message(blank, WEIGHTS)


def test_not_numbers():
    text = message("0.42", WEIGHTS)
    assert "should be an array of numbers" in text or "has shape ()" in text


def test_known_mistake_gives_its_explanation():
    explanation = "you used the keys where the queries belong: the scores are K @ Q.T, not Q @ K.T."
    wrong = softmax(K @ Q.T / 2)
    text = message(wrong, WEIGHTS, mistakes={explanation: wrong})
    assert text == f"your weights is not right yet: {explanation}"


def test_other_wrong_answers_show_the_largest_difference():
    got = WEIGHTS.copy()
    got[2, 0] += 0.3
    got[2, 1] -= 0.3
    text = message(got, WEIGHTS)
    assert "(2, 0)" in text or "(2, 1)" in text
    assert "you have" in text and "the right value is" in text


def test_torch_tensors_are_accepted():
    torch = pytest.importorskip("torch")
    check_array(torch.tensor(WEIGHTS, requires_grad=True), WEIGHTS, "your weights")


# --- functions --------------------------------------------------------------------------------


def attention(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    return softmax(q @ k.T / np.sqrt(k.shape[-1]))


def notebook_function(source: str, cell: int = 7):
    """Define a function as a notebook cell would (IPython registers cells with linecache)."""
    filename = f"/tmp/ipykernel_1234/{cell}.py"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict = {"np": np}
    exec(compile(source, filename, "exec"), namespace)
    return next(v for k, v in namespace.items() if callable(v) and k != "np")


def test_crash_inside_the_learners_function_names_the_line_and_the_inputs():
    fn = notebook_function("def my_attention(q, k):\n    scores = q @ k\n    return scores\n")
    with pytest.raises(ExerciseError) as err:
        check_function(fn, attention, [(Q, K)], "my_attention")
    text = str(err.value)
    assert text.startswith("my_attention raised ValueError in line 2 of your code (`scores = q @ k`)")
    assert "(3, 4), (3, 4)" in text


def test_crash_outside_a_notebook_still_says_what_happened():
    def broken(q, k):
        return {}[q.shape]

    with pytest.raises(ExerciseError) as err:
        check_function(broken, attention, [(Q, K)], "my_attention")
    assert str(err.value) == "my_attention raised KeyError on inputs of shape (3, 4), (3, 4): (3, 4)"


def test_function_still_raising_not_implemented():
    def stub(q, k):
        raise NotImplementedError

    with pytest.raises(ExerciseError, match="still raises NotImplementedError"):
        check_function(stub, attention, [(Q, K)], "my_attention")


def test_blank_function_from_a_student_copy_returns_none():
    fn = notebook_function(
        "def my_attention(q, k):\n    \"\"\"Attention weights.\"\"\"\n    # YOUR CODE HERE\n    ...\n"
    )
    with pytest.raises(ExerciseError) as err:
        check_function(fn, attention, [(Q, K)], "my_attention")
    assert "is None" in str(err.value) and "`return`" in str(err.value) and "(3, 4)" in str(err.value)


@pytest.mark.parametrize("fn", [None, ...])
def test_function_not_defined_yet(fn):
    with pytest.raises(ExerciseError, match="not defined yet"):
        check_function(fn, attention, [(Q, K)], "my_attention")


def test_function_mistake_names_the_case():
    def unscaled(q, k):
        return softmax(q @ k.T)

    cases = [(Q, K), (Q[:2], K)]
    with pytest.raises(ExerciseError) as err:
        check_function(unscaled, attention, cases, "my_attention", rows_sum_to_one=True,
                       describe=lambda c: f"{len(c[0])} queries",
                       mistakes=lambda c: {"divide the scores by sqrt(d_k) = 2.": softmax(c[0] @ c[1].T)})
    assert str(err.value) == (
        "the result of my_attention is not right yet: divide the scores by sqrt(d_k) = 2. (on 3 queries)"
    )


def test_learner_function_gets_copies_of_the_inputs():
    def in_place(q, k):
        q *= 0.5  # changes its argument, then gives the right answer for the original inputs
        return softmax((2 * q) @ k.T / 2)

    original = Q.copy()
    check_function(in_place, attention, [(Q, K)], "my_attention")
    assert np.array_equal(Q, original)


def test_correct_function_passes():
    check_function(attention, attention, [(Q, K), (Q[:1], K)], "my_attention", rows_sum_to_one=True)


# --- single numbers ---------------------------------------------------------------------------


def test_value_right_wrong_hinted_and_blank():
    check_value(np.float64(0.5), 0.5, "p")
    with pytest.raises(ExerciseError, match=re.escape("p = 0.25 is not right yet: you squared it.")):
        check_value(0.25, 0.5, "p", hints={"you squared it.": 0.25})
    with pytest.raises(ExerciseError, match=r"p = 0\.3, but the right value is not that"):
        check_value(0.3, 0.5, "p")
    for blank in (None, ...):
        with pytest.raises(ExerciseError, match="has no value yet"):
            check_value(blank, 0.5, "p")
    with pytest.raises(ExerciseError, match="should be a number"):
        check_value("half", 0.5, "p")


# --------------------------------------------------------------------------- the walker over a learner's code
LEARNER_CODE = '''
import numpy as np

def inner(x):
    for row in x:          # a loop, two calls down
        pass
    return np.exp(x)

def middle(x):
    return inner(x)

def outer(x):
    # for in a comment is no loop
    return middle(x) + 1

def again(x):
    return again(x) if x else 0

def maker():
    kept = middle
    def closure(x):
        return kept(x)
    return closure
'''


def learners_module() -> dict:
    """The functions above as a learner's notebook defines them: one module of their own."""
    scope: dict = {"__name__": "__main__"}
    exec(compile(LEARNER_CODE, "<learner>", "exec"), scope)
    return scope


def test_walker_follows_the_learners_functions_through_globals_and_closures_each_once():
    from selfattention.checks._engine import learners_functions

    scope = learners_module()
    assert [f.__name__ for f in learners_functions(scope["outer"])] == ["outer", "middle", "inner"]
    assert [f.__name__ for f in learners_functions(scope["maker"]())] == ["closure", "middle", "inner"]
    assert [f.__name__ for f in learners_functions(scope["again"])] == ["again"]      # recursion ends
    assert learners_functions(np.exp) == [np.exp]                  # a library function is not looked into


def test_body_lines_drop_the_header_and_comments(tmp_path, monkeypatch):
    from selfattention.checks._engine import body_lines, source

    path = tmp_path / "learner.py"
    path.write_text(LEARNER_CODE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    module = importlib.import_module("learner")
    body = body_lines(module.outer)
    assert not any("def" in line or "comment" in line for line in body)
    assert any("middle(x)" in line for line in body)
    assert body_lines(np.exp) == [] and source(np.exp) == ""
