"""Lesson 02: right answers written from the lesson's own words (not the instructor's solutions)."""

ANSWERS = {
    # Exercise 1: section 4's three steps for river (row index 1) of the new sentence, written with the matrix
    # of every score and sa.softmax; then omega_12 = |x_1| L cos 60 deg ties omega_11 = |x_1|^2 at
    # L = omega_11 / (|x_1| cos 60 deg).
    "l02-elsewhere-answer": """
X_r = embed("the river flows near a bank")
Omega_r = X_r @ X_r.T
omega_river = Omega_r[1]
alpha_river = sa.softmax(omega_river)
z_river = alpha_river @ X_r
x_tie = np.array([2.0, 0.0])
L_tie = (x_tie @ x_tie) / (np.linalg.norm(x_tie) * np.cos(np.deg2rad(60)))
""",
    # Exercise 2: z_2 = sum_j alpha_j x_j, coordinate by coordinate, plus "weights sum to 1", by elimination:
    # with alpha_bank = 1 - alpha_river - alpha_flows, finance and nature leave two equations in two unknowns.
    "l02-mix-answer": """
X_rbf = embed("river bank flows")
target = np.array([0.25, 0.88, 0.0, 0.0])
river, bank, flows = X_rbf
D = np.column_stack([river[:2] - bank[:2], flows[:2] - bank[:2]])   # (2, 2)
a_river, a_flows = np.linalg.solve(D, target[:2] - bank[:2])
alpha_mix = np.array([a_river, 1 - a_river - a_flows, a_flows])
""",
    # Exercise 3: both weights are e^omega_13 over a row sum, so word 3's row must have the larger sum: a long
    # word 3 (own score 4) and a shorter word 1 pointing the same way, on the food axis, away from bank.
    "l02-asym-answer": """
x_1 = np.array([0.0, 0.0, 1.0, 0.0])
x_3 = np.array([0.0, 0.0, 2.0, 0.0])
""",
}
