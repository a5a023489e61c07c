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
    # "tasks.make_lookup_data(n, seed, offsets=(-1,))"; eight learned models, "trained on data_before"
    # with the lesson's own train_loop.
    "l05-train-answer": """
# My prediction: the entry (s, s - 1), in every row, from every start.
X_tr, y_tr = tasks.make_lookup_data(2000, seed=1, offsets=(-1,))
X_te, y_te = tasks.make_lookup_data(500, seed=2, offsets=(-1,))
data_before = (X_tr, y_tr, X_te, y_te)
models_before = []
for seed in range(8):
    model = learned_model(seed)
    train_loop(model, data_before)
    models_before.append(model)
""",
}
