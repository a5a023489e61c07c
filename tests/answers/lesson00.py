"""Lesson 00, answered from the lesson's own words: the warm-up's row designed on paper. love and apple lie on
the diagonal, so only the phones weight moves technology - food, by 0.9 per unit of weight: 0.3 needs at least
1/3 on phones; apple keeps 0.3 of itself and love gets the rest."""

ANSWERS = {
    "warmup-answer": """
w_phones = 0.5                                        # 0.9 * 0.5 = 0.45 >= 0.3
apple_weights = np.array([1 - 0.3 - w_phones, 0.3, w_phones])
""",
}
