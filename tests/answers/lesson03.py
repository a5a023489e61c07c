"""Lesson 03: right answers written from the lesson's own words (not the instructor's solutions)."""

ANSWERS = {
    # The exercise's recipe: a (B, T) length mask, a very negative score for padding columns, sa.softmax.
    "l03-batch-answer": """
mask = np.arange(X.shape[1]) < np.asarray(lengths)[:, None]
scores = np.where(mask[:, None, :], X @ X.transpose(0, 2, 1), -1e9)
return sa.softmax(scores, axis=-1) @ X
""",
    # Section 5's mask by hand: flows' scores are dot products, a 0.10, river 0.82, bank 0.70, and its own
    # score set to -inf before the softmax, so e^-inf = 0 and the other three share the row; the growth
    # factor read off one weight, masked over unmasked.
    "l03-mask-answer": """
scores = np.array([0.10, 0.82, 0.70, -np.inf])
flows_row = np.exp(scores) / np.exp(scores).sum()
unmasked = np.exp([0.10, 0.82, 0.70, 0.68]) / np.exp([0.10, 0.82, 0.70, 0.68]).sum()
growth = flows_row[1] / unmasked[1]   # river's weight with the mask over river's without
""",
    # Derived on paper: e^omega = e^0.53 + e^0.35 gives omega = 1.137; along grows, x_new = c x_grows with
    # 0.35 c = 1.137, so c = 3.249 and x_new = (1.6245, 0.9747, 0.3249, 0), rounded up to 3 decimals.
    "l03-design-answer": """
x_new = np.array([1.625, 0.975, 0.325, 0.0])
""",
}
