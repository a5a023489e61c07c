"""Lesson 11: each code exercise answered from the lesson's own words (section 1's formula for what enters
layer 0, Exercise 2's rule for a held-out sentence, section 1's sentence embedding), other than the model
answer.
"""

ANSWERS = {
    "l11-input-answer": """
T = len(ids)
h = word_table[ids] + position_table[:T] + type_table[0]
mean = h.mean(-1, keepdims=True)
variance = ((h - mean) ** 2).mean(-1, keepdims=True)
return gamma * (h - mean) / np.sqrt(variance + eps) + beta
""",
    "l11-senses-answer": """
vectors = np.asarray(vectors, dtype=float)
labels = np.asarray(labels)
guesses = []
for i in range(len(vectors)):
    cosines = []
    for k in range(labels.max() + 1):
        members = [vectors[j] for j in range(len(vectors)) if j != i and labels[j] == k]
        centroid = np.mean(members, axis=0)
        cosines.append(vectors[i] @ centroid / (np.linalg.norm(vectors[i]) * np.linalg.norm(centroid)))
    guesses.append(int(np.argmax(cosines)))
return np.array(guesses)
""",
    "l11-embedding-answer": """
mask = np.asarray(mask, dtype=float)
m = (hidden * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
return m / np.sqrt((m ** 2).sum(axis=1, keepdims=True))
""",
}
