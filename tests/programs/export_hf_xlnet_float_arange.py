"""Export a tiny random-init XLNet encoder (transformers) for serving with the batch and the sequence length
dynamic. XLNet builds its relative positions with a float-step torch.arange, and its reshapes then guard the
length in ways export cannot prove. DYNAMIC=1 declares the length Dim.DYNAMIC with the same bounds and calls the
exported program at batch 2 and batch 1."""
import os

import torch
from torch.export import Dim
from transformers import XLNetConfig, XLNetModel

torch.manual_seed(0)


def main():
    cfg = XLNetConfig(vocab_size=300, d_model=32, n_layer=1, n_head=2, d_inner=64)
    model = XLNetModel(cfg).eval()
    ids = torch.randint(0, 300, (2, 12))
    mask = torch.ones(2, 12, dtype=torch.long)
    batch = Dim("batch", min=1, max=32)
    seq = Dim.DYNAMIC(min=2, max=256) if os.environ.get("DYNAMIC") else Dim("seq", min=2, max=256)
    ep = torch.export.export(model, (ids, mask), dynamic_shapes=({0: batch, 1: seq}, {0: batch, 1: seq}))
    print("export ok")
    for b, s in ((2, 20), (1, 12)):
        x = torch.randint(0, 300, (b, s))
        try:
            out = ep.module()(x, torch.ones(b, s, dtype=torch.long))[0]
            print(f"batch {b} seq {s}: max|diff| {(out - model(x, torch.ones(b, s, dtype=torch.long))[0]).abs().max():.2e}")
        except Exception as exc:   # the guard export kept, checked on the call
            print(f"batch {b} seq {s}: {type(exc).__name__}: {str(exc).splitlines()[0][:100]}")


if __name__ == "__main__":
    main()
