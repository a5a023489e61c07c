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
    # The loop section's words: "one Adam optimiser, made before the loop; then each step takes the next
    # `batch` training sequences (from `step * batch`, wrapping around), computes logits and loss, clears the
    # old gradients, computes new ones and steps"; the held-out accuracy "without gradients".
    "l05-train-answer": """
optimiser = torch.optim.Adam(model.parameters(), lr=lr)
for step in range(steps):
    first = step * batch % len(X_train)
    X, y = X_train[first:first + batch], y_train[first:first + batch]
    loss = F.cross_entropy(model(X)[0], y)
    optimiser.zero_grad()
    loss.backward()
    optimiser.step()
with torch.no_grad():
    logits = model(X_test)[0]
return (logits.argmax(-1) == y_test).float().mean().item()
""",
}
