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
    # "put the eight letters' keys round a circle and aim each question ?s (its letter's row plus the flag's
    # row) at the key of the letter after s": keys of length 3, queries of length 6,
    # the flag's rows left zero.
    "l05-circle-answer": """
for s in range(8):
    angle = 2 * math.pi * s / 8
    W_K2[s] = [3 * math.cos(angle), 3 * math.sin(angle)]
    after = 2 * math.pi * (s + 1) / 8
    W_Q2[s] = [6 * math.cos(after), 6 * math.sin(after)]
""",
}
