"""Lesson 03: right answers written from the lesson's own words (not the instructor's solutions)."""

ANSWERS = {
    # The exercise's recipe: a (B, T) length mask, a very negative score for padding columns, sa.softmax.
    "l03-batch-answer": """
mask = np.arange(X.shape[1]) < np.asarray(lengths)[:, None]
scores = np.where(mask[:, None, :], X @ X.transpose(0, 2, 1), -1e9)
return sa.softmax(scores, axis=-1) @ X
""",
    # By hand, as the exercise says: flows . river = 0.02 + 0.8 = 0.82 beats flows . flows = 0.68; the two
    # weights share the softmax's denominator, so their ratio is e^0.82 / e^0.10.
    "l03-read-answer": """
top = "river"
ratio = np.exp(0.82) / np.exp(0.10)
""",
    # Derived on paper: e^s = e^0.77 + e^0.98 gives s = 1.574; along bank, x_new = (a, a, 0, 0) with
    # 1.4 a = 1.574, so a = 1.124, rounded up.
    "l03-design-answer": """
x_new = np.array([1.13, 1.13, 0.0, 0.0])
""",
}
