import argparse
import math
import torch
import torch.nn as nn
import torch.nn.functional as F


class ReturnPredictor(nn.Module):
    def __init__(self, n_ret=32, n_level=8, d=96, n_layers=2):
        super().__init__()
        self.inp = nn.Linear(n_ret, d)
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d), nn.GELU())
            for _ in range(n_layers)
        )
        self.alpha = nn.Linear(d, 1)
        self.level_head = nn.Linear(n_level, 1)

    def forward(self, rets, levels):
        h = self.inp(rets)
        for blk in self.blocks:
            h = blk(h)
        a = self.alpha(h)
        with torch.autocast("cpu", enabled=False):
            b = self.level_head(levels.float())
        return a.float() + b


def ic_loss(pred, target):
    p = pred.squeeze(-1) - pred.mean()
    t = target - target.mean()
    return -(p * t).sum() / (p.norm() * t.norm() + 1e-8)


def make_batch(gen, n=512):
    rets = torch.randn(n, 32, generator=gen) * 0.02
    levels = 1000.0 + 5.0 * torch.randn(n, 8, generator=gen)
    target = rets[:, -5:].sum(1) + 0.004 * (levels[:, 0] - levels[:, 1]) / 5.0
    target = target + 0.01 * torch.randn(n, generator=gen)
    return rets, levels, target


def grads_for(model, fwd, batch):
    model.zero_grad(set_to_none=True)
    rets, levels, target = batch
    with torch.autocast("cpu", dtype=torch.bfloat16):
        pred = fwd(rets, levels)
    ic_loss(pred, target).backward()
    return {n: p.grad.detach().clone() for n, p in model.named_parameters()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=40)
    args = ap.parse_args()

    torch.manual_seed(0)
    model = ReturnPredictor()
    compiled = torch.compile(model)

    gen = torch.Generator().manual_seed(1)
    check_batch = make_batch(gen)
    g_eager = grads_for(model, model, check_batch)
    g_comp = grads_for(model, compiled, check_batch)
    print("== eager vs compiled gradient check (first batch) ==")
    bad = []
    for name in g_eager:
        ge, gc = g_eager[name], g_comp[name]
        rel = ((ge - gc).norm() / (ge.norm() + 1e-12)).item()
        cos = F.cosine_similarity(ge.flatten(), gc.flatten(), dim=0).item()
        flag = "OK" if rel < 1e-2 else "MISMATCH"
        if flag != "OK":
            bad.append(name)
        print(f"  {name:28s} rel_err={rel:.2e} cos={cos:.4f} {flag}")

    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.0)
    for step in range(args.steps):
        rets, levels, target = make_batch(gen)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            pred = compiled(rets, levels)
        loss = ic_loss(pred, target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 20 == 0 or step == args.steps - 1:
            print(f"step {step:3d} ic={-loss.item():.4f}")

    if bad:
        raise SystemExit(f"gradient check failed for: {', '.join(bad)}")
    print("gradient check passed")


if __name__ == "__main__":
    main()
