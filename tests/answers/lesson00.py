"""Lesson 00, answered from the lesson's own words: z_2 from row 2 of the weight table, with the vectors that
section 2 defines."""

ANSWERS = {
    "warmup-answer": """
apple_in_context = 0.1 * love + 0.3 * apple + 0.6 * phones   # row 2: the weights apple gives
""",
}
