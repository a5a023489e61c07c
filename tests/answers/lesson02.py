"""Lesson 02: right answers written from the lesson's own words (not the instructor's solutions)."""

ANSWERS = {
    # Exercise 1: softmax divides both weights by the same row sum, so alpha_26 / alpha_22 is e to the score
    # gap; scaling bank by c scales x_2 . x_6 by c and leaves river's own score: the tie is where they meet.
    "l02-elsewhere-answer": """
X_r = embed("the river flows near a bank")
top_after = "bank"   # river . 2 x_6 = 2 * 0.77 = 1.54 tops river's own 1.01, the largest score in the row
river, bank = X_r[1], X_r[5]
cos_26 = river @ bank / (np.linalg.norm(river) * np.linalg.norm(bank))
c_tie = np.linalg.norm(river) / (np.linalg.norm(bank) * cos_26)   # |c x_6| cos(theta_26) = |x_2|
""",
    # Exercise 2: z_2 = sum_j alpha_j x_j, coordinate by coordinate, plus "weights sum to 1", by elimination:
    # with alpha_bank = 1 - alpha_river - alpha_flows, finance and nature leave two equations in two unknowns.
    # Only score differences count: alpha_bank / alpha_river = e^gap, and x.x give bank.bank - bank.river.
    "l02-mix-answer": """
X_rbf = embed("river bank flows")
target = np.array([0.25, 0.88, 0.0, 0.0])
river, bank, flows = X_rbf
D = np.column_stack([river[:2] - bank[:2], flows[:2] - bank[:2]])   # (2, 2)
a_river, a_flows = np.linalg.solve(D, target[:2] - bank[:2])
alpha_mix = np.array([a_river, 1 - a_river - a_flows, a_flows])
gap_needed = float(np.log(alpha_mix[1]) - np.log(alpha_mix[0]))
gap_plain = float(bank @ bank - bank @ river)
""",
    # Exercise 3: both weights are e^omega_13 over a row sum, so word 3's row must have the larger sum: a long
    # word 3 (own score 4) and a shorter word 1 pointing the same way, on the food axis, away from bank.
    "l02-asym-answer": """
x_1 = np.array([0.0, 0.0, 1.0, 0.0])
x_3 = np.array([0.0, 0.0, 2.0, 0.0])
X3 = np.stack([x_1, toy["bank"], x_3])
S_1 = sum(np.exp(X3[0] @ X3[k]) for k in range(3))   # row 1: e^omega_1k over all three words
S_3 = sum(np.exp(X3[2] @ X3[k]) for k in range(3))   # row 3
ratio_S = S_3 / S_1   # alpha_13 / alpha_31: the shared numerator e^omega_13 cancels
""",
}
