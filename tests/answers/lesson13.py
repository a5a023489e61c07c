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
    # "the larger of the time to read the bytes (every weight once, in 2 bytes, and every sequence's cache
    # once) ... and the time to do the FLOPs (2 per weight per sequence)"
    "l13-roofline-answer": """
weight_bytes = 2 * n_params
cache_bytes = batch * T * cache_bytes_per_token
reading = (weight_bytes + cache_bytes) / bandwidth
computing = 2 * n_params * batch / flops_per_s
return max(reading, computing)
""",
    # "token p lives in block block_table[p // B] at slot p % B"
    "l13-blocks-answer": """
B = pool.shape[1]
rows = [pool[block_table[p // B], p % B] for p in range(length)]
return np.array(rows)
""",
}
