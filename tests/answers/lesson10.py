"""Lesson 10's code exercises answered from the lesson's own words (not the instructor's solutions)."""

ANSWERS = {
    # The exercise's words: "32 or 16 bits per number" (8 bits a byte); "in training the backward pass
    # needs the weights" (every layer's kept), "in inference a layer's weights are freed" (one at a time);
    # then step T up from the float square root until T fits and T + 1 does not, in exact integers.
    "l10-longest-answer": """
bits = 32 if dtype == "float32" else 16
layers = num_layers if training else 1
per_square = layers * batch * num_heads * bits // 8          # bytes for each unit of T^2
T = int((memory_bytes / per_square) ** 0.5)
while per_square * (T + 1) ** 2 <= memory_bytes:
    T += 1
while per_square * T ** 2 > memory_bytes:
    T -= 1
return T
""",
    # Section 4's L: e^{L_b} is block b's sum of exponentials, so the whole denominator is their sum, taken
    # with np.logaddexp as in the lesson; each block's share of the weight is e^{L_b - L}.
    "l10-combine-answer": """
L = np.logaddexp.reduce(lses)
return np.exp(lses - L) @ outputs
""",
    # The prompt's numbers: no score beats m = 2, so m stays and the old sums keep their factor e^0 = 1; the
    # block's terms are e^{-ln 2} = 1/2 and e^{-ln 4} = 1/4, added to l, and times their values to o.
    "l10-predict-answer": """
predicted_state = (2, 1.5 + 1 / 2 + 1 / 4, [0.5 + 2 / 2, -1 + 4 / 4])
""",
    # Section 4's merge: summarise the new block as (m_B, l_B, o_B), then merge it with the state (block A).
    "l10-online-answer": """
m_b = scores.max()
l_b = np.exp(scores - m_b).sum()
o_b = np.exp(scores - m_b) @ values
m_new = max(m, m_b)
return (m_new, np.exp(m - m_new) * l + np.exp(m_b - m_new) * l_b,
        np.exp(m - m_new) * o + np.exp(m_b - m_new) * o_b)
""",
}
