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
    # "the smallest d_k among 1, 2 and 4 with which some W_Q, W_K, W_V and readout solve the task; reason from
    # lesson 04's Exercises 2 and 3" (one number per key cannot, two can: a circle of keys).
    "l05-dk-answer": """
circle_of_keys = 2      # one number per key: only the largest or the smallest key can win
predicted_smallest_d_k = circle_of_keys
""",
}
