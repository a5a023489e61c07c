"""Lesson 13's code exercises, answered from the lesson's own words (not the instructor's solutions)."""

ANSWERS = {
    # "which new vectors RoPE turns, at which position (read it off the shapes), whether the cached keys need
    # turning again ..., and which keys the query reads": q and k_new at T = K_cache.shape[0], the cache as
    # it is, all T + 1 keys under the causal mask, scaled by sqrt(d_k) as ever
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
    # "a request takes the first free block (free_blocks.pop(0)) only when its last block is full"; token p
    # lives in block table[p // B] at offset p mod B (section 6)
    "l13-place-answer": """
tables = [[5, 2], [7], [0, 3, 9]]
free = [1, 4, 6, 8, 10, 11]
lengths = [30, 16, 47]
for step in range(10):
    for r in range(3):
        if lengths[r] == len(tables[r]) * 16:
            tables[r].append(free.pop(0))
        lengths[r] += 1
free_after = len(free)
wasted = sum(len(t) * 16 - n for t, n in zip(tables, lengths))
next_place = (tables[0][lengths[0] // 16], lengths[0] % 16)
""",
}
