"""A compiled training step that keeps a running accuracy with `.item()` (a fresh program, 2026-11-28):
the .item() breaks the graph and the running total is a Python float carried into the rest of the step.
Under inductor that float stays a constant of the resumed graph, so every step recompiles until the
limit. Keeping the total a tensor removes the break and the recompiles (tests/test_triage.py)."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


def train_step(model, opt, x, y, stats):
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    stats["acc"] += (logits.argmax(-1) == y).float().mean().item()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss.detach()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=12)
    args = ap.parse_args()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    step = torch.compile(train_step)
    x, y = torch.randn(256, 16), torch.randint(0, 4, (256,))
    stats = {"acc": 0.0}
    for i in range(args.steps):
        j = (i * 32) % 256
        loss = step(model, opt, x[j:j + 32], y[j:j + 32], stats)
    print(f"loss {loss.item():.3f} mean acc {float(stats['acc']) / args.steps:.3f}")


main()
