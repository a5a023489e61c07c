"""Lesson 14's code exercises, answered from the lesson's own words (not the instructor's solutions)."""

ANSWERS = {
    # "write pair i's rotation as a 2 x 2 matrix R(p theta_i); R(a)^T R(b) = R(b - a)"; pair i is (feature i,
    # feature i + d/2), theta_i = base^(-2i/d); offset = m - n
    "l14-rope-answer": """
d = len(q)
h = d // 2
total = 0.0
for i in range(h):
    theta = base ** (-2 * i / d)
    m_angle, n_angle = offset * theta, 0.0
    R = lambda a: np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    total += np.array([q[i], q[i + h]]) @ R(m_angle).T @ R(n_angle) @ np.array([k[i], k[i + h]])
return total
""",
    # "a local layer holds at most window tokens, a global one all T"; "layer local_per_global is the first
    # global one"
    "l14-interleave-answer": """
total = 0
for layer in range(layers):
    if local_per_global == 0 or layer % (local_per_global + 1) == local_per_global:
        total += T
    else:
        total += min(window, T)
return total
""",
    # "Pair i turns once every wavelength lambda_i = 2 pi / theta_i tokens", theta_i = base^(-2i/d);
    # "complete at least one full turn within the trained length"
    "l14-turns-answer": """
wavelengths = np.array([2 * np.pi / base ** (-2 * i / d) for i in range(d // 2)])
seen = 0
for lam in wavelengths:
    if trained_length / lam >= 1:
        seen += 1
return wavelengths, seen
""",
}
