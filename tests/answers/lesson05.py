"""Lesson 05's code answers as a learner who follows the lesson's text would write them (not the model
answers): graded by tests/test_grading.py, each must get full marks."""

ANSWERS = {
    # "the cross-entropy loss of one example is -log p_y", p = softmax of the logits.
    "l05-loss-answer": """
loss_equal_logits = -math.log(1 / 8)
loss_leaning_wrong = -math.log(math.exp(0) / (math.exp(2) + 7 * math.exp(0)))
""",
    # "the gradient of the logits is p - onehot(y)", logit c is sum_k W[c, k] h[k], "w <- w - lr * grad".
    "l05-sgd-answer": """
logits = W @ h
p = np.exp(logits - logits.max())
p = p / p.sum()
onehot = np.zeros(len(p))
onehot[y] = 1.0
return W - lr * np.outer(p - onehot, h)
""",
    # "write in predicted_smallest_d_k the smallest d_k ...", then "train learned models with d_k = 1 and with
    # d_k = 2, keeping d_v = 16 ..., from starts 0-7 (torch.manual_seed(seed) before making each model), with
    # tasks.train(model, data)": "[-1][1] is the final held-out accuracy".
    "l05-dk-answer": """
predicted_smallest_d_k = 2
accuracies = {1: [], 2: []}
for d in [1, 2]:
    for s in range(8):
        torch.manual_seed(s)
        m = tasks.ReadoutModel(sa.SelfAttention(D_IN, d, d_v=16), 16)
        checkpoints = tasks.train(m, data)
        accuracies[d].append(checkpoints[-1][1])
""",
}
