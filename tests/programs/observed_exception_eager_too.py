"""Nightly eval of a small scorer whose fused attention helper is forward-only: it refuses inputs that require grad.
The eval loop calls model.eval() but leaves autograd on, so the helper raises, compiled (Dynamo meets the exception,
graph break GB0088) and eagerly alike. FIXED=1 evaluates under torch.no_grad()."""
import contextlib
import os

import torch
import torch.nn as nn


def fused_attend(q, k, v):
    if q.requires_grad or k.requires_grad or v.requires_grad:
        raise NotImplementedError("fused_attend has no backward on CPU: call it with requires_grad=False inputs")
    return torch.softmax(q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5, dim=-1) @ v


class Scorer(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, 1)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        return self.out(fused_attend(q, k, v).mean(dim=1)).squeeze(-1)


def main():
    torch.manual_seed(0)
    model = torch.compile(Scorer().eval())
    ctx = torch.no_grad() if os.environ.get("FIXED") else contextlib.nullcontext()
    with ctx:
        scores = model(torch.randn(4, 8, 16))
    print(f"mean score {scores.mean().item():+.4f}")


if __name__ == "__main__":
    main()
