"""Lesson 05's widget: step through a training run, the attention map of one sequence (with its colour
scale) and the held-out accuracy at each checkpoint, chosen by its training step. The figure is built once; a
move changes the map's data, the marker and the title; :func:`selfattention.widgets.show` draws it once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np

from ..plots.projections import legible
from . import show

__all__ = ["WIDGET_PX", "training_viewer"]

WIDGET_PX = 900  # a widget's figure shares its slide with the controls: drawn about this wide


def training_viewer(history: Sequence[tuple[int, float, Any]], labels: Sequence[str],
                    target: int) -> widgets.interactive:
    """A slider over the training steps of one run's checkpoints (it moves from one checkpoint to the next).

    Inputs: history: checkpoints ``(step, held-out accuracy, A)`` with A the (T, T) attention weights of one
    sequence (``selfattention.tasks.train`` with a snapshot); labels: its T tokens; target: the position of
    the item the last token (the query) should attend to. A snapshot may also be a tuple whose first entry
    is A
    (``selfattention.plots.training.checkpoint_on``'s).
    """
    if not history:
        raise ValueError("history is empty; expected checkpoints (step, accuracy, attention map)")
    maps = [np.asarray(c[2][0] if isinstance(c[2], tuple) else c[2], dtype=float) for c in history]
    T = len(labels)
    if any(m.shape != (T, T) for m in maps) or not 0 <= target < T:
        raise ValueError(f"each map must be ({T}, {T}) for {T} labels, and target in 0..{T - 1}; got "
                         f"{maps[0].shape} and {target}")
    steps = [c[0] for c in history]
    accuracy = [c[1] for c in history]
    fig, (ax_map, ax_acc) = plt.subplots(1, 2, figsize=(12, 4.8), layout="constrained", width_ratios=(1, 1.3))
    plt.close(fig)  # shown by widgets.show only, once per move
    image = ax_map.imshow(maps[0], cmap="Blues", vmin=0.0, vmax=1.0)
    fig.colorbar(image, ax=ax_map, label="weight", shrink=0.8)
    ax_map.set(xticks=range(T), yticks=range(T), yticklabels=labels, xlabel="key", ylabel="query")
    ax_map.set_xticklabels(labels, rotation=45, ha="right")
    ax_acc.plot(steps, accuracy, color="tab:blue", lw=2)
    marker, = ax_acc.plot([steps[0]], [accuracy[0]], "o", color="tab:red", ms=12)
    ax_acc.set(xlabel="training step", ylabel="held-out accuracy", ylim=(-0.02, 1.05))
    title = ax_map.set_title(" ")
    legible(fig, shown_px=WIDGET_PX)

    def draw(step: int = steps[0]) -> None:
        checkpoint = max(i for i, s in enumerate(steps) if s <= step) if step >= steps[0] else 0
        step, acc, A = steps[checkpoint], accuracy[checkpoint], maps[checkpoint]
        image.set_data(A)
        marker.set_data([step], [acc])
        title.set_text(f"step {step}")
        show(fig)
        print(f"step {step:3d}: held-out accuracy {acc:.3f}; the question token gives {A[-1, target]:.2f} "
              f"of its attention to the right item")

    gaps = [b - a for a, b in zip(steps, steps[1:], strict=False)]
    slider = widgets.IntSlider(value=steps[0], min=steps[0], max=steps[-1], step=max(1, min(gaps, default=1)),
                               description="step")
    return widgets.interactive(draw, step=slider)
