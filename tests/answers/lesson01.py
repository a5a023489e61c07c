"""Lesson 01, answered from the lesson's own words (other than the instructor's solutions):

- Exercise 1: a vector turned towards C, checked by hand: D = [3, 1] has D . C = 9 + 2 = 11 and a cosine of
  0.965.
- Exercise 2: every ranking computed from the toy rows the lesson gives, as the exercise allows ("check your
  predictions with code of your own"): dot products, cosines, distances, and distances between rows scaled to
  length 1.
- Exercise 3: the hint's way: compute the votes x_j . r of a few candidate words with `toward_river`, then
  choose river words whose votes add up to more than those of "bank" and "money".
"""

ANSWERS = {
    "l01-disagree-answer": """
D = np.array([3.0, 1.0])      # 3*3 + 1*2 = 11, and it points close to C
D_is = "Shorter"              # |D| |C| cos(theta) must stay 11 while cos(theta) grows
""",
    "l01-neighbours-answer": """
unit_rows = toy_rows / np.linalg.norm(toy_rows, axis=1, keepdims=True)
unit_bank = toy_bank / np.linalg.norm(toy_bank)
scores = {"dot": toy_rows @ toy_bank, "cosine": unit_rows @ unit_bank,
          "distance": -np.linalg.norm(toy_rows - toy_bank, axis=1),
          "unit": -np.linalg.norm(unit_rows - unit_bank, axis=1)}     # minus: nearest = highest
top3 = {name: [toy_words[j] for j in np.argsort(-s)[:3]] for name, s in scores.items()}
by_dot, by_cosine, by_distance, by_unit_distance = top3["dot"], top3["cosine"], top3["distance"], top3["unit"]
""",
    "l01-outvote-answer": """
# Prediction: two or three words like "river".
votes = {w: float(E.vector(w) @ toward_river) for w in ["bank", "money", "river", "boat", "fish", "sea"]}
sentence = ["a", "boat", "on", "the", "river", "sea", "bank", "money"]
assert sum(votes[w] for w in ["boat", "river", "sea", "bank", "money"]) > 0
""",
}
