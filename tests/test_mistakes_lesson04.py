"""Lesson 04's checks name each typical mistake, and only that one.

Every wrong answer below is written the way a learner would write it. Each test asserts that the message names
its own mistake and none of the others (``tests/mistakes.py``), that two different right answers pass, and
that a shortcut which skips what the exercise teaches does not.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from mistakes import hidden_test_passes, message, names_only, right_answer_passes

from selfattention import checks


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


X_TOY = np.array([[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 0, 0, 1], [0, 0, 1, 1, 1]], dtype=float)


# ------------------------------------------------------------------ Exercise 1: apple looks for ate
W_Q = np.array([[0, 2, 0], [1, 0, 2], [0, 0, 0], [0, 0, 0], [0, 0, 2]], dtype=float)
GOOD = W_Q.copy()
GOOD[2], GOOD[3] = [0, 3, 0], [0, 0, -2]  # q_apple = [0, 3, 0]: scores 0, 3, 0, 0
RIGHT = math.exp(3) / (math.exp(3) + 3)


APPLE = {
    "linear layout": "rows and columns are swapped",
    "too large": "keep every entry between -3 and 3",
    "unchanged": "still the lesson's W_Q",
    "other query": "changed too",
    "too little": "it should give 'ate' at least 0.8",
    "no prediction": "predicted_weight has no value yet",
    "score": "that is the score",
    "scaled": "with 1/sqrt(d_k)",
    "old W_Q": "with the lesson's unchanged W_Q",
    "percent": "looks like a percentage",
    "no red": "leaves out red's row",
    "own term": "apple included",
    "zero scores": "a score of 0 still gets e^0 = 1",
    "other": "the weight is e^(score of ate)",
    "coarse": "too coarse",
}


def check_apple(answer):
    checks.check_apple_query(*answer)


def test_apple_right_answers(capsys):
    right_answer_passes(check_apple, (GOOD, RIGHT), capsys)
    other = W_Q.copy()
    other[2], other[3] = [0, 3, 0], [0, 3, -2]  # q_apple = [0, 6, 0], every entry within [-3, 3]
    right_answer_passes(check_apple, (other, math.exp(6) / (math.exp(6) + 3)), capsys)
    right_answer_passes(check_apple, (GOOD, round(RIGHT, 2)), capsys)


def red_changed() -> np.ndarray:
    """The shortcut: 'apple is red', so change the red row; but red's own query changes too."""
    W = W_Q.copy()
    W[4] = [0, 3, 0]
    return W


def food_only() -> np.ndarray:
    """Food row [0, 3, 0], fruit row [0, 2, 0]: q_apple = [0, 5, 2], scores 0, 5, 0, 2 (0.941), which passes;
    the likely prediction forgets red's row and takes scores 0, 5, 0, 0 (0.980)."""
    W = W_Q.copy()
    W[2], W[3] = [0, 3, 0], [0, 2, 0]
    return W


def huge() -> np.ndarray:
    """The dodge: a huge query makes the weight 1.000, so 'predicting' 1.0 needs no softmax at all."""
    W = W_Q.copy()
    W[2], W[3] = [0, 100, 0], [0, 0, -2]  # q_apple = [0, 100, 0]
    return W


def test_apple_huge_entries_do_not_pass_with_a_prediction_of_one():
    text = message(check_apple, (huge(), 1.0))
    names_only(text, "too large", APPLE)
    assert "entry of 100" in text, text


def test_apple_largest_query_within_the_cap_still_needs_the_softmax():
    """Within [-3, 3] the plain largest query [0, 6, 0] gives 0.993: 1.0 is not close enough."""
    W = W_Q.copy()
    W[2], W[3] = [0, 3, 0], [0, 3, -2]
    assert "predicted_weight = 1" in message(check_apple, (W, 1.0))


@pytest.mark.parametrize("guess", [0.5, 0.7, 0.95])
def test_apple_a_wrong_prediction_is_not_told_the_weight(guess):
    """The prediction is the exercise: a miss gets the scores and the rule, never the weight to paste back."""
    text = message(check_apple, (GOOD, guess))
    assert "the weight is e^(score of ate)" in text, text
    for shown in (f"{RIGHT:.2f}", f"{RIGHT:.3f}", f"{RIGHT:.4g}", f"{RIGHT:.3g}"):
        assert shown not in text, (shown, text)


def test_apple_prediction_without_red_says_what_red_adds():
    text = message(check_apple, (food_only(), math.exp(5) / (math.exp(5) + 3)))
    assert "[0.0, 0.0, 2.0]" in text and "adds 2 to its score of itself" in text, text


def weak() -> np.ndarray:
    W = W_Q.copy()
    W[2] = [0, 3, 0]  # forgets to cancel what red adds: scores 0, 3, 0, 2 -> 0.68
    return W


@pytest.mark.parametrize(
    ("answer", "mistake"),
    [
        ((GOOD.T, RIGHT), "linear layout"),
        ((W_Q.copy(), RIGHT), "unchanged"),
        ((red_changed(), RIGHT), "other query"),
        ((weak(), 0.68), "too little"),
        ((GOOD, None), "no prediction"),
        ((GOOD, 3.0), "score"),
        ((GOOD, float(softmax(np.array([0, 3, 0, 0]) / math.sqrt(3))[1])), "scaled"),
        ((GOOD, float(softmax(np.array([0.0, 0, 0, 2]))[1])), "old W_Q"),
        ((GOOD, 100 * RIGHT), "percent"),
        ((GOOD, 0.5), "other"),
        ((food_only(), math.exp(5) / (math.exp(5) + 3)), "no red"),
        ((GOOD, math.exp(3) / (math.exp(3) + 2 + math.exp(-2))), "no red"),
        ((GOOD, math.exp(3) / (math.exp(3) + 2)), "own term"),
        ((food_only(), math.exp(5) / (math.exp(5) + math.exp(2))), "zero scores"),
        ((GOOD, 1.0), "zero scores"),
    ],
)
def test_apple_mistakes_are_named(answer, mistake):
    names_only(message(check_apple, answer), mistake, APPLE)


def extreme() -> np.ndarray:
    """Food and fruit rows [-3, 3, -3]: q_apple = [-6, 6, -4], scores -6, 6, 0, -4: 'ate' gets 0.99748, within
    0.005 of 1, so a rounded 1.0 passed a plain tolerance."""
    W = W_Q.copy()
    W[2], W[3] = [-3, 3, -3], [-3, 3, -3]
    return W


EXTREME = math.exp(6) / (math.exp(6) + math.exp(-6) + math.exp(0) + math.exp(-4))  # as the lesson writes it


def test_apple_weight_near_one_is_judged_in_log_odds(capsys):
    right_answer_passes(check_apple, (extreme(), EXTREME), capsys)
    right_answer_passes(check_apple, (extreme(), 0.9975), capsys)       # 1 - w right to about 1%
    for coarse in (1.0, 0.997, 0.999):
        text = message(check_apple, (extreme(), coarse))
        names_only(text, "coarse", APPLE)
        assert f"{EXTREME:.4g}" not in text, text   # the message does not give the weight away
    assert "never exactly 1" in message(check_apple, (extreme(), 1.0))


def test_apple_hidden_test_refuses_a_rounded_one():
    lesson, gid = "04_learnable_projections", "l04-apple-test"
    assert hidden_test_passes(lesson, gid, W_Q_apple=extreme(), predicted_weight=EXTREME)
    assert hidden_test_passes(lesson, gid, W_Q_apple=GOOD, predicted_weight=round(RIGHT, 2))
    assert not hidden_test_passes(lesson, gid, W_Q_apple=extreme(), predicted_weight=1.0)
    assert not hidden_test_passes(lesson, gid, W_Q_apple=extreme(), predicted_weight=0.997)


def test_apple_uncancelled_red_names_the_cause():
    text = message(check_apple, (weak(), 0.68))
    assert "still scores itself 2" in text and "The red row of W_Q" in text, text
    assert "and most to" not in text, text
    assert "or outweigh it" in text, text


# ------------------------------------------------------------------ Exercise 4: a fused qkv weight
def blocks(W):
    d_k = W.shape[0] // 3
    return W[:d_k].T, W[d_k:2 * d_k].T, W[2 * d_k:].T


def right_fused(W, X):
    W_q, W_k, W_v = blocks(W)
    return softmax((X @ W_q) @ (X @ W_k).T / math.sqrt(W_q.shape[1])) @ (X @ W_v)


def right_fused_chunks(W, X):
    """Another right answer: one product with the whole fused weight, then three column chunks."""
    Q, K, V = np.split(X @ W.T, 3, axis=1)
    S = Q @ K.T / math.sqrt(Q.shape[1])
    E = np.exp(S - S.max(axis=1, keepdims=True))
    return (E / E.sum(axis=1, keepdims=True)) @ V


def fused_scaled_by(divisor):
    def answer(W, X):
        W_q, W_k, W_v = blocks(W)
        return softmax((X @ W_q) @ (X @ W_k).T / divisor(X, W)) @ (X @ W_v)
    return answer


def fused_untransposed(W, X):
    d_k = W.shape[0] // 3
    W_q, W_k, W_v = W[:d_k], W[d_k:2 * d_k], W[2 * d_k:]
    return softmax((X @ W_q) @ (X @ W_k).T / math.sqrt(d_k)) @ (X @ W_v)


def fused_columns(W, X):
    W_q, W_k, W_v = blocks(W)
    return softmax((X @ W_q) @ (X @ W_k).T / math.sqrt(W_q.shape[1]), axis=0) @ (X @ W_v)


def fused_keys_first(W, X):
    W_q, W_k, W_v = blocks(W)
    return softmax((X @ W_k) @ (X @ W_q).T / math.sqrt(W_q.shape[1])) @ (X @ W_v)


def fused_qk_blocks_swapped(W, X):
    W_k, W_q, W_v = blocks(W)
    return softmax((X @ W_q) @ (X @ W_k).T / math.sqrt(W_q.shape[1])) @ (X @ W_v)


def fused_interleaved(W, X):
    """Reads the columns of X @ W.T as q, k, v, q, k, v, ... (a reshape to (T, d_k, 3))."""
    QKV = (X @ W.T).reshape(X.shape[0], -1, 3)
    Q, K, V = QKV[..., 0], QKV[..., 1], QKV[..., 2]
    return softmax(Q @ K.T / math.sqrt(Q.shape[1])) @ V


def fused_vkq(W, X):
    W_v, W_k, W_q = blocks(W)
    return softmax((X @ W_q) @ (X @ W_k).T / math.sqrt(W_q.shape[1])) @ (X @ W_v)


def fused_vqk(W, X):
    W_v, W_q, W_k = blocks(W)
    return softmax((X @ W_q) @ (X @ W_k).T / math.sqrt(W_q.shape[1])) @ (X @ W_v)


def fused_kvq(W, X):
    W_k, W_v, W_q = blocks(W)
    return softmax((X @ W_q) @ (X @ W_k).T / math.sqrt(W_q.shape[1])) @ (X @ W_v)


def fused_d_k_from_d_in(W, X):
    """Takes d_k from the input width: right when d_in = d_k, a shape error otherwise."""
    d_k = X.shape[1]
    W_q, W_k, W_v = W[:d_k].T, W[d_k:2 * d_k].T, W[2 * d_k:].T
    return softmax((X @ W_q) @ (X @ W_k).T / math.sqrt(d_k)) @ (X @ W_v)


def fused_qvk(W, X):
    W_q, W_v, W_k = blocks(W)
    return softmax((X @ W_q) @ (X @ W_k).T / math.sqrt(W_q.shape[1])) @ (X @ W_v)


def fused_weights_only(W, X):
    W_q, W_k, _ = blocks(W)
    return softmax((X @ W_q) @ (X @ W_k).T / math.sqrt(W_q.shape[1]))


def fused_naive_softmax(W, X):
    W_q, W_k, W_v = blocks(W)
    E = np.exp((X @ W_q) @ (X @ W_k).T / math.sqrt(W_q.shape[1]))
    return E / E.sum(axis=1, keepdims=True) @ (X @ W_v)


def torch_does_it(W, X):
    """The shortcut: load the fused weight into PyTorch's own attention and let it compute."""
    import torch
    import torch.nn.functional as F

    d_k = W.shape[0] // 3
    x = torch.tensor(X, dtype=torch.float64).unsqueeze(1)
    out, _ = F.multi_head_attention_forward(
        x, x, x, d_k, 1, torch.tensor(W), None, None, None, False, 0.0,
        torch.eye(d_k, dtype=torch.float64), None, need_weights=False)
    return out[:, 0].numpy()


def sdpa_does_it(W, X):
    """The shortcut through F.scaled_dot_product_attention (which divides by sqrt(d_k) itself)."""
    import torch
    import torch.nn.functional as F

    d_k = W.shape[0] // 3
    Q, K, V = (torch.tensor(X @ W[b * d_k:(b + 1) * d_k].T) for b in range(3))
    return F.scaled_dot_product_attention(Q[None], K[None], V[None])[0].numpy()


def torch_module_does_it(W, X):
    import torch

    mha = torch.nn.MultiheadAttention(W.shape[1], 1, bias=False, dtype=torch.float64)
    x = torch.tensor(X).unsqueeze(0)
    return mha(x, x, x)[0][0].detach().numpy()


FUSED = {
    "untransposed": "you used X @ block",
    "no scale": "yours are not divided",
    "sqrt 3d_k": "divided by sqrt(3 d_k)",
    "d_k": "divided by d_k;",
    "sqrt d_in": "divided by sqrt(d_in)",
    "axis 0": "down the columns (axis=0)",
    "keys first": "K @ Q.T instead of Q @ K.T",
    "interleaved": "interleaved",
    "order": "took the values from the first",
    "k v swapped": "used the value block as keys",
    "vqk": "as value, query, key",
    "kvq": "as key, value, query",
    "d_k from d_in": "Does it take d_k from d_in",
    "weights": "the attention weights",
    "overflow": "subtract each row's maximum",
    "torch": "lets PyTorch's own attention",
}


def test_fused_right_answers(capsys):
    right_answer_passes(checks.check_fused_output, right_fused, capsys)
    right_answer_passes(checks.check_fused_output, right_fused_chunks, capsys)


@pytest.mark.parametrize(
    ("answer", "mistake"),
    [
        (fused_untransposed, "untransposed"),
        (fused_scaled_by(lambda X, W: 1.0), "no scale"),
        (fused_scaled_by(lambda X, W: math.sqrt(W.shape[0])), "sqrt 3d_k"),
        (fused_scaled_by(lambda X, W: W.shape[0] // 3), "d_k"),
        (fused_scaled_by(lambda X, W: math.sqrt(X.shape[1])), "sqrt d_in"),
        (fused_columns, "axis 0"),
        (fused_keys_first, "keys first"),
        (fused_qk_blocks_swapped, "keys first"),
        (fused_interleaved, "interleaved"),
        (fused_vkq, "order"),
        (fused_qvk, "k v swapped"),
        (fused_vqk, "vqk"),
        (fused_kvq, "kvq"),
        (fused_d_k_from_d_in, "d_k from d_in"),
        (fused_weights_only, "weights"),
        (fused_naive_softmax, "overflow"),
        (torch_does_it, "torch"),
        (torch_module_does_it, "torch"),
        (sdpa_does_it, "torch"),
    ],
)
def test_fused_mistakes_are_named(answer, mistake):
    names_only(message(checks.check_fused_output, answer), mistake, FUSED)


def test_fused_cases_keep_the_sizes_apart():
    """A square case, where X @ block runs; one where d_in, d_k, 3 d_k and T all differ; one that
    overflows."""
    from selfattention.checks.lesson04 import _fused_cases, _split

    (W0, X0), (W1, X1), (W2, X2) = _fused_cases()
    assert X0.shape[1] == W0.shape[0] // 3
    assert len({X1.shape[0], X1.shape[1], W1.shape[0] // 3, W1.shape[0]}) == 4
    W_q, W_k, _ = _split(W2)
    assert np.abs((X2 @ W_q) @ (X2 @ W_k).T / math.sqrt(W_q.shape[1])).max() > 710


def fused_with_linear(W, X):
    """Another right answer, in PyTorch: three nn.Linear layers loaded from the blocks; it returns a tensor
    that requires grad."""
    import torch
    from torch import nn

    d_k, d_in = W.shape[0] // 3, W.shape[1]
    layers = [nn.Linear(d_in, d_k, bias=False).double() for _ in range(3)]
    with torch.no_grad():
        for b, layer in enumerate(layers):
            layer.weight.copy_(torch.tensor(W[b * d_k:(b + 1) * d_k]))
    q, k, v = (layer(torch.tensor(X)) for layer in layers)
    return torch.softmax(q @ k.T / math.sqrt(d_k), dim=-1) @ v


def test_fused_check_and_hidden_test_agree_on_a_tensor_that_requires_grad(capsys):
    import json
    from pathlib import Path

    right_answer_passes(checks.check_fused_output, fused_with_linear, capsys)
    assert fused_with_linear(np.eye(6)[:, :2], np.ones((3, 2))).requires_grad
    lesson = Path(__file__).parents[1] / "notebooks" / "04_learnable_projections.ipynb"
    cells = json.loads(lesson.read_text())
    hidden = next("".join(c["source"]) for c in cells["cells"] if "l04-fused-test" in "".join(c["source"]))
    hidden = hidden.split("### BEGIN HIDDEN TESTS")[1].split("### END HIDDEN TESTS")[0]
    exec(hidden, {"fused_output": fused_with_linear})  # raises if the hidden test rejects it


def test_torch_attention_works_again_after_the_check():
    import torch

    mha = torch.nn.MultiheadAttention(4, 1, bias=False)
    x = torch.zeros(1, 3, 4)
    message(checks.check_fused_output, torch_module_does_it)
    assert mha(x, x, x)[0].shape == (1, 3, 4)
    message(checks.check_fused_output, sdpa_does_it)
    assert torch.nn.functional.scaled_dot_product_attention(x, x, x).shape == (1, 3, 4)


# ------------------------------------------------------------------ Exercise 2: the next word, d_k = 2
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
    "itself": "most at itself",
    "previous": "at the word before it",
    "too small": "Make the scores' gaps larger",
    "wrap": "Only 'apple' is wrong",
    "long key": "a long key can win",
    "zero query": "spreads its attention evenly",
    "tie": "no longer query can separate them",
    "one line": "lie on one line",
    "other": "four points in the plane",
}

KEYS = np.array([[1, 0], [0, 1], [-1, 0], [0, -1]], dtype=float)


def test_next_word_right_answers(capsys):
    right_answer_passes(check_next, (Q_NEXT, K_NEXT), capsys)
    right_answer_passes(check_next, keys_and_queries(2 * KEYS, 3 * np.roll(KEYS, -1, axis=0)), capsys)


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


def apple_key_too_long() -> tuple[np.ndarray, np.ndarray]:
    """Apple's query points at Sam, but apple's own key (3, -3) is longer and wins."""
    keys = np.array([[1, 0], [0, 1], [-1, 0], [3, -3]], dtype=float)
    return keys_and_queries(keys, 3 * np.roll(keys, -1, axis=0))


def zero_query_not_worst() -> tuple[np.ndarray, np.ndarray]:
    """Sam's query is (0, 0) (weight 0.25 on 'ate'), while 'ate' fails worse (0.05 on 'red')."""
    queries = 3 * np.roll(KEYS, -1, axis=0)
    queries[0], queries[1] = 0.0, 3 * KEYS[3]
    return keys_and_queries(KEYS, queries)


def on_one_line() -> tuple[np.ndarray, np.ndarray]:
    """All four keys on the diagonal (Exercise 3's one-axis case): Sam (1, 1), ate (2, 2), red (-1, -1),
    apple (-2, -2); each query aims at the next word's key."""
    keys = np.array([[1, 1], [2, 2], [-1, -1], [-2, -2]], dtype=float)
    return keys_and_queries(keys, 3 * np.roll(keys, -1, axis=0))


def test_next_word_tie_in_apples_row_blames_its_query_not_its_key():
    text = message(check_next, red_query_forgotten())
    assert "red's row of W_Q_next enters apple's query" in text and "[3.0, -3.0]" in text, text
    assert "W_K_next enters apple's key" not in text, text
    text = message(check_next, red_forgotten())
    assert "red's row of W_K_next enters apple's key" in text and "W_Q_next enters" not in text, text


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
        (keys_and_queries(KEYS, 3 * np.roll(KEYS, 1, axis=0)), "previous"),
        ((Q_NEXT / 3, K_NEXT), "too small"),
        (apple_wrong(), "wrap"),
        (zero_query(), "zero query"),
        (scrambled(), "other"),
        (red_forgotten(), "tie"),
        (red_query_forgotten(), "tie"),
        (apple_key_too_long(), "long key"),
        (zero_query_not_worst(), "zero query"),
        (on_one_line(), "one line"),
        (keys_and_queries(KEYS, 3 * KEYS[[0, 1, 2, 0]]), "itself"),            # apple's query alone is right
        (keys_and_queries(KEYS, 3 * KEYS[[3, 0, 1, 0]]), "previous"),          # apple's query alone is right
        (keys_and_queries(np.array([[1, 0], [2, 0], [-1, 0], [-2, 0]], dtype=float),
                          3 * np.array([[2, 0], [-1, 0], [-2, 0], [1, 0]], dtype=float)), "one line"),
    ],
)
def test_next_word_mistakes_are_named(answer, mistake):
    names_only(message(check_next, answer), mistake, NEXT)


def test_fused_swapped_blocks_are_named():
    assert "swapped the first two blocks" in message(checks.check_fused_output, fused_qk_blocks_swapped)


def test_next_word_messages_read_well():
    text = message(check_next, one_hot_axes())
    assert "one axis per word" not in text and "With more axes" in text, text
    text = message(check_next, (Q_NEXT / 3, K_NEXT))
    assert "and most to" not in text, text


def test_next_word_names_apples_query_too_when_both_fail():
    """Apple's key (-1, -1) ties with red's for 'ate', and apple's query (1.5, -1.5) gives 'Sam' under 0.8."""
    W_K = np.array([[1, 0], [0, 1], [0, -1], [0, 0], [-1, 0]], dtype=float)
    W_Q = np.array([[0, 3], [-3, 0], [1.5, 1.5], [0, 0], [0, -3]], dtype=float)
    text = message(check_next, (W_Q, W_K))
    assert "W_K_next enters apple's key" in text and "The query of 'apple' fails too" in text, text


def test_next_word_draws_the_plane_when_asked(capsys):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    before = len(plt.get_fignums())
    checks.check_next_word(Q_NEXT, K_NEXT, draw=True)
    assert len(plt.get_fignums()) == before + 1
    plt.close("all")


def test_next_word_one_line_leaves_exercise_4_to_the_learner():
    text = message(check_next, on_one_line())
    assert "lie on one line" in text and "one end" not in text and "Exercise 3" not in text, text


def test_next_word_pass_message_says_the_pattern_goes_by_content(capsys):
    checks.check_next_word(Q_NEXT, K_NEXT)
    out = capsys.readouterr().out
    assert "happens to come next" in out and "lesson 09" in out, out


def test_next_word_names_three_words_that_look_at_themselves():
    text = message(check_next, keys_and_queries(KEYS, 3 * KEYS[[0, 1, 2, 0]]))
    assert "'Sam', 'ate' and 'red' each look most at itself" in text, text
    text = message(check_next, keys_and_queries(KEYS, 3 * KEYS[[3, 0, 1, 0]]))
    assert "'Sam', 'ate' and 'red' each look at the word before it" in text, text
