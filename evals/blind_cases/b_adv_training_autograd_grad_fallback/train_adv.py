"""PGD adversarial training of a residual MLP fraud classifier on synthetic tabular features."""
import argparse
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("adv")


class ResMLPBlock(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)
        self.scale = nn.Parameter(torch.full((dim,), 0.1))

    def forward(self, x):
        return x + self.scale * self.fc2(F.gelu(self.fc1(self.norm(x))))


class TabularNet(nn.Module):
    """Residual MLP over standardised transaction features."""

    def __init__(self, features=64, dim=128, depth=4, classes=2):
        super().__init__()
        self.inp = nn.Linear(features, dim)
        self.blocks = nn.Sequential(*[ResMLPBlock(dim, 2 * dim) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        return self.head(self.norm(self.blocks(self.inp(x))))


def adversarial_loss(model, x, y, eps: float, alpha: float, steps: int):
    """PGD-style inner maximisation followed by the training loss on the adversarial batch."""
    delta = torch.zeros_like(x).uniform_(-eps, eps)
    for _ in range(steps):
        delta.requires_grad_(True)
        loss = F.cross_entropy(model(x + delta), y)
        (g,) = torch.autograd.grad(loss, delta)
        delta = (delta.detach() + alpha * g.sign()).clamp(-eps, eps)
    logits = model(x + delta.detach())
    return F.cross_entropy(logits, y), logits


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--eps", type=float, default=0.1)
    p.add_argument("--pgd-steps", type=int, default=3)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--log-every", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)
    model = TabularNet().train()
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True)

    loss_fn = adversarial_loss
    if args.compile:
        loss_fn = torch.compile(adversarial_loss)

    data = torch.randn(args.steps, args.batch, 64)
    labels = (data[..., :8].sum(-1) > 0).long()
    alpha = 1.25 * args.eps / max(args.pgd_steps, 1)

    times, correct, seen = [], 0, 0
    for step in range(args.steps):
        t0 = time.perf_counter()
        loss, logits = loss_fn(model, data[step], labels[step], args.eps, alpha, args.pgd_steps)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
        correct += (logits.argmax(-1) == labels[step]).sum().item()
        seen += args.batch
        if (step + 1) % args.log_every == 0:
            log.info("step %d loss %.4f adv-acc %.3f step_time %.1f ms", step + 1, loss.item(),
                     correct / seen, 1000 * times[-1])

    steady = sorted(times[5:])[len(times[5:]) // 2] if len(times) > 5 else times[-1]
    log.info("first step %.2fs, median steady step %.1f ms (compile=%s)", times[0], 1000 * steady, args.compile)


if __name__ == "__main__":
    main()
