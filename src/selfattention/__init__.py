"""selfattention: the small helper package of the course "Self-Attention in Transformers"."""
from .core import (
    basic_self_attention,
    blockwise_attention,
    causal_mask,
    padding_mask,
    scaled_dot_product_attention,
    softmax,
)
from .positional import sinusoidal_positional_encoding

__all__ = [
    "softmax",
    "basic_self_attention",
    "scaled_dot_product_attention",
    "causal_mask",
    "padding_mask",
    "blockwise_attention",
    "sinusoidal_positional_encoding",
    "SelfAttention",
    "MultiHeadAttention",
]


_SUBMODULES = ("checks", "colab", "core", "data", "headstudy", "layers", "llm", "plots", "positional",
               "tasks", "widgets")


def __getattr__(name: str):
    """Import torch and the other submodules only when first used: numpy-only lessons start fast.

    ``sa.SelfAttention`` and ``sa.MultiHeadAttention`` come from :mod:`.layers`;
    ``sa.data``, ``sa.plots``, ``sa.checks`` ... are the submodules themselves.
    """
    import importlib

    if name in ("SelfAttention", "MultiHeadAttention"):
        return getattr(importlib.import_module(".layers", __name__), name)
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'selfattention' has no attribute {name!r}")
