"""Train lesson 13's small character-level decoder and write its weights.

    .venv/bin/python tools/train_decoder.py            # writes src/selfattention/decoder.safetensors
    .venv/bin/python tools/train_decoder.py --out X    # writes X instead (tests/test_llm.py compares)

The text is "The Zen of Python" (PEP 20, by Tim Peters), which ships with every Python as the standard
library's ``this`` module (Python Software Foundation License): 856 characters, so a small model learns it
in seconds on one CPU core. Everything is seeded and runs on one thread, so the same torch build on the same
kind of CPU writes the same weights.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import io
from pathlib import Path

import torch
from safetensors.torch import save_file

from selfattention.llm import DECODER_WEIGHTS, TinyDecoder

SIZES = {"d_model": 64, "num_heads": 4, "num_layers": 2}
STEPS, LR, SEED = 300, 3e-3, 0


def zen_of_python() -> str:
    """The text of PEP 20, from the standard library (``import this`` prints it; we keep it quiet)."""
    with contextlib.redirect_stdout(io.StringIO()):
        import this
    return codecs.decode(this.s, "rot13")


def train(steps: int = STEPS) -> tuple[TinyDecoder, list[float]]:
    """Train a TinyDecoder on the Zen of Python by next-character prediction; return it and the losses."""
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    text = zen_of_python()
    vocab = "".join(sorted(set(text)))
    model = TinyDecoder(vocab, **SIZES)
    data = torch.tensor([vocab.index(c) for c in text])
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.0)
    # The whole text is one training sequence, at its true positions: the model learns to continue it
    # from any point, for as long as the text is (generation in the lesson stays within it).
    x, y = data[None, :-1], data[None, 1:]  # (1, T), (1, T)
    losses = []
    for _ in range(steps):
        logits = model(x)  # (1, T, vocab)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, len(vocab)), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return model.eval(), losses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DECODER_WEIGHTS)
    args = parser.parse_args()
    model, losses = train()
    meta = {"vocab": model.vocab, **{k: str(v) for k, v in SIZES.items()}, "steps": str(STEPS)}
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    save_file(state, str(args.out), metadata=meta)
    # safetensors writes the file for its owner only (0600); a grading kernel runs as another user.
    args.out.chmod(0o644)
    print(f"{sum(v.numel() for v in state.values()):,} parameters; loss {losses[0]:.3f} -> {losses[-1]:.3f}; "
          f"wrote {args.out} ({args.out.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
