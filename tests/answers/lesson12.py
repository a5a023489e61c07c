"""Lesson 12: each code exercise answered from the lesson's own words (Exercise 1's mean-ablation, section 1's
formula for the feed-forward half of the layer, Exercise 3's prediction and ratio), other than the model
answer.
"""

ANSWERS = {
    "l12-mean-ablate-answer": """
d_k = context.shape[1] // num_heads
new = context.copy()
columns = list(range(head * d_k, head * d_k + d_k))
new[:, columns] = np.mean(pool[:, columns], axis=0, keepdims=True)
return new @ W_O + b_O
""",
    "l12-ffn-answer": """
import math
erf = np.vectorize(math.erf)
pre = x1 @ W_1 + b_1
gelu = 0.5 * pre * (1 + erf(pre / math.sqrt(2)))
return layer_norm(x1 + gelu @ W_2 + b_2)
""",
    "l12-ratio-answer": """
predicted_parked = 0.8 / 11.6     # section 3: layer 2's parked median ||o_i^h|| 0.84, ||x_i|| 11.6
predicted_other = 1.6 / 11.6      # and 1.58 for the other heads
def head_to_residual(weights, vW, x):
    o = np.matmul(weights, vW)
    return np.sqrt((np.asarray(o) ** 2).sum(-1)) / np.sqrt((np.asarray(x) ** 2).sum(-1))
""",
}
