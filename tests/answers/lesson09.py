"""Lesson 09's code exercises answered from the lesson's own words (not the instructor's solutions)."""

ANSWERS = {
    # Section 4: "a sequence of length n then fills positions T-n to T-1", and the lesson's
    # own way of marking padding keys: mask[:, :2] = False. The exercise: the first real token is position 0.
    "l09-decoder-answer": """
mask = np.zeros((len(lengths), T, T), dtype=bool)
positions = np.zeros((len(lengths), T), dtype=int)
for b, n in enumerate(lengths):
    mask[b] = sa.causal_mask(T)
    mask[b][:, :T - n] = False
    positions[b, T - n:] = np.arange(n)
return mask, positions
""",
    # The exercise's two angle-addition formulas, with a = i * theta and b = delta * theta, read row by row.
    "l09-shift-answer": """
# sin(a + b) = sin a cos b + cos a sin b;  cos(a + b) = -sin a sin b + cos a cos b
return np.array([[np.cos(delta * theta), np.sin(delta * theta)],
                 [-np.sin(delta * theta), np.cos(delta * theta)]])
""",
    # Section 4's fill -inf and torch.softmax, then the NaN of a row with no allowed key replaced by 0.
    "l09-safe-answer": """
weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
return torch.nan_to_num(weights, nan=0.0)
""",
}
