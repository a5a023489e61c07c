"""Lesson 04's code answers as a learner who follows the lesson's text would write them (not the model
answers): graded by tests/test_grading.py, each must get full marks."""

ANSWERS = {
    # "A word's query is the sum of the rows of W_Q for its features": change the fruit row alone (entries
    # within [-3, 3]) so that q_apple = food + fruit + red = [0, 0, 0] + [0, 3, -2] + [0, 0, 2] = [0, 3, 0].
    "l04-apple-answer": """
W_Q_apple = W_Q.copy()
W_Q_apple[3] = [0, 3, -2]
predicted_weight = math.exp(3) / (math.exp(3) + 3)
""",
    # "three nn.Linear-style weights stacked, in the order query, key, value": one product with the whole
    # fused weight (x @ weight.T, as nn.Linear computes), then three chunks; "divided by sqrt(d_k)".
    "l04-fused-answer": """
QKV = X @ in_proj_weight.T
d_k = QKV.shape[1] // 3
Q, K, V = QKV[:, :d_k], QKV[:, d_k:2 * d_k], QKV[:, 2 * d_k:]
return sa.softmax(Q @ K.T / math.sqrt(d_k), axis=-1) @ V
""",
    # The given keys Sam (1, 0), ate (0, 1), red (-1, 0), apple (0, -1); each query 4 times the next word's
    # key, red's row first, then apple's rows: fruit alone makes up q_apple = (4, 0) - red's (0, -4).
    "l04-next-answer": """
W_Q_next = np.array([[0, 4], [-4, 0], [0, 0], [4, 4], [0, -4]], dtype=float)
""",
}
