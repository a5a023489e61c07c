"""Lesson 01, answered from the lesson's own words (other than the instructor's solutions):

- Exercise 1: a vector turned towards C, checked by hand: D = [3, 1] has D . C = 9 + 2 = 11 and a cosine of
  0.965; the longest D solves |D| |C| cos(theta) = 11 at the smallest cosine allowed.
- Exercise 2: words used where a hand is, tried with `sense_cosine` as the exercise says, none containing
  "palm".
- Exercise 3: the hint's way: compute the votes x_j . r of a few candidate words with `toward_river`, then
  choose river words whose votes add up to more than those of "bank" and "money", and keep their votes.
"""

ANSWERS = {
    "l01-disagree-answer": """
D = np.array([3.0, 1.0])      # 3*3 + 1*2 = 11, and it points close to C
D_longest = 11 / (np.linalg.norm(C) * 0.95)   # |D| |C| cos(theta) = 11, cos(theta) at least 0.95
""",
    "l01-probes-answer": """
# Prediction: tree words would not do: oak or pine sits near temperate ones, bamboo near tropical ones.
palm_probes = "grip fist knuckles gloves".split()   # one word per probe, each alone lifting palm
""",
    "l01-outvote-answer": """
# Prediction: two or three words like "river".
votes = {w: float(E.vector(w) @ toward_river) for w in ["bank", "money", "river", "boat", "fish", "sea"]}
sentence = ["a", "boat", "on", "the", "river", "sea", "bank", "money"]
votes = {w: float(E.vector(w) @ toward_river) for w in sentence}
assert sum(votes[w] for w in ["boat", "river", "sea", "bank", "money"]) > 0
""",
}
