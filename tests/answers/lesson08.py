"""Lesson 08: for each code answer, a right answer written from the lesson's own words (not the model answer).

See tests/answers/__init__.py: each is graded by the real grader and must get full marks.
"""

ANSWERS = {
    # Exercise 1: the head's block of the concatenation set to zeros, as Heads concatenates, then the readout.
    "l08-silence-answer": """
with torch.no_grad():
    outputs = [h(X)[0] for h in model.attention.heads]      # each head's output, (n, T, d_k)
    outputs[head] = torch.zeros_like(outputs[head])          # the silenced head gives zeros
    Z = torch.cat(outputs, dim=-1)                           # the concatenation
    return model.readout(Z[:, -1]).view(len(X), 2, -1)       # the readout reads the query token
""",
    # Exercise 2: both heads from the task's words, one-hot letters: the query of letter s scores high only
    # with the key of letter s + 1 (head 1) or s - 1 (head 2); the digit rows stay zero.
    "l08-design-answer": """
W_K1 = np.zeros((17, 8))
W_K1[:8] = np.eye(8)                          # the key of letter L: the one-hot L
W_K2 = W_K1.copy()
W_Q1 = np.zeros((17, 8))
W_Q2 = np.zeros((17, 8))
for s in range(8):
    W_Q1[s, (s + 1) % 8] = 10.0               # letter s asks for letter s + 1 (after H comes A)
    W_Q2[s, (s - 1) % 8] = 10.0               # and head 2 for letter s - 1
Xn = X_test.numpy().astype(float)
q = Xn[:, -1] @ np.concatenate([W_Q1, W_Q2], axis=1)
k = Xn @ np.concatenate([W_K1, W_K2], axis=1)
scores = (k @ q[:, :, None])[:, :, 0] / np.sqrt(q.shape[1])
w = np.exp(scores - scores.max(1, keepdims=True))
w = w / w.sum(1, keepdims=True)
own = Xn[:, :4, :8].argmax(-1) == Xn[:, 4:, :8].argmax(-1)
one_head_distractor = w[:, :4][own].mean()
""",
    # Exercise 3: g key/value heads of d_k = d_model / h, side by side; W_Q and W_O keep d_model x d_model.
    "l08-gqa-answer": """
d_k = 4096 // 32
shape_W_K = (4096, 8 * d_k)
gqa_params = 4096 * 4096 + 4096 * 8 * d_k + 4096 * 8 * d_k + 4096 * 4096
""",
}
