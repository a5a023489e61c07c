"""Lesson 00, answered from the lesson's own words: the warm-up's row designed on paper. love and apple lie on
the diagonal, so only the phones weight moves technology - food, by 0.9 per unit of weight: 0.45 needs
0.45 / 0.9 = 0.5 on phones at the least; love and apple share the rest, any way."""

ANSWERS = {
    "warmup-answer": """
w_phones = 0.45 / (1.0 - 0.1)                         # phones' technology - food is 0.9
apple_weights = np.array([1 - 0.45 - w_phones, 0.45, w_phones])
""",
}
