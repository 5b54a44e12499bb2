"""minify --source in recompile mode (issue 28 item 6): a training loop that neither fails nor breaks a
graph, but its compiled forward reads a curriculum level kept as a Python int on the module, so every
level change recompiles the forward (a guard on `self.level`). The source stage keeps that one
recompile and cuts the rest."""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

D_IN, D_HIDDEN, N_CLASSES = 16, 32, 4


class CurriculumNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(D_IN, D_HIDDEN)
        self.blocks = nn.ModuleList(nn.Linear(D_HIDDEN, D_HIDDEN) for _ in range(2))
        self.head = nn.Linear(D_HIDDEN, N_CLASSES)
        self.level = 0          # curriculum level, raised by the training loop

    def forward(self, x):
        h = F.gelu(self.embed(x))
        for blk in self.blocks:
            h = h + F.gelu(blk(h))
        noise = 0.1 * (self.level + 1)
        return self.head(h * (1.0 - noise / 4))


def make_batch(step, batch=32):
    g = torch.Generator().manual_seed(step)
    x = torch.randn(batch, D_IN, generator=g)
    y = (x[:, :N_CLASSES].argmax(dim=1) + step) % N_CLASSES
    return x, y


def evaluate(model, n=4):
    correct = total = 0
    with torch.no_grad():
        for s in range(1000, 1000 + n):
            x, y = make_batch(s)
            correct += (model(x).argmax(dim=1) == y).sum().item()
            total += y.numel()
    return correct / total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--lr", type=float, default=0.05)
    args = ap.parse_args()
    torch.manual_seed(0)
    model = CurriculumNet()
    compiled = torch.compile(model, backend="eager")
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    for step in range(args.steps):
        model.level = step // 4            # a new level every 4 steps: a new graph
        x, y = make_batch(step)
        loss = F.cross_entropy(compiled(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 4 == 3:
            print(f"step {step} level {model.level} loss {loss.item():.3f} lr {args.lr * math.cos(step / 50):.4f}")
    print(f"eval accuracy {evaluate(model):.3f}")


if __name__ == "__main__":
    main()
