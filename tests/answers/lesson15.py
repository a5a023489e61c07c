"""Lesson 15's code exercises, answered from the lesson's own words (not the instructor's solutions)."""

ANSWERS = {
    # "Each tile of b queries is read once and its output written once, and a key tile the mask hides
    # entirely is never read." The rest from section 1: mask the scores, then update m, ell and o by its
    # formulas, rescaling the old ell and o before adding the tile; o / ell at the end.
    "l15-flash-answer": """
T, d = memory.arrays["Q"].shape
for i in range(0, T, b):
    q = memory.read("Q", i, i + b)
    n = q.shape[0]
    m = np.full(n, -np.inf)
    l = np.zeros(n)
    a = np.zeros((n, memory.arrays["V"].shape[1]))
    for j in range(0, T, b):
        if j > i + n - 1:
            continue
        k = memory.read("K", j, j + b)
        v = memory.read("V", j, j + b)
        s = q @ k.T / np.sqrt(d)
        for r in range(n):
            for c in range(k.shape[0]):
                if j + c > i + r:
                    s[r, c] = -np.inf
        m_new = np.maximum(m, s.max(axis=1))
        l = l * np.exp(m - m_new) + np.exp(s - m_new[:, None]).sum(axis=1)
        a = a * np.exp(m - m_new)[:, None] + np.exp(s - m_new[:, None]) @ v
        m = m_new
    memory.write("O", a / l[:, None], i)
""",
    # "which key/value tiles does query tile number n (counting from 0) read?": tiles 0..n, 2 b d each, plus
    # Q read once and O written once.
    "l15-moved-answer": """
tiles = T // b
kv = sum(2 * b * d * (n + 1) for n in range(tiles))
return T * d + T * d + kv
""",
    # exercise 3, the loop body from section 2's steps: 2. "S = q k^T / sqrt(d) and P = e^(S - L)"; 3. "dV =
    # P^T dO and dP = dO V^T", "D_i = sum_c dO_ic O_ic, from the stored output", dS = P o (dP - D); 4. "dQ =
    # dS K / sqrt(d) and dK = dS^T Q / sqrt(d)", this tile's rows of dK and dV, dq summed over the tiles
    "l15-backward-answer": """
scale = 1 / np.sqrt(d)
W = np.exp(q @ k.T * scale - L.reshape(-1, 1))
G = dO @ v.T
rowdot = np.einsum("ic,ic->i", dO, O)
dScores = W * (G - rowdot.reshape(-1, 1))
dV[j:j + b] = W.T @ dO
dK[j:j + b] = dScores.T @ q * scale
dq = dq + dScores @ k * scale
""",
}
