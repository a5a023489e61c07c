"""Lesson 14's code exercises, answered from the lesson's own words (not the instructor's solutions)."""

ANSWERS = {
    # "pair i is (feature i, feature i + d/2)"; "R(phi)^T R(psi) = R(psi - phi)": a^T R(phi) b written
    # out with phi = -(i - j) theta_u gives cos(phi) (a1 b1 + a2 b2) + sin(phi) (a2 b1 - a1 b2)
    "l14-rope-answer": """
h = len(q) // 2
c = np.zeros(h)
s = np.zeros(h)
for i in range(h):
    a1, a2, b1, b2 = q[i], q[i + h], k[i], k[i + h]
    c[i] = a1 * b1 + a2 * b2
    s[i] = -(a2 * b1 - a1 * b2)
return c, s
""",
    # the same answer in polar form, per pair conj(a) b = |a| |b| e^{i (angle b - angle a)}: cosine and sine
    # of angles read off q and k, no rotation. No cell has this id, so grading skips it; it is checked, as
    # check and hidden test, by tests/test_mistakes_lesson14.py::test_rope_polar_answer_from_answers_passes
    "l14-rope-answer-polar": """
h = len(q) // 2
ra, rb = np.hypot(q[:h], q[h:]), np.hypot(k[:h], k[h:])
pa, pb = np.arctan2(q[h:], q[:h]), np.arctan2(k[h:], k[:h])
return ra * rb * np.cos(pb - pa), ra * rb * np.sin(pb - pa)
""",
    # "a local layer holds at most min(T, window) tokens, a global one all T": try 0, 1, ... global layers and
    # keep the most whose caches fit
    "l14-interleave-answer": """
best = 0
for g in range(layers + 1):
    if g * T + (layers - g) * min(T, window) <= budget:
        best = g
return best
""",
    # "Pair i turns once every wavelength lambda_i = 2 pi / theta_i tokens", theta_i = base^(-2i/d): the
    # slowest pair still allowed a full turn, i = d/2 - unseen - 1, has a wavelength of exactly trained_length
    "l14-turns-answer": """
i = d // 2 - 1 - unseen
return np.exp(np.log(trained_length / (2 * np.pi)) * d / (2 * i))
""",
}
