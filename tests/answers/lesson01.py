"""Lesson 01, answered from the lesson's own words (other than the instructor's solutions):

- Exercise 1: a vector turned towards C, checked by hand: D = [3, 1] has D . C = 9 + 2 = 11 and a cosine of
  0.965.
- Exercise 2: "whole words only, the word itself left out", as the lesson says ``E.neighbours`` searches, with
  the cosine written as in section 2 (dot product over the product of the lengths), all rows at once.
- Exercise 3: the search the exercise allows, fine enough for three decimals: a grid of steps of 0.0001 over
  w, comparing the two cosines of each z(w) directly.
"""

ANSWERS = {
    "l01-disagree-answer": """
# Prediction: shorter, since |D| |C| cos(theta) must stay 11 while cos(theta) grows.
D = np.array([3.0, 1.0])      # 3*3 + 1*2 = 11, and it points close to C
""",
    "l01-neighbours-answer": """
x = np.asarray(table)[list(vocab).index(word)]
cosines = np.asarray(table) @ x / (np.linalg.norm(table, axis=1) * np.linalg.norm(x))
ranked = [vocab[j] for j in np.argsort(-cosines)]
return [w for w in ranked if w != word and w.isalpha()][:k]
""",
    "l01-river-share-answer": """
# Prediction: less than 0.5.
bank, river, money = E.vector("bank"), E.vector("river"), E.vector("money")
for w in np.arange(0, 1, 0.0001):
    z = (1 - w) * bank + w * river
    if cos_sim(z, river) >= cos_sim(z, money):
        w_river = float(w)
        break
""",
}
