"""Lesson 07: for each code answer, a right answer written from the lesson's own words (not the model answer).

See tests/answers/__init__.py: each is graded by the real grader and must get full marks.
"""

ANSWERS = {
    # Exercise 1: the scores by hand from head 2's table, then c found by trying values, 0.01 apart.
    "l07-head2-answer": """
more_than_estimate = 4 > 2                   # four terms in the softmax's sum, not two: c must be larger
apple_scores_2 = [0.3, 0.05, 1.5, 2.6]       # [2.0, 0.5] . k_j: 2.0 * 0.1 + 0.5 * 0.2, ...
c = 1.0
while sa.softmax(c * np.array(apple_scores_2) / math.sqrt(2))[3] <= 0.9:   # weight on "phones"
    c += 0.01
c_phones = round(c, 2)
""",
    # Exercise 2: the lesson's steps with PyTorch tensors: in_proj in one product cut in three, view and
    # transpose per head, masked_fill on the keys, then merge and out_proj.
    "l07-split-answer": """
import torch


def mha_forward(X, W_in, b_in, W_out, b_out, pad, h):
    X, W_in, b_in, W_out, b_out, pad = (torch.as_tensor(a) for a in (X, W_in, b_in, W_out, b_out, pad))
    B, T, d_model = X.shape
    q, k, v = (X @ W_in.T + b_in).chunk(3, dim=-1)          # rows of W_in: W_Q^T, W_K^T, W_V^T
    q, k, v = (t.view(B, T, h, -1).transpose(1, 2) for t in (q, k, v))
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_model // h)
    scores = scores.masked_fill(pad[:, None, None, :], float("-inf"))   # padding keys
    Z = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(B, T, d_model)
    return Z @ W_out.T + b_out
""",
    # Exercise 3: row r of W_O is what concatenated feature r writes; head 2's tech feature is feature 3.
    "l07-mix-answer": """
W_O_mix = np.zeros((4, 4))
W_O_mix[0, 0] = W_O_mix[1, 1] = 1   # head 1's two features -> outputs 0 and 1, unchanged
W_O_mix[3, 2] = 2                   # head 2's tech feature (concatenated feature 3) -> output 2
can_recover_fruit = False           # row 2 (head 2's fruit) writes nothing anywhere
""",
}
