"""Lesson 03: right answers written from the lesson's own words (not the instructor's solutions)."""

ANSWERS = {
    # The exercise's recipe: a (B, T) length mask, a very negative score for padding columns, sa.softmax.
    "l03-batch-answer": """
mask = np.arange(X.shape[1]) < np.asarray(lengths)[:, None]
scores = np.where(mask[:, None, :], X @ X.transpose(0, 2, 1), -1e9)
return sa.softmax(scores, axis=-1) @ X
""",
    # Section 6's rule by hand: flows' scores are dot products, a 0.10, river 0.82, bank 0.70, and its own
    # score set to -inf before the softmax, so e^-inf = 0 and the other three share the row.
    "l03-mask-answer": """
scores = np.array([0.10, 0.82, 0.70, -np.inf])
flows_row = np.exp(scores) / np.exp(scores).sum()
""",
    # Derived on paper: e^s = e^0.77 + e^0.98 gives s = 1.574; along bank, x_new = (a, a, 0, 0) with
    # 1.4 a = 1.574, so a = 1.1240, rounded up to 3 decimals.
    "l03-design-answer": """
x_new = np.array([1.125, 1.125, 0.0, 0.0])
""",
}
