"""Lesson 13's code exercises, answered from the lesson's own words (not the instructor's solutions)."""

ANSWERS = {
    # "Rotate q and k_new at the new token's position (sa.llm.rotary(x[None], torch.tensor([p]))[0] ...),
    # append the key and value, and let the query attend to all T + 1 keys (scaled by sqrt(d_k))"
    "l13-decode-answer": """
p = K_cache.shape[0]
q_rot = sa.llm.rotary(q[None], torch.tensor([p]))[0]
k_rot = sa.llm.rotary(k_new[None], torch.tensor([p]))[0]
K_cache = torch.cat([K_cache, k_rot[None]], dim=0)
V_cache = torch.cat([V_cache, v_new[None]], dim=0)
weights = torch.softmax(K_cache @ q_rot / K_cache.shape[1] ** 0.5, dim=-1)
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
