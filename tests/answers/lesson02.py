"""Lesson 02: right answers written from the lesson's own words (not the instructor's solutions)."""

ANSWERS = {
    # Section 3: only differences of scores matter, so fix grows' score at 0 and take logarithms of ratios.
    "l02-scores-answer": """
weights = np.array([0.25, 0.70, 0.05])
notes_scores = np.log(weights / weights[2])
# One score 1 higher: e times the weight ratio. Bank against the rest: 0.70 : 0.30 must become 0.90 : 0.10.
bank_gain = np.log((0.90 / 0.10) / (0.70 / 0.30))
""",
    # Section 3's shift property, row by row; c = each row's largest score keeps every exponent <= 0.
    "l02-softmax-answer": """
c = np.max(scores, axis=1, keepdims=True)
exps = np.exp(scores - c)
return exps / np.sum(exps, axis=1, keepdims=True)
""",
    # Exercise 3: bank's finance and nature coordinates from its weights, nature = 3 x finance with the row
    # sum cancelled gives L e^(0.7 L) = p e^0.77 + q e^0.98; the lesson's bisect helper then finds L.
    "l02-nature-answer": """
# finance: 1.0 e^0.77 + 0.7 e^0.98; nature: 0.1 e^0.77 + 0.7 e^0.98 + L e^(0.7 L) (both over the row sum)
p = 3 * 1.0 - 0.1
q = 3 * 0.7 - 0.7
nature_coeffs = (p, q)
nature_length = bisect(lambda L: L * np.exp(0.7 * L) - p * np.exp(0.77) - q * np.exp(0.98), 0, 5)
""",
}
