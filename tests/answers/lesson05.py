"""Lesson 05's code answers as a learner who follows the lesson's text would write them (not the model
answers): graded by tests/test_grading.py, each must get full marks."""

ANSWERS = {
    # "the cross-entropy loss of one example is -log p_y", p = softmax of the logits.
    "l05-loss-answer": """
loss_equal_logits = -math.log(1 / 8)
loss_leaning_wrong = -math.log(math.exp(0) / (math.exp(2) + 7 * math.exp(0)))
""",
    # "the gradient of the logits is p - onehot(y)", logit c is sum_k W[c, k] h[k], "w <- w - lr * grad".
    "l05-sgd-answer": """
logits = W @ h
p = np.exp(logits - logits.max())
p = p / p.sum()
onehot = np.zeros(len(p))
onehot[y] = 1.0
return W - lr * np.outer(p - onehot, h)
""",
    # "every key and question query at most 3.2 long", "the target the top weight", "at least 0.9": the
    # query ?s must beat the distractor s, so s's key goes far from the key of s + 1. Letter s in slot 5s
    # (mod 8) of a ring of radius 3.1 puts them 225 degrees apart; each query is the next letter's key.
    "l05-circle-answer": """
for s in range(8):
    angle = 2 * math.pi * (5 * s % 8) / 8
    W_K2[s] = [3.1 * math.cos(angle), 3.1 * math.sin(angle)]
for s in range(8):
    W_Q2[s] = W_K2[(s + 1) % 8]
""",
}
