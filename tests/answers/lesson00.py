"""Lesson 00, answered from the lesson's own words: the prediction as the mirror image of the juice mix the
lesson computes above the exercise."""

ANSWERS = {
    "warmup-answer": """
apple_in_context = apple_with_juice[::-1]   # phones is juice mirrored, love and apple sit on the diagonal
""",
}
