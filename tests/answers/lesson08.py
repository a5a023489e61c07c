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
    # Exercise 2: lesson 07's formula head by head, each head on its own d_k columns.
    "l08-torch-answer": """
d_k = mha.embed_dim // mha.num_heads
W = {n: t.detach().numpy() for n, t in mha.named_parameters()}
b_Q, b_K, b_V = np.split(W["in_proj_bias"], 3)
Q = x @ W["q_proj_weight"].T + b_Q
K = memory @ W["k_proj_weight"].T + b_K
V = memory @ W["v_proj_weight"].T + b_V
heads = []
for i in range(mha.num_heads):
    c = slice(i * d_k, (i + 1) * d_k)
    s = Q[:, c] @ K[:, c].T / np.sqrt(d_k)
    a = np.exp(s - s.max(axis=1, keepdims=True))
    heads.append(a / a.sum(axis=1, keepdims=True) @ V[:, c])
return np.concatenate(heads, axis=1) @ W["out_proj.weight"].T + W["out_proj.bias"]
""",
    # Exercise 3: matrix by matrix, each with a bias as long as its output.
    "l08-count-answer": """
d_k = d_model // num_heads
shapes = [(d_model, d_model), (kdim, num_kv_heads * d_k), (kdim, num_kv_heads * d_k), (d_model, d_model)]
return sum(rows * cols + (cols if bias else 0) for rows, cols in shapes)
""",
}
