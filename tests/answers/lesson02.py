"""Lesson 02: right answers written from the lesson's own words (not the instructor's solutions)."""

ANSWERS = {
    # Exercise 1, inside contextual_vectors(X): section 4's three steps for every word at once, softmax
    # written out with section 3's shift by each row's largest score.
    "l02-forward-answer": """
omega = X @ X.T                                          # step 1: row i holds word i's scores, (T, T)
e = np.exp(omega - omega.max(axis=1, keepdims=True))     # step 2, shifted so that nothing overflows
Z = (e / e.sum(axis=1, keepdims=True)) @ X               # each row sums to 1; step 3: (T, d_model)
""",
    # Section 3: only differences of scores matter, so fix grows' score at 0 and take logarithms of ratios.
    "l02-scores-answer": """
weights = np.array([0.25, 0.70, 0.05])
notes_scores = np.log(weights / weights[2])
""",
    # Exercise 3: z_2 = sum_j alpha_j x_j, coordinate by coordinate, plus "weights sum to 1", by elimination:
    # with alpha_bank = 1 - alpha_river - alpha_flows, finance and nature leave two equations in two unknowns.
    "l02-mix-answer": """
X_rbf = embed("river bank flows")
target = np.array([0.25, 0.88, 0.0, 0.0])
river, bank, flows = X_rbf
D = np.column_stack([river[:2] - bank[:2], flows[:2] - bank[:2]])   # (2, 2)
a_river, a_flows = np.linalg.solve(D, target[:2] - bank[:2])
alpha_mix = np.array([a_river, 1 - a_river - a_flows, a_flows])
""",
    # Exercise 4: both weights are e^omega_13 over a row sum, so word 3's row must have the larger sum: a long
    # word 3 (own score 4) and a shorter word 1 pointing the same way, on the food axis, away from bank.
    "l02-asym-answer": """
x_1 = np.array([0.0, 0.0, 1.0, 0.0])
x_3 = np.array([0.0, 0.0, 2.0, 0.0])
""",
}
