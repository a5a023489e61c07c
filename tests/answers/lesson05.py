"""Lesson 05's code answers as a learner who follows the lesson's text would write them (not the model
answers): graded by tests/test_grading.py, each must get full marks."""

ANSWERS = {
    # "the cross-entropy loss of one example is -log p_y", p = softmax of the logits.
    "l05-loss-answer": """
loss_equal_logits = -math.log(1 / 8)
loss_sure_and_wrong = -math.log(math.exp(0) / (math.exp(10) + 7 * math.exp(0)))
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
    # A key axis per letter; query letter s looks along the axis of letter s - 1, strongly.
    "l05-before-answer": """
W_k_before = np.zeros((17, 8))
W_q_before = np.zeros((17, 8))
for s in range(8):
    W_k_before[s, s] = 1.0
    W_q_before[s, (s - 1) % 8] = 6.0
""",
}
