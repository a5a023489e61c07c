"""Lesson 12's plumbing: what each attention block of the pretrained model adds, recorded with forward hooks.

Kept out of the lesson's reading path; the lesson states what these functions return and checks it (section 4
rebuilds a layer and compares with :func:`layer_parts`).
"""

from __future__ import annotations

from typing import Any

import numpy as np


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


def remove_head(model: Any, layer: int, head: int) -> Any:
    """Zero-ablation of one head: set its d_k features of the concatenated heads to 0 just before W_O
    (``attention.output.dense`` of ``layer``), with a forward pre-hook. Returns the hook's handle:
    ``handle.remove()`` puts the head back."""
    d_k = model.model.config.hidden_size // model.num_heads

    def hook(module: Any, args: tuple) -> tuple:
        context = args[0].clone()                                # (B, T, d_model): the heads, concatenated
        context[..., head * d_k:(head + 1) * d_k] = 0.0
        return (context,)

    return model.model.encoder.layer[layer].attention.output.dense.register_forward_pre_hook(hook)
