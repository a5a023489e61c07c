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
    # Exercise 2: in_proj_weight is three (d_model, d_model) blocks, each in (out, in) order.
    "l08-torch-answer": """
d = mha.embed_dim
W_Q, W_K, W_V = (w.T for w in mha.in_proj_weight.detach().numpy().reshape(3, d, d))
b_Q, b_K, b_V = mha.in_proj_bias.detach().numpy().reshape(3, d)
W_O, b_O = mha.out_proj.weight.detach().numpy().T, mha.out_proj.bias.detach().numpy()
return W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O
""",
    # Exercise 3: matrix by matrix, each with a bias as long as its output.
    "l08-count-answer": """
d_k = d_model // num_heads
shapes = [(d_model, d_model), (kdim, num_kv_heads * d_k), (kdim, num_kv_heads * d_k), (d_model, d_model)]
return sum(rows * cols + (cols if bias else 0) for rows, cols in shapes)
""",
}
