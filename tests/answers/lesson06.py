"""Lesson 06: for each code answer, another right answer written from the lesson's own words.

- Exercise 1 follows section 2 step by step: k[m] of variance 1/3 at PyTorch's start, the scaled scores'
  variance var_q var_k = 1, and q[m] summing d_in terms x[i] W[i, m] of variance std_q^2.
- Exercise 2 writes out the chain rule's sum with the derivative of section 3, term by term.
- Exercise 4 (before section 4's control) takes the "more than one way": each of W_Q and W_K divided by 2.
"""

ANSWERS = {
    "l06-init-scale-answer": """
d_in, var_k = 32, 1 / 3                     # k[m] at PyTorch's start (section 2)
var_q = 1 / var_k                           # the divisor removes d_k: Var(q.k / sqrt(d_k)) = var_q var_k = 1
std_q = math.sqrt(var_q / d_in)             # q[m] adds d_in terms x[i] W[i, m] of variance std_q^2
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
