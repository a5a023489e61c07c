"""Lesson 07: for each code answer, a right answer written from the lesson's own words (not the model answer).

See tests/answers/__init__.py: each is graded by the real grader and must get full marks.
"""

ANSWERS = {
    # Exercise 1: z = sum_j alpha_apple,j v_j from head 2's printed row of weights and V; the concatenation
    # puts head 1 first (features 0-1), then head 2; the output is that row times W_O.
    "l07-apple-answer": """
W_O_ex = np.array([[1, 0, 0, 0], [0, 0, 1, 0], [0, 1, 0, 1], [1, 0, 0, -1]], dtype=float)
weights = [0.108, 0.09, 0.252, 0.549]        # head 2's row of "apple"
values = [[0.2, 0.1], [0.1, 0.0], [1.0, 0.5], [0.4, 1.2]]   # head 2's V
z2_apple = [sum(w * v[f] for w, v in zip(weights, values)) for f in range(2)]
head2_columns = [2, 3]
row = [0.924, 1.333] + z2_apple             # [z^(1) | z^(2)] for "apple"
out_apple = [sum(row[r] * W_O_ex[r, c] for r in range(4)) for c in range(4)]
""",
    # Exercise 2: the lesson's steps in other words: in_proj cut into its three row blocks (stored (out, in),
    # so each is transposed), a helper that moves the heads in front of the words, boolean assignment of
    # -inf on the padding keys, the merge, then out_proj.
    "l07-split-answer": """
B, T, d_model = X.shape
d_k = d_model // num_heads
W_q, W_k, W_v = W_in[:d_model], W_in[d_model:2 * d_model], W_in[2 * d_model:]   # (out, in) each
b_q, b_k, b_v = b_in[:d_model], b_in[d_model:2 * d_model], b_in[2 * d_model:]


def heads(Y):                           # (B, T, d_model) -> (B, num_heads, T, d_k): heads first
    return Y.reshape(B, T, num_heads, d_k).swapaxes(1, 2)


Q, K, V = heads(X @ W_q.T + b_q), heads(X @ W_k.T + b_k), heads(X @ W_v.T + b_v)
scores = Q @ K.swapaxes(-1, -2) / np.sqrt(d_k)                        # (B, num_heads, T, T)
scores[np.broadcast_to(pad[:, None, None, :], scores.shape)] = -np.inf  # padding keys, every head and query
Z = (sa.softmax(scores, axis=-1) @ V).swapaxes(1, 2).reshape(B, T, d_model)
return Z @ W_out.T + b_out
""",
    # Exercise 3: row r of W_O is what concatenated feature r writes; head 2's tech feature is feature 3.
    "l07-mix-answer": """
W_O_mix = np.zeros((4, 4))
W_O_mix[0, 0] = W_O_mix[1, 1] = 1   # head 1's two features -> outputs 0 and 1, unchanged
W_O_mix[3, 2] = 2                   # head 2's tech feature (concatenated feature 3) -> output 2
""",
}
