"""Lesson 04's code answers as a learner who follows the lesson's text would write them (not the model
answers): graded by tests/test_grading.py, each must get full marks."""

ANSWERS = {
    # "Start from z_Sam - z_red = sum_j (alpha_Sam,j - alpha_red,j) v_j": the rows differ on ate and apple
    # only, so v_ate = v_apple. "Each row enters every word that has its feature": v_ate = action row =
    # (0, 1), v_apple = fruit row = (0, 1), v_Sam = (2, 0).
    "l04-values-answer": """
W_V_new = np.zeros((5, 2))
W_V_new[1] = [0, 1]
W_V_new[3] = [0, 1]
W_V_new[0] = [2, 0]
""",
    # The given keys Sam (1, 0), ate (0, 1), red (-1, 0), apple (0, -1); each query 4 times the next word's
    # key, red's row first, then apple's rows: fruit alone makes up q_apple = (4, 0) - red's (0, -4).
    "l04-next-answer": """
W_Q_next = np.array([[0, 4], [-4, 0], [0, 0], [4, 4], [0, -4]], dtype=float)
""",
    # "nn.Linear(d_model, d_out, bias=False) computes x @ weight.T", so weight = W.T; "copy a tensor into
    # a weight with weight.copy_(tensor) inside with torch.no_grad():", one part at a time.
    "l04-layer-answer": """
with torch.no_grad():
    layer.W_query.weight.copy_(torch.tensor(W_Q).T)
    layer.W_key.weight.copy_(torch.tensor(W_K).T)
    layer.W_value.weight.copy_(torch.tensor(W_V).T)
""",
}
