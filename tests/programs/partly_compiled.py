"""A scorer whose training step is compiled (its forward runs compiled) while its evaluation goes through
`scorer.predict` on the wrapper, and its loss function's torch.compile result is thrown away: compiled
frames ran, so nothing says "never ran", yet evaluation and the loss run uncompiled."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class Scorer(nn.Module):
    def __init__(self, d=32, classes=4):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d, 64), nn.GELU(), nn.Linear(64, classes))

    def forward(self, x):
        return self.body(x)

    @torch.no_grad()
    def predict(self, x, batch=16):
        return torch.cat([self(x[i:i + batch]).argmax(-1) for i in range(0, len(x), batch)])


def smoothed_loss(logits, y):
    return F.cross_entropy(logits, y, label_smoothing=0.1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=3)
    args = ap.parse_args()
    torch.manual_seed(0)
    model = Scorer()
    scorer = torch.compile(model)
    torch.compile(smoothed_loss)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(64, 32), torch.randint(0, 4, (64,))
    for step in range(args.steps):
        loss = smoothed_loss(scorer(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.4f}")
    acc = (scorer.predict(x) == y).float().mean().item()
    print(f"train accuracy {acc:.3f}")


if __name__ == "__main__":
    main()
