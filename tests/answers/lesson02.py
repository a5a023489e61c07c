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
    # Exercise 3: both weights are e^omega_13 over a row sum, so word 3's row must have the larger sum: a long
    # word 3 (own score 4) and a shorter word 1 pointing the same way, on the food axis, away from bank.
    "l02-asym-answer": """
x_1 = np.array([0.0, 0.0, 1.0, 0.0])
x_3 = np.array([0.0, 0.0, 2.0, 0.0])
""",
}
