"""Lesson 00, answered from the lesson's own words: the warm-up as the lesson computes the juice mix (one
product of the weights with the stacked vectors), with phones in place of juice."""

ANSWERS = {
    "warmup-answer": """
# Prediction: the mirror image of the juice mix, [0.42, 0.78].
apple_in_context = weights @ np.stack([love, apple, phones])   # (3,) @ (3, 2) -> (2,)
""",
}
