"""Lesson 15's code exercises, answered from the lesson's own words (not the instructor's solutions)."""

ANSWERS = {
    # "a key tile the mask hides entirely is never read": its first key j after the tile's last query; "mask
    # the scores of keys after their query, comparing positions in the whole sequence": key j + c, query i + r
    "l15-flash-answer": """
if j >= i + q.shape[0]:
    continue
k = memory.read("K", j, j + b)
v = memory.read("V", j, j + b)
s = q @ k.T / np.sqrt(d)
for r in range(q.shape[0]):
    for c in range(k.shape[0]):
        if j + c > i + r:
            s[r, c] = -np.inf
""",
    # "which key/value tiles does query tile number n (counting from 0) read?": tiles 0..n, 2 b d each, plus
    # Q read once and O written once.
    "l15-moved-answer": """
tiles = T // b
kv = sum(2 * b * d * (n + 1) for n in range(tiles))
return T * d + T * d + kv
""",
    # exercise 3: "P = e^(S - L)" with L_i belonging to row i; D_i = sum_j P_ij dP_ij with dP_ij written out
    # (step 3: dP_ij = sum_c dO_ic V_jc), the sum over j taken first (sum_j P_ij V_jc = O_ic, from O = PV)
    "l15-backward-answer": """
P = np.exp(q @ k.T / d ** 0.5 - L.reshape(-1, 1))
D = np.einsum("ic,ic->i", dO, O)   # sum_c dO_ic (sum_j P_ij V_jc)
""",
}
