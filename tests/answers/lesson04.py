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
    # "each row enters every word that has its feature": red's row (0, 1); apple = food + fruit
    # + red, so the fruit row cancels red's colour and adds food: (1, -1). z_red: red's query (0, 0, 2) scores
    # apple 2 and the others 0, so it gives apple e^2 / (e^2 + 3) and itself 1 / (e^2 + 3).
    "l04-values-answer": """
W_V_new = np.zeros((5, 2))
W_V_new[4] = [0, 1]
W_V_new[3] = [1, -1]
w_apple = math.exp(2) / (math.exp(2) + 3)
w_red = 1 / (math.exp(2) + 3)
predicted_z_red = [w_apple * 1 + w_red * 0, w_apple * 0 + w_red * 1]
""",
    # The given keys Sam (1, 0), ate (0, 1), red (-1, 0), apple (0, -1); each query 4 times the next word's
    # key, red's row first, then apple's rows: fruit alone makes up q_apple = (4, 0) - red's (0, -4).
    "l04-next-answer": """
W_Q_next = np.array([[0, 4], [-4, 0], [0, 0], [4, 4], [0, -4]], dtype=float)
""",
}
