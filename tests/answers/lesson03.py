"""Lesson 03: right answers written from the lesson's own words (not the instructor's solutions)."""

ANSWERS = {
    # Section 1's three steps, with each sentence transposed on its own and the course's stable softmax.
    "l03-batch-answer": """
Omega = X @ X.transpose(0, 2, 1)
A = sa.softmax(Omega, axis=-1)
return A @ X
""",
    # The exercise's recipe: nature words with high scores with bank, listed (order does not matter).
    "l03-context-answer": """
sentence = "ocean beach river bank island pond"
""",
    # Section 5: a projection on bank's direction far longer than bank itself.
    "l03-design-answer": """
x_new = np.array([0.0, 3.0, 0.0, 0.0])
""",
}
