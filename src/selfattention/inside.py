"""Lesson 12's plumbing: what each attention block of the pretrained model adds, recorded with forward hooks.

Kept out of the lesson's reading path; the lesson states what these functions return and checks it (section 4
rebuilds a layer and compares with :func:`layer_parts`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

PROBES = ("the keys to the old cabinet are on the table.", "she put her money in the bank, then went home.",
          "we had a picnic on the river bank in the sun.", "i love apple phones, but i drink apple juice.",
          "after the storm, the roads were closed for a day.",
          "my brother plays the piano, and he sings well.", "the train was late, so we took a taxi.",
          "he read the letter twice before he replied.", "the children laughed when the clown fell over.",
          "if it rains tomorrow, the match will be cancelled.",
          "the museum opens at nine, but the cafe opens later.", "she fixed the bike, then she rode to work.")
"""Lesson 12's 12 sentences with commas and periods, on which every head is scored and removed."""
FRESH = ("the dog chased the ball across the park.", "our teacher explained the lesson, and we took notes.",
         "the soup was cold, so he heated it again.", "they painted the fence white last summer.",
         "when the bell rang, the students left the room.", "the pilot landed the plane safely in the fog.",
         "i lost my umbrella, and it started to rain.", "the baker sold every loaf before noon.",
         "she planted tomatoes, beans and carrots in spring.", "the old bridge was repaired after the flood.",
         "he missed the bus, so he walked to school.", "the band played until midnight, and nobody left.")
"""Lesson 12's 12 new sentences, on which a head's removal is measured again."""

EDITS = ("the keys to the old cabinet are on the floor.", "she put her money in the drawer, then went home.",
         "we had a picnic on the river bank in the rain.", "i love apple phones, but i drink orange juice.",
         "after the storm, the schools were closed for a day.",
         "my brother plays the guitar, and he sings well.", "the train was late, so we took a bus.",
         "he read the letter twice before he laughed.", "the children cried when the clown fell over.",
         "if it snows tomorrow, the match will be cancelled.",
         "the library opens at nine, but the cafe opens later.",
         "she fixed the bike, then she rode to school.",
         "the cat chased the ball across the park.", "our teacher explained the lesson, and we took photos.",
         "the coffee was cold, so he heated it again.", "they painted the fence green last summer.",
         "when the phone rang, the students left the room.",
         "the pilot landed the plane safely in the storm.",
         "i lost my umbrella, and it started to snow.", "the baker sold every cake before noon.",
         "she planted tomatoes, beans and carrots in autumn.", "the old bridge was closed after the flood.",
         "he missed the bus, so he walked to work.", "the band played until midnight, and nobody danced.")
"""Lesson 12's yardstick: ``EDITS[k]`` is ``(PROBES + FRESH)[k]`` with one word changed, so the meaning
changes while length and punctuation stay."""

POOL = ("a cat was sitting on the rug", "he gave the door a coat of red paint", "he painted the door blue",
        "he painted the door red", "interest rates rose again", "my sister is a violinist",
        "my sister plays the piano", "my sister plays the violin", "on monday the store opens",
        "penguins live in antarctica", "photosynthesis needs sunlight", "quantum computers use qubits",
        "she drank a cup of coffee", "she drank a cup of tea", "she had some tea", "the cat sat on the mat",
        "the dog sat on the mat", "the election results were delayed", "the engine needs new oil",
        "the goalkeeper saved a penalty", "the shop opens on friday", "the shop opens on monday",
        "the soup was far too warm to eat", "the soup was too cold", "the soup was too hot",
        "the train departed at midday", "the train left at midnight", "the train left at noon",
        "the volcano erupted last year", "we drove to the park", "we walked to the park",
        "we went to the park on foot")
"""32 short sentences, none of PROBES, FRESH or EDITS: the dataset whose mean mean-ablation uses."""


def yardstick(model: Any, sentences: Sequence[str] = PROBES + FRESH,
              edits: Sequence[str] = EDITS) -> dict[str, np.ndarray]:
    """``1 - cos`` between sentence embeddings: each sentence against its one-word edit, and, as an upper
    control, sentence k of the first half against sentence k of the second half (unrelated, of like length).

    Returns:
        ``{"one-word edit (24 pairs)": (n,), "unrelated (12 pairs)": (n // 2,)}`` for n sentences.
    """
    if len(sentences) != len(edits) or len(sentences) % 2:
        raise ValueError("sentences and edits must be of one even length, "
                         f"got {len(sentences)} and {len(edits)}")
    e = model.sentence_embeddings(list(sentences)).numpy()
    n = len(sentences)
    edit = 1 - (e * model.sentence_embeddings(list(edits)).numpy()).sum(-1)
    other = 1 - (e[: n // 2] * e[n // 2:]).sum(-1)
    return {f"one-word edit ({n} pairs)": edit, f"unrelated ({n // 2} pairs)": other}


def parking_table(held: dict[str, np.ndarray], parked: Any) -> str:
    """Section 2's table: per layer 1-5, the parked heads' mean weight in each column of ``held`` (from
    :func:`parking_controls`; the mean over the sentences of each head, then its mean and range over the
    heads), the other heads' weight on [CLS], and a last line per sentence over all parked heads."""
    parked = np.asarray(parked, dtype=bool)
    names = list(held)
    lines = ["layer  parked" + "".join(f"{name:>24}" for name in names) + "    other heads on [CLS]"]
    for l in range(1, parked.shape[0]):
        cols = [held[name][:, l, parked[l]].mean(0) for name in names]
        cols.append(held[names[0]][:, l, ~parked[l]].mean(0))
        lines.append(f"{l:5}  {parked[l].sum():2} of {parked.shape[1]}"
                     + "".join(f"{c.mean():12.2f} ({c.min():.2f} to {c.max():.2f})" for c in cols))
    lines.append("per sentence, mean over the parked heads: " + "; ".join(
        f"{name} {held[name][:, parked].mean(1).min():.2f} to {held[name][:, parked].mean(1).max():.2f}"
        for name in names))
    return "\n".join(lines)


def removal_table(delta: Any, parked: Any, edit: Any, cls_weight: Any,
                  held_out: slice = slice(12, 24)) -> str:
    """Section 4's verdicts. ``delta`` (layers, heads, n): 1 - cos when each head is removed, sentence by
    sentence; ``edit`` (n,): 1 - cos between each sentence and its own one-word edit; ``cls_weight``
    (layers, heads): mean weight on [CLS]. Compares each sentence's largest head removal with that sentence's
    edit (layers 0-4, then layer 5), gives the parked and other heads' medians (layers 0-4), and the rank
    tests of :func:`rank_tests` on the ``held_out`` sentences, also within layers (each layer's mean taken
    out of the weights and of the log changes)."""
    from scipy.stats import spearmanr

    d, k, e = np.asarray(delta), np.asarray(parked, dtype=bool), np.asarray(edit)
    early = np.arange(d.shape[0])[:, None] < d.shape[0] - 1
    c = d.mean(-1)
    lines = []
    for name, layers in (("layers 0-4", slice(0, -1)), ("layer 5", slice(-1, None))):
        top = d[layers].reshape(-1, d.shape[-1]).max(0)                # each sentence's largest removal
        lines.append(f"{name}: largest removal / the sentence's own edit, per sentence: median "
                     f"{np.median(top / e):.2f} ({(top / e).min():.2f} to {(top / e).max():.2f}); above the "
                     f"edit in {(top > e).sum()} of {e.size} sentences")
    lines.append(f"median change, layers 0-4, over the {e.size} sentences: parked "
                 f"{np.median(c[k & early]):.4f}, others {np.median(c[~k & early]):.4f}")
    held = d[..., held_out].mean(-1)
    w, logc = np.asarray(cls_weight)[1:5], np.log(held[1:5])
    within = spearmanr((w - w.mean(1, keepdims=True)).ravel(), (logc - logc.mean(1, keepdims=True)).ravel())
    rho, p, mw = rank_tests(cls_weight, held, k)
    lines.append(f"layers 1-4, the 12 new sentences only: Spearman {rho:.2f} (p = {p:.4f}), Mann-Whitney "
                 f"p = {mw:.4f}; within layers: Spearman {within.statistic:.2f} (p = {within.pvalue:.4f})")
    return "\n".join(lines)


def layer_parts(model: Any, sentence: str) -> dict[str, Any]:
    """Run ``model`` (a :class:`selfattention.data.PretrainedModel`) on one sentence and record, for each
    layer l, what its attention block produced, with forward hooks on the model's own modules.

    Returns ``model.run(sentence)`` (``tokens``, ``hidden``, ``attentions``) plus
        ``attention``: a list of num_layers tensors (T, 384): MultiHead(X) of layer l, W_O and b_O applied,
        the vector added to the residual stream ``hidden[l]``;
        ``block``: a list of num_layers tensors (T, 384): LayerNorm(hidden[l] + attention[l]).
    """
    attention: dict[int, Any] = {}
    block: dict[int, Any] = {}
    hooks = []
    for l, layer in enumerate(model.model.encoder.layer):
        hooks.append(layer.attention.output.dense.register_forward_hook(
            lambda mod, inp, out, l=l: attention.__setitem__(l, out[0].detach())))
        hooks.append(layer.attention.register_forward_hook(
            lambda mod, inp, out, l=l: block.__setitem__(
                l, (out[0] if isinstance(out, tuple) else out)[0].detach())))
    try:
        result = model.run(sentence)
    finally:
        for h in hooks:
            h.remove()
    n = len(attention)
    result["attention"] = [attention[l] for l in range(n)]
    result["block"] = [block[l] for l in range(n)]
    return result


def course_attention(bert_layer: Any) -> Any:
    """The course's ``MultiHeadAttention(384, 12, bias=True)`` (:mod:`selfattention.layers`) holding the
    attention weights of ``bert_layer``, one ``model.model.encoder.layer[l]``: ``W_query``, ``W_key``,
    ``W_value`` and ``W_out`` copied from its query, key, value and output ``nn.Linear`` modules (both store
    ``(out_features, in_features)``), weights and biases, in eval mode."""
    import torch

    from .layers import MultiHeadAttention

    attention = bert_layer.attention
    d_model = attention.self.query.in_features
    ours = MultiHeadAttention(d_model=d_model, num_heads=attention.self.num_attention_heads, bias=True).eval()
    pairs = [(ours.W_query, attention.self.query), (ours.W_key, attention.self.key),
             (ours.W_value, attention.self.value), (ours.W_out, attention.output.dense)]
    with torch.no_grad():
        for mine, theirs in pairs:
            mine.weight.copy_(theirs.weight)
            mine.bias.copy_(theirs.bias)
    return ours


def head_vectors(model: Any, x: Any, layer: int) -> np.ndarray:
    """``v_j W_O^h`` for every head h and token j of ``layer``, from the layer's input ``x`` (T, 384):
    (num_heads, T, 384), ``v_j = x_j W_V^h + b_V^h`` (bias included), ``W_O^h`` the head's d_k rows of W_O."""
    import torch

    block = model.model.encoder.layer[layer]
    heads = model.num_heads
    T, d_model = x.shape
    d_k = d_model // heads
    with torch.no_grad():
        V = block.attention.self.value(torch.as_tensor(x)).numpy().reshape(T, heads, d_k)
    W_O = block.attention.output.dense.weight.detach().numpy().T.reshape(heads, d_k, d_model)
    return np.einsum("jhk,hkd->hjd", V, W_O)


def head_means(model: Any, sentences: Sequence[str]) -> np.ndarray:
    """Each layer's concatenated head outputs (the input of W_O), averaged over every position of every
    sentence (each sentence run on its own, so no padding enters): the dataset mean that mean-ablation puts
    in a head's place. Head h's mean is columns ``h * d_k`` to ``(h + 1) * d_k - 1``.

    Returns:
        (num_layers, d_model) means.
    """
    import torch

    if isinstance(sentences, str) or not sentences:
        raise ValueError(f"sentences must be a non-empty list of strings, got {sentences!r}")
    rows: list[list[np.ndarray]] = [[] for _ in range(model.num_layers)]

    def keep(layer: int) -> Any:
        def hook(module: Any, args: tuple) -> None:
            rows[layer].append(args[0][0].detach().numpy())           # (T, d_model)
        return hook

    blocks = [model.model.encoder.layer[layer].attention.output.dense for layer in range(model.num_layers)]
    handles = [block.register_forward_pre_hook(keep(layer)) for layer, block in enumerate(blocks)]
    try:
        with torch.no_grad():
            for s in sentences:
                model.run(s)
    finally:
        for handle in handles:
            handle.remove()
    return np.stack([np.concatenate(r).mean(axis=0) for r in rows])


def remove_head(model: Any, layer: int, head: int, how: str = "zero", means: Any = None) -> Any:
    """Remove one head just before W_O (``attention.output.dense`` of ``layer``), with a forward pre-hook:
    ``how="zero"`` sets its d_k features of the concatenated heads to 0 (zero-ablation); ``how="dataset"``
    replaces them, for every token, by the head's dataset mean, ``means`` from :func:`head_means`
    (mean-ablation); ``how="mean"`` by their mean over the sentence's own T tokens (run one sentence at a
    time, as padding would enter the mean). Returns the hook's handle: ``handle.remove()`` puts the head
    back."""
    import torch

    if how not in ("zero", "mean", "dataset"):
        raise ValueError(f"how must be 'zero', 'mean' or 'dataset', got {how!r}")
    if how == "dataset" and means is None:
        raise ValueError("how='dataset' needs means, the (num_layers, d_model) array from head_means")
    d_k = model.model.config.hidden_size // model.num_heads

    def hook(module: Any, args: tuple) -> tuple:
        context = args[0].clone()                                # (B, T, d_model): the heads, concatenated
        cols = slice(head * d_k, (head + 1) * d_k)
        if how == "zero":
            context[..., cols] = 0.0
        elif how == "mean":
            context[..., cols] = context[..., cols].mean(dim=-2, keepdim=True)
        else:
            context[..., cols] = torch.as_tensor(np.asarray(means)[layer, cols], dtype=context.dtype)
        return (context,)

    return model.model.encoder.layer[layer].attention.output.dense.register_forward_pre_hook(hook)


def removal_changes(model: Any, sentences: Sequence[str], how: str = "mean", means: Any = None) -> np.ndarray:
    """The change of the sentence embedding, ``1 - cos(s, s_without_h)``, when each head in turn is removed
    (``how`` as in :func:`remove_head`), for each sentence on its own (no padding enters a mean).

    Each sentence runs once as a batch of num_layers * num_heads + 1 copies: copy ``l * num_heads + h``
    has head h of layer l removed, the last copy none.

    Returns:
        (num_layers, num_heads, len(sentences)) changes.
    """
    import torch

    if how not in ("zero", "mean", "dataset"):
        raise ValueError(f"how must be 'zero', 'mean' or 'dataset', got {how!r}")
    if how == "dataset" and means is None:
        raise ValueError("how='dataset' needs means, the (num_layers, d_model) array from head_means")
    if isinstance(sentences, str) or not sentences:
        raise ValueError(f"sentences must be a non-empty list of strings, got {sentences!r}")
    layers, heads = model.num_layers, model.num_heads
    d_k = model.model.config.hidden_size // heads
    n = layers * heads

    def hook_for(layer: int) -> Any:
        def hook(module: Any, args: tuple) -> tuple:
            context = args[0].clone()                            # (n + 1, T, d_model)
            for h in range(heads):
                cols = slice(h * d_k, (h + 1) * d_k)
                part = context[layer * heads + h, :, cols]
                if how == "zero":
                    context[layer * heads + h, :, cols] = 0.0
                elif how == "mean":
                    context[layer * heads + h, :, cols] = part.mean(dim=0, keepdim=True)
                else:
                    context[layer * heads + h, :, cols] = torch.as_tensor(
                        np.asarray(means)[layer, cols], dtype=context.dtype)
            return (context,)
        return hook

    blocks = [model.model.encoder.layer[layer].attention.output.dense for layer in range(layers)]
    handles = [block.register_forward_pre_hook(hook_for(layer)) for layer, block in enumerate(blocks)]
    out = np.zeros((layers, heads, len(sentences)))
    try:
        for k, s in enumerate(sentences):
            e = model.sentence_embeddings([s] * (n + 1))             # (n + 1, d_model), unit length
            with torch.no_grad():
                changes = 1 - (e[:n] * e[n]).sum(-1)
            out[:, :, k] = changes.numpy().reshape(layers, heads)
    finally:
        for handle in handles:
            handle.remove()
    return out


def where_weight_goes(model: Any, sentences: Sequence[str]) -> dict[str, np.ndarray]:
    """Score every head on where its weight goes: for each real token i as a query ([CLS] and [SEP] left
    out), the weight its row puts on [CLS], on [SEP], on the punctuation (``.`` and ``,``) and on the
    previous token, averaged over the queries.

    Returns:
        ``{kind: (len(sentences), num_layers, num_heads)}`` for the kinds "[CLS]", "[SEP]", "punctuation",
        "previous token".
    """
    kinds = ["[CLS]", "[SEP]", "punctuation", "previous token"]
    shape = (len(sentences), model.num_layers, model.num_heads)
    weight = {kind: np.zeros(shape) for kind in kinds}
    for n, s in enumerate(sentences):
        r = model.run(s)
        T = len(r["tokens"])
        rows = np.arange(1, T - 1)                                       # the real tokens, as queries
        keys = {"[CLS]": [0], "[SEP]": [T - 1],
                "punctuation": [j for j, t in enumerate(r["tokens"]) if t in ".,"]}
        for layer, A in enumerate(r["attentions"]):
            A = A.numpy()[:, rows]                                       # (heads, T - 2, T)
            for kind, columns in keys.items():
                weight[kind][n, layer] = A[..., columns].sum(-1).mean(-1)
            weight["previous token"][n, layer] = A[:, np.arange(len(rows)), rows - 1].mean(-1)
    return weight


def position_zero_controls(model: Any, sentences: Sequence[str]) -> dict[str, np.ndarray]:
    """Lesson 12's test of [CLS] against position 0: for every head, the weight on position 0 averaged over
    the real tokens as queries other than the one at position 0, on each sentence as the model reads it, with
    [CLS] left out (a word then sits at position 0), and with [CLS] moved after [SEP]; in the last case also
    the weight on [CLS] at its new place. The model was trained with [CLS] at position 0 only: the two
    rearranged inputs are ones it never saw.

    Returns:
        ``{"intact": ..., "[CLS] removed": ..., "[CLS] at the end": ..., "[CLS] at the end, on [CLS]": ...}``,
        each ``(n, layers, heads)``.
    """
    import torch

    if not sentences:
        raise ValueError("sentences must hold at least one sentence, got none")
    names = ["intact", "[CLS] removed", "[CLS] at the end", "[CLS] at the end, on [CLS]"]
    out = {name: np.zeros((len(sentences), model.num_layers, model.num_heads)) for name in names}

    def weights(ids: list[int]) -> np.ndarray:                          # (layers, heads, T, T)
        with torch.no_grad():
            run = model.model(input_ids=torch.tensor([ids]), attention_mask=torch.ones(1, len(ids),
                              dtype=torch.long), output_attentions=True)
        return np.stack([a[0].numpy() for a in run.attentions])

    for n, s in enumerate(sentences):
        ids = model.tokenizer(s)["input_ids"]
        cls, words, sep = ids[0], ids[1:-1], ids[-1]
        k = len(words)
        out["intact"][n] = weights(ids)[:, :, 1:k + 1, 0].mean(-1)        # queries: the words
        out["[CLS] removed"][n] = weights(words + [sep])[:, :, 1:k, 0].mean(-1)   # the words after the first
        moved = weights(words + [sep, cls])[:, :, 1:k]
        out["[CLS] at the end"][n] = moved[..., 0].mean(-1)
        out["[CLS] at the end, on [CLS]"][n] = moved[..., -1].mean(-1)
    return out


def what_heads_add(model: Any, sentences: Sequence[str]) -> dict[str, np.ndarray]:
    """For every head and sentence, over the real tokens i (as queries): [CLS]'s share of the norms
    ``alpha_ij ||v_j W_O^h||`` (their sum over j is 1), and the mean length of the head's output
    ``o_i^h = sum_j alpha_ij v_j W_O^h``; and the mean length of the layer's input ``||x_i||``.

    Returns:
        ``{"cls_share": (n, layers, heads), "out_norm": (n, layers, heads), "x_norm": (n, layers)}``.
    """
    n, L, H = len(sentences), model.num_layers, model.num_heads
    out = {"cls_share": np.zeros((n, L, H)), "out_norm": np.zeros((n, L, H)), "x_norm": np.zeros((n, L))}
    for k, s in enumerate(sentences):
        r = model.run(s)
        rows = np.arange(1, len(r["tokens"]) - 1)
        for layer in range(L):
            x = r["hidden"][layer]                                       # (T, d_model): the layer's input
            vW = head_vectors(model, x, layer)                           # (heads, T, d_model): v_j W_O^h
            A = r["attentions"][layer].numpy()[:, rows]                  # (heads, T - 2, T)
            added = A * np.linalg.norm(vW, axis=-1)[:, None, :]          # alpha_ij ||v_j W_O^h||
            out["cls_share"][k, layer] = (added[..., 0] / added.sum(-1)).mean(-1)
            out["out_norm"][k, layer] = np.linalg.norm(A @ vW, axis=-1).mean(-1)
            out["x_norm"][k, layer] = np.linalg.norm(x.numpy()[rows], axis=-1).mean()
    return out


def attention_ratios(model: Any, sentences: Sequence[str]) -> tuple[list[list[float]], list[list[float]]]:
    """Per layer, over the real tokens of all ``sentences``: ``||a_i|| / ||x_i||`` (a_i the attention
    block's output, W_O and b_O applied; x_i the layer's input), and ``||c|| / ||a_i||`` for the part of a_i
    that is the same for every token, ``c = b_O + sum_h b_V^h W_O^h`` (each head's weights sum to 1, so its
    value bias passes whole).

    Returns:
        (ratio, constant_share): two lists of num_layers lists, one value per real token.
    """
    L = model.num_layers
    ratio: list[list[float]] = [[] for _ in range(L)]
    constant_share: list[list[float]] = [[] for _ in range(L)]
    for s in sentences:
        parts = layer_parts(model, s)
        for layer in range(L):
            x, a = parts["hidden"][layer][1:-1].numpy(), parts["attention"][layer][1:-1].numpy()
            block = model.model.encoder.layer[layer].attention
            b_V, b_O = block.self.value.bias.detach().numpy(), block.output.dense.bias.detach().numpy()
            W_O = block.output.dense.weight.detach().numpy().T                 # course layout: context @ W_O
            constant = b_V @ W_O + b_O                         # the heads' b_V^h W_O^h, summed, plus b_O
            ratio[layer] += list(np.linalg.norm(a, axis=1) / np.linalg.norm(x, axis=1))
            constant_share[layer] += list(np.linalg.norm(constant) / np.linalg.norm(a, axis=1))
    return ratio, constant_share


def rank_tests(cls_weight: Any, change: Any, parked: Any,
               layers: slice = slice(1, 5)) -> tuple[float, float, float]:
    """Two rank tests over the heads of ``layers`` (by default 1 to 4, where parking varies).

    Inputs, each (num_layers, num_heads): ``cls_weight``, each head's mean weight on [CLS]; ``change``, the
    change its removal makes; ``parked``, booleans. Returns (Spearman's rank correlation of weight and change,
    its p-value, the two-sided Mann-Whitney p-value of the parked heads' changes against the other heads').
    """
    from scipy.stats import mannwhitneyu, spearmanr

    w, c, k = (np.asarray(a)[layers] for a in (cls_weight, change, parked))
    if w.shape != c.shape or w.shape != k.shape or w.ndim != 2:
        raise ValueError("cls_weight, change and parked must be (num_layers, num_heads) arrays of one shape, "
                         f"got {np.shape(cls_weight)}, {np.shape(change)} and {np.shape(parked)}")
    k = k.astype(bool)
    if k.all() or not k.any():
        raise ValueError("parked must mark some heads of the chosen layers, and not all of them")
    rho = spearmanr(w.ravel(), c.ravel())
    return float(rho.statistic), float(rho.pvalue), float(mannwhitneyu(c[k], c[~k]).pvalue)


def parking_controls(model: Any, sentences: Sequence[str], seed: int = 0) -> dict[str, np.ndarray]:
    """Lesson 12's test of parking on sentences not used to find the parked heads: for every head, the
    weight on [CLS] averaged over the real tokens as queries (as :func:`where_weight_goes`), and two controls:
    the same on each sentence with its words in a random order (so [CLS] is the only thing kept in place),
    and the weight on one word of each sentence drawn at random (a real token, not [CLS] or [SEP]).
    Draws use ``np.random.default_rng(seed)``.

    Returns:
        ``{"on [CLS]": (n, layers, heads), "words shuffled": (n, layers, heads),
        "a random word": (n, layers, heads)}``.
    """
    if not sentences:
        raise ValueError("sentences must hold at least one sentence, got none")
    rng = np.random.default_rng(seed)
    shuffled = [" ".join(rng.permutation(s.split())) for s in sentences]
    out = {"on [CLS]": where_weight_goes(model, sentences)["[CLS]"],
           "words shuffled": where_weight_goes(model, shuffled)["[CLS]"],
           "a random word": np.zeros((len(sentences), model.num_layers, model.num_heads))}
    for n, s in enumerate(sentences):
        r = model.run(s)
        T = len(r["tokens"])
        j = int(rng.integers(1, T - 1))                                  # one real token, at random
        for layer, A in enumerate(r["attentions"]):
            out["a random word"][n, layer] = A.numpy()[:, 1:T - 1, j].mean(-1)
    return out
