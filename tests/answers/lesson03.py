"""Lesson 03: right answers written from the lesson's own words (not the instructor's solutions)."""

ANSWERS = {
    # (a) Section 4's row has one padding weight 0.169 against river 0.465 and bank 0.366; each padding row
    # scores 0, so three take 3 x 0.169 of the same unnormalised row, divided by its new sum. (b) A (B, T)
    # length mask on the scores given, a very negative score for padding columns, sa.softmax.
    "l03-batch-answer": (
        """
weights = np.array([0.465, 0.366, 0.169, 0.169, 0.169])
padding_share = weights[2:].sum() / weights.sum()
""",
        """
mask = np.arange(X.shape[1]) < np.asarray(lengths)[:, None]
scores = np.where(mask[:, None, :], Omega, -1e9)
return sa.softmax(scores, axis=-1) @ X
"""),
    # Section 5's mask by hand: flows' scores are dot products, a 0.10, river 0.82, bank 0.70, and its own
    # score set to -inf before the softmax, so e^-inf = 0 and the other three share the row; the growth
    # factor read off one weight, masked over unmasked.
    "l03-mask-answer": """
scores = np.array([0.10, 0.82, 0.70, -np.inf])
flows_row = np.exp(scores) / np.exp(scores).sum()
unmasked = np.exp([0.10, 0.82, 0.70, 0.68]) / np.exp([0.10, 0.82, 0.70, 0.68]).sum()
growth = flows_row[1] / unmasked[1]   # river's weight with the mask over river's without
""",
    # Section 2's counts with their constants: X X^T is T x T dot products of length d, A X as many again;
    # the recurrent layer does T products of a d-vector with a d x d matrix; equal where 2 T^2 d = T d^2.
    "l03-cost-answer": """
T, d = 300, 48
attention_madds = 2 * T**2 * d
recurrent_madds = T * d**2
T_equal = d / 2
""",
}
