"""Lesson 02: right answers written from the lesson's own words (not the instructor's solutions)."""

ANSWERS = {
    # Section 3: only differences of scores matter, so fix grows' score at 0 and take logarithms of ratios.
    "l02-scores-answer": """
weights = np.array([0.25, 0.70, 0.05])
notes_scores = np.log(weights / weights[2])
# One score 1 higher: e times the weight ratio. Bank against the rest: 0.70 : 0.30 must become 0.90 : 0.10.
bank_gain = np.log((0.90 / 0.10) / (0.70 / 0.30))
""",
    # Section 3's shift property; c = the largest score keeps every exponent <= 0 and one of them 0.
    "l02-softmax-answer": """
c = np.max(scores)
exps = np.exp(scores - c)
return exps / np.sum(exps)
""",
    # Exercise 3's two hints: a score with bank that buys a share, coordinates that are nature.
    "l02-nature-answer": """
x_w = np.array([0.0, 2.0, 0.0, 0.0])
""",
}
