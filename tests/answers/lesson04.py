"""Lesson 04's code answers as a learner who follows the lesson's text would write them (not the model
answers): graded by tests/test_grading.py, each must get full marks."""

ANSWERS = {
    # e^s / (e^s + 3) = 0.8 solved as s = log(0.8 * 3 / 0.2), written with numpy. "A word's query is the sum
    # of the rows of W_Q for its features": change the fruit row alone (entries within [-3, 3]) so that
    # q_apple = food + fruit + red = [0, 0, 0] + [0, 3, -2] + [0, 0, 2] = [0, 3, 0].
    "l04-apple-answer": """
needed_score = np.log(0.8 * 3 / 0.2)
W_Q_apple = W_Q.copy()
W_Q_apple[3] = [0, 3, -2]
""",
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
}
