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
    # exercise 3: "Read each K and V tile once with memory.read"; section 2's rules per tile, with step 3's
    # D_i = sum_c dO_ic O_ic from the stored output, step 4's dQ = dS K / sqrt(d)
    "l15-backward-answer": """
T = memory.arrays["K"].shape[0]
d = q.shape[1]
D = np.sum(dO * O, axis=1, keepdims=True)
dq = np.zeros(q.shape)
dK_parts, dV_parts = [], []
for j in range(0, T, b):
    k = memory.read("K", j, j + b)
    v = memory.read("V", j, j + b)
    S = np.einsum("id,jd->ij", q, k) / np.sqrt(d)
    P = np.exp(S - L.reshape(-1, 1))
    dP = dO @ v.T
    dS = P * (dP - D)
    dV_parts.append(P.T @ dO)
    dK_parts.append(dS.T @ q / np.sqrt(d))
    dq = dq + dS @ k / np.sqrt(d)
return dq, np.vstack(dK_parts), np.vstack(dV_parts)
""",
}
