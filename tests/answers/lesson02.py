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
    # Exercise 3: bisect "nature = 3 x finance" on bank' itself, with the lesson's sa.basic_self_attention.
    "l02-nature-answer": """
def excess(L):
    Z, A = sa.basic_self_attention(np.vstack([embed("money bank"), [0, L, 0, 0]]))
    return Z[1][1] - 3 * Z[1][0]
lo, hi = 1.0, 5.0
while hi - lo > 1e-6:
    mid = (lo + hi) / 2
    if excess(mid) < 0:
        lo = mid
    else:
        hi = mid
nature_length = hi
""",
}
