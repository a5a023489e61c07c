"""Train the course's two small character-level decoders and write their weights.

    .venv/bin/python tools/train_decoder.py              # writes both files into src/selfattention/
    .venv/bin/python tools/train_decoder.py --out DIR    # writes them into DIR (tests/test_llm.py compares)
    .venv/bin/python tools/train_decoder.py --only llama --seeds 0   # one of them, one seed

The text is "The Zen of Python" (PEP 20, by Tim Peters), which ships with every Python as the standard
library's ``this`` module (Python Software Foundation License): 856 characters, so a small model learns it
in seconds on one CPU core. Both decoders learn it by next-character prediction with AdamW, seeded, on one
thread, so the same torch build on the same kind of CPU writes the same weights.

* ``decoder.safetensors``: :class:`~selfattention.llm.TinyDecoder` (LayerNorm, sinusoidal positions, 4 heads
  with their own keys and values), trained on the whole text as one sequence at its true positions.
* ``llama_decoder.safetensors``: :class:`~selfattention.llm.LlamaDecoder` (RMSNorm, RoPE, 4 query heads
  sharing 2 key/value heads, SwiGLU), trained on random 256-character windows of the text (read as a loop),
  as language models are trained on windows of a fixed context length; three seeds (0, 1, 2), stored in
  float16 (2 bytes per weight, as large models are shipped). About 12 s of one core per seed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
from safetensors.torch import save_file

from selfattention.llm import DECODER_WEIGHTS, LLAMA_WEIGHTS, LlamaDecoder, TinyDecoder, zen_of_python

SIZES = {"d_model": 64, "num_heads": 4, "num_layers": 2}
STEPS, LR, SEED = 300, 3e-3, 0

LLAMA_SIZES = {"d_model": 64, "num_heads": 4, "num_kv_heads": 2, "num_layers": 2, "d_ff": 176,
               "rope_base": 10000.0}
LLAMA_CONTEXT, LLAMA_BATCH, LLAMA_STEPS, LLAMA_SEEDS = 256, 4, 300, (0, 1, 2)


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


def train_llama(seed: int, steps: int = LLAMA_STEPS) -> tuple[LlamaDecoder, list[float]]:
    """Train a LlamaDecoder on random windows of the text; return it and the loss of every step.

    Every step draws ``LLAMA_BATCH`` windows of ``LLAMA_CONTEXT + 1`` characters at random starts (the text
    read as a loop) and predicts characters 1..256 of each from the ones before, all positions at once under
    the causal mask.
    """
    torch.manual_seed(seed)
    torch.set_num_threads(1)
    text = zen_of_python()
    vocab = "".join(sorted(set(text)))
    model = LlamaDecoder(vocab, **LLAMA_SIZES)
    data = torch.tensor([vocab.index(c) for c in text])
    looped = torch.cat([data, data])
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.0)
    draws = torch.Generator().manual_seed(seed)
    losses = []
    for _ in range(steps):
        starts = torch.randint(0, len(data), (LLAMA_BATCH,), generator=draws)
        windows = looped[starts[:, None] + torch.arange(LLAMA_CONTEXT + 1)]  # (batch, 257)
        logits = model(windows[:, :-1])  # (batch, 256, vocab): every position at once
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, len(vocab)), windows[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return model.eval(), losses


def _save(state: dict[str, torch.Tensor], path: Path, meta: dict[str, str]) -> None:
    save_file(state, str(path), metadata=meta)
    # safetensors writes the file for its owner only (0600); a grading kernel runs as another user.
    path.chmod(0o644)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DECODER_WEIGHTS.parent, help="folder to write into")
    parser.add_argument("--only", choices=["tiny", "llama"], help="train one of the two")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(LLAMA_SEEDS), help="the Llama's seeds")
    args = parser.parse_args()
    if args.only != "llama":
        model, losses = train()
        meta = {"vocab": model.vocab, **{k: str(v) for k, v in SIZES.items()}, "steps": str(STEPS)}
        state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
        out = args.out / DECODER_WEIGHTS.name
        _save(state, out, meta)
        print(f"{sum(v.numel() for v in state.values()):,} parameters; loss {losses[0]:.3f} -> "
              f"{losses[-1]:.3f}; wrote {out} ({out.stat().st_size:,} bytes)")
    if args.only != "tiny":
        state, record = {}, {"context": LLAMA_CONTEXT, "batch": LLAMA_BATCH, "steps": LLAMA_STEPS, "lr": LR,
                             "seeds": list(args.seeds), "losses": {}}
        for seed in args.seeds:
            model, losses = train_llama(seed)
            record["losses"][str(seed)] = [round(x, 4) for x in losses]
            state |= {f"seed{seed}.{k}": v.detach().to(torch.float16).contiguous()
                      for k, v in model.state_dict().items()}
        meta = {"vocab": model.vocab, "sizes": json.dumps(LLAMA_SIZES), "record": json.dumps(record)}
        out = args.out / LLAMA_WEIGHTS.name
        _save(state, out, meta)
        print(f"{sum(v.numel() for v in model.state_dict().values()):,} parameters per seed, seeds "
              f"{args.seeds}; wrote {out} ({out.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
