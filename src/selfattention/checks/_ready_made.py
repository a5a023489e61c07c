"""The gate against ready-made attention, shared by the exercises that ask the learner to write attention
(lessons 03, 07 and 09): which layers and functions count as ready-made, a static look at an answer's code for
them (:func:`ready_made`, under any name the learner kept them), and a block that makes them raise while the
answer runs (:func:`ready_made_blocked`)."""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ._engine import code_names, is_learners, learners_functions, stand_ins, used_objects

__all__ = ["ReadyMadeCalled", "ready_made", "ready_made_blocked"]

#: Names of ready-made attentions and masks: any function or layer the learner did not write whose name says
#: attention (``scaled_dot_product_attention``, ``MultiheadAttention``, ``sa.MultiHeadAttention``), or a mask.
_READY_MADE = re.compile(r"attention|^padding_mask$|^causal_mask$", re.I)

#: Where PyTorch keeps its ready-made attentions: module name -> attribute names. The layers are blocked only
#: where an exercise asks for the layer (``layers=True``).
_TORCH_FUNCTIONS = {
    "torch": ("scaled_dot_product_attention",),
    "torch.nn.functional": ("scaled_dot_product_attention", "multi_head_attention_forward"),
}
_TORCH_LAYERS = {
    "torch.nn": ("MultiheadAttention",),
    "torch.nn.modules.activation": ("MultiheadAttention",),
}
#: The course's own, in every module of selfattention that holds them (the checks excepted).
_SA_FUNCTIONS = ("basic_self_attention", "scaled_dot_product_attention", "padding_mask", "causal_mask")
_SA_LAYERS = ("MultiHeadAttention", "SelfAttention", "attention_weights")


def _label(name: str, obj: Any = None) -> str:
    """How the learner knows ``name``: ``sa.name`` for the course's, ``torch's name`` for a library's."""
    module = getattr(obj, "__module__", None) or ""
    if module.startswith("selfattention") or (obj is None and name in _SA_FUNCTIONS + _SA_LAYERS):
        return f"sa.{name}"
    return f"{module.split('.')[0] or 'a library'}'s {name}"


def ready_made(fn: Callable[..., Any]) -> str | None:
    """The ready-made attention or mask that ``fn``, or a function of the learner's that it reaches, uses, named
    as the learner would know it (``sa.scaled_dot_product_attention``, ``torch's scaled_dot_product_attention``,
    ``torch's MultiheadAttention (as mha)``), or None. Seen by name in the code (``sa.f(...)``, ``F.f(...)``
    after ``import torch.nn.functional as F``, ``from ... import f as g`` inside the function) and by object,
    also when kept under another name first (``f = sa.scaled_dot_product_attention`` in another cell, a
    ``functools.partial`` of it, an ``nn.MultiheadAttention`` instance). The learner's own functions and classes
    are not shortcuts, whatever their names, nor is a module (``selfattention.softmax`` is allowed)."""
    home = getattr(fn, "__module__", None)
    for f in learners_functions(fn):
        code = getattr(f, "__code__", None)
        if code is None:
            continue
        if any(name.startswith("selfattention.checks") for name in code_names(code)):
            continue  # it imports from the checks: the engine refuses a call of theirs, naming it
        scope = getattr(f, "__globals__", {})
        torch_used = "torch" in code_names(code) or any(
            (getattr(g, "__name__", "") or "").startswith("torch") for g in used_objects(f).values())
        for name in sorted(code_names(code) - {f.__name__}, key=lambda n: ("mask" in n, n)):   # attention first
            bound = scope.get(name)
            if _READY_MADE.search(name) and not is_learners(bound, home) and not isinstance(bound, type(np)):
                sa_only = name in ("basic_self_attention", "MultiHeadAttention", "SelfAttention")
                return f"torch's {name}" if torch_used and not sa_only else _label(name)
        for alias, g in sorted(used_objects(f).items(), key=lambda kv: ("mask" in kv[0], kv[0])):
            g = getattr(g, "func", g)                        # a functools.partial: the function inside
            name = getattr(g, "__name__", None)
            if name is None and callable(g):                 # an instance kept from an earlier cell: its class
                g = type(g)
                name = g.__name__
            if (callable(g) and not is_learners(g, home) and getattr(g, "__module__", None) != home
                    and isinstance(name, str) and _READY_MADE.search(name)):
                shown = _label(name, g)
                return shown if alias == name else f"{shown} (as {alias})"
    return None


class ReadyMadeCalled(Exception):
    """Raised by the stand-ins of ready-made attentions and masks while a learner's answer runs."""


def ready_made_blocked(*, layers: bool = False) -> contextlib.AbstractContextManager[None]:
    """While the block runs, the ready-made attention functions and masks of selfattention (in every module of
    the package that holds them) and of PyTorch raise ReadyMadeCalled, however the learner's code reached them
    (``getattr(importlib.import_module(...), "scaled_dot_" + "product_attention")`` included); with ``layers``
    also the layers (``nn.MultiheadAttention``, ``sa.MultiHeadAttention``, ``sa.SelfAttention``,
    ``attention_weights``). :func:`~selfattention.checks._engine.stand_ins` does the replacing and puts
    everything back. Objects bound before the block under other names are not replaced: :func:`ready_made`
    finds those."""
    torch_places = _TORCH_FUNCTIONS | (_TORCH_LAYERS if layers else {})
    sa_names = _SA_FUNCTIONS + (_SA_LAYERS if layers else ())
    places = [(sys.modules.get(name), attrs) for name, attrs in torch_places.items()]
    places += [(module, sa_names) for name, module in list(sys.modules.items())
               if (name == "selfattention" or name.startswith("selfattention."))
               and not name.startswith("selfattention.checks")]
    return stand_ins(places, ReadyMadeCalled)
