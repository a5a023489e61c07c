"""Lesson 07: for each code answer, a right answer written from the lesson's own words (not the model answer).

See tests/answers/__init__.py: each is graded by the real grader and must get full marks.
"""

ANSWERS = {
    # Exercise 1: the scores by hand from head 2's table, then c found by trying values, 0.01 apart.
    "l07-head2-answer": """
apple_scores_2 = [0.3, 0.05, 1.5, 2.6]       # [2.0, 0.5] . k_j: 2.0 * 0.1 + 0.5 * 0.2, ...
c = 1.0
while sa.softmax(c * np.array(apple_scores_2) / math.sqrt(2))[3] <= 0.9:   # weight on "phones"
    c += 0.01
c_phones = round(c, 2)
""",
    # Exercise 2: cut each token's row into h blocks of d_k, then move the head axis before the tokens; merge
    # puts the heads' blocks back side by side.
    "l07-split-answer": """
def split_heads(Y, h):
    B, T, d_model = Y.shape
    d_k = d_model // h
    return np.swapaxes(Y.reshape(B, T, h, d_k), 1, 2)


def merge_heads(Z):
    return np.concatenate([Z[:, i] for i in range(Z.shape[1])], axis=-1)
""",
    # Exercise 3: row r of W_O is what concatenated feature r writes; head 2's tech feature is feature 3.
    "l07-mix-answer": """
W_O_mix = np.zeros((4, 4))
W_O_mix[0, 0] = W_O_mix[1, 1] = 1   # head 1's two features -> outputs 0 and 1, unchanged
W_O_mix[3, 2] = 2                   # head 2's tech feature (concatenated feature 3) -> output 2
can_recover_fruit = False           # row 2 (head 2's fruit) writes nothing anywhere
""",
}
