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


def __getattr__(name: str):
    """Import the torch modules only when first used: numpy-only lessons start fast."""
    if name in ("SelfAttention", "MultiHeadAttention"):
        from . import layers

        return getattr(layers, name)
    raise AttributeError(f"module 'selfattention' has no attribute {name!r}")
