"""Lesson 13's code exercises, answered from the lesson's own words (not the instructor's solutions)."""

ANSWERS = {
    # "Append the new key and value at the end of the caches, then let the query attend to all T + 1 keys
    # (scaled by sqrt(d_k), softmax over the keys)."
    "l13-decode-answer": """
K_cache = np.vstack([K_cache, k_new])
V_cache = np.vstack([V_cache, v_new])
scores = K_cache @ q / np.sqrt(len(q))
weights = sa.softmax(scores)
return weights @ V_cache, K_cache, V_cache
""",
    # "the smallest batch ... for which a decode step's FLOP time is at least its reading time, both counted
    # as in section 4 (weights in float16 ...). If no batch gets there, return math.inf."
    "l13-bound-answer": """
batch = 1
while True:
    reading = (2 * n_params + batch * T * cache_bytes_per_token) / bandwidth
    computing = 2 * n_params * batch / flops_per_s
    if computing >= reading:
        return batch
    if 2 * n_params / flops_per_s <= T * cache_bytes_per_token / bandwidth:
        return math.inf
    batch += 1
""",
    # "if all the sequence's slots are used (or it has no block yet), take the first free block,
    # free_blocks.pop(0), and append it to block_table; then return (block, slot)"
    "l13-place-answer": """
if length >= len(block_table) * B:
    block_table.append(free_blocks.pop(0))
last = block_table[-1]
slot = length - (len(block_table) - 1) * B
return last, slot
""",
}
