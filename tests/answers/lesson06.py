"""Lesson 06: for each code answer, another right answer written from the lesson's own words.

- Exercise 2 follows section 2 step by step: a weight's variance 1/(3 d_in), an entry of q summing d_in
  terms x[i] W[i, m] of variance 4 * 1/(3 d_in), then Var(q.k) = d_k var_q var_k.
- Exercise 3 writes out the chain rule's sum with the derivative of section 3, term by term.
- Exercise 1 (in section 3) takes the "more than one way": each of W_Q and W_K divided by 2.
"""

ANSWERS = {
    "l06-init-scale-answer": """
d_in, d_k, var_x = 32, 64, 4
var_weight = 1 / (3 * d_in)                 # uniform between -1/sqrt(d_in) and +1/sqrt(d_in)
var_q = d_in * var_x * var_weight           # q[m] adds d_in terms x[i] W[i, m]
var_k = var_q
scale = 1 / math.sqrt(d_k * var_q * var_k)
""",
    "l06-score-gradient-answer": """
T = len(alpha)
grad = np.zeros(T)
for l in range(T):
    for j in range(T):
        delta = 1.0 if j == l else 0.0
        grad[l] += g[j] * alpha[j] * (delta - alpha[l])
return grad
""",
    "l06-unscaled-answer": """
with torch.no_grad():
    unscaled.W_query.weight.copy_(scaled.W_query.weight / 2)
    unscaled.W_key.weight.copy_(scaled.W_key.weight / 2)
    unscaled.W_value.weight.copy_(scaled.W_value.weight)
""",
}
