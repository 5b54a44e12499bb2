"""Domain-adversarial training (DANN) for a vibration-fault classifier.

Source domain: labelled windows from test-rig bearings. Target domain: unlabelled windows from
field units (different gain / noise floor). The encoder is shared; a domain discriminator sits
behind a gradient-reversal layer so the encoder learns domain-invariant features.

We launch this script many times a day (nightly sweep, one process per config), so the compiled
model's start-up time matters.
"""
import argparse
import logging
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("dann")


class GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        ctx.weight = weight
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out.neg() * ctx.weight, None


def grad_reverse(x, weight=1.0):
    return GradReverse.apply(x, weight)


class ConvStem(nn.Module):
    def __init__(self, in_ch, dim):
        super().__init__()
        self.conv1 = nn.Conv1d(in_ch, dim // 2, kernel_size=7, stride=2, padding=3)
        self.conv2 = nn.Conv1d(dim // 2, dim, kernel_size=5, stride=2, padding=2)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):  # x: (B, C, T)
        x = F.gelu(self.conv1(x))
        x = F.gelu(self.conv2(x))
        return self.norm(x.transpose(1, 2))  # (B, T/4, dim)


class Block(nn.Module):
    def __init__(self, dim, heads, mlp_ratio=4, dropout=0.1):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, dropout=dropout, batch_first=True)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim * mlp_ratio), nn.GELU(), nn.Dropout(dropout),
                                 nn.Linear(dim * mlp_ratio, dim))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class DANN(nn.Module):
    def __init__(self, in_ch=3, dim=64, depth=2, heads=4, n_classes=6, grl_weight=0.3):
        super().__init__()
        self.stem = ConvStem(in_ch, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)
        self.cls_head = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, n_classes))
        self.dom_head = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Dropout(0.1), nn.Linear(dim, 1))
        self.grl_weight = grl_weight

    def forward(self, x):
        h = self.stem(x)
        for blk in self.blocks:
            h = blk(h)
        feat = self.norm(h).mean(dim=1)
        class_logits = self.cls_head(feat)
        domain_logits = self.dom_head(grad_reverse(feat, self.grl_weight)).squeeze(-1)
        return class_logits, domain_logits


def make_domain(n, n_classes, T, gain, noise, gen):
    t = torch.linspace(0, 1, T)
    labels = torch.randint(0, n_classes, (n,), generator=gen)
    freqs = 20.0 + 15.0 * labels.float()
    phase = torch.rand(n, 1, generator=gen) * 2 * math.pi
    base = torch.sin(2 * math.pi * freqs[:, None] * t[None, :] + phase)
    x = torch.stack([base, 0.5 * base.roll(3, dims=1), base ** 2], dim=1) * gain
    x = x + noise * torch.randn(x.shape, generator=gen)
    return x, labels


def batches(x, y, bs, gen):
    while True:
        perm = torch.randperm(x.shape[0], generator=gen)
        for i in range(0, x.shape[0] - bs + 1, bs):
            idx = perm[i:i + bs]
            yield x[idx], y[idx]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--window", type=int, default=256)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    log.info("torch %s, cache dir %s", torch.__version__, os.environ.get("TORCHINDUCTOR_CACHE_DIR", "(default)"))

    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    xs, ys = make_domain(256, 6, args.window, gain=1.0, noise=0.2, gen=gen)
    xt, _ = make_domain(256, 6, args.window, gain=1.7, noise=0.5, gen=gen)
    src = batches(xs, ys, args.batch_size, gen)
    tgt = batches(xt, torch.zeros(xt.shape[0]), args.batch_size, gen)

    model = DANN()
    log.info("model params: %.2fM", sum(p.numel() for p in model.parameters()) / 1e6)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    fwd = model if args.no_compile else torch.compile(model)

    t_start = time.perf_counter()
    step_times = []
    for step in range(args.steps):
        t0 = time.perf_counter()
        (x_s, y_s), (x_t, _) = next(src), next(tgt)
        x = torch.cat([x_s, x_t])
        dom = torch.cat([torch.zeros(len(x_s)), torch.ones(len(x_t))])
        class_logits, domain_logits = fwd(x)
        cls_loss = F.cross_entropy(class_logits[: len(x_s)], y_s)
        dom_loss = F.binary_cross_entropy_with_logits(domain_logits, dom)
        loss = cls_loss + dom_loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        dt = time.perf_counter() - t0
        step_times.append(dt)
        if step == 0:
            log.info("step 0 done in %.1fs (includes compile)", dt)
        elif step % 4 == 0 or step == args.steps - 1:
            log.info("step %d cls_loss %.4f dom_loss %.4f (%.3fs/step)", step, cls_loss.item(), dom_loss.item(), dt)
    steady = sorted(step_times[2:])[len(step_times[2:]) // 2]
    log.info("time to first step %.1fs, median steady step %.3fs, total %.1fs",
             step_times[0], steady, time.perf_counter() - t_start)


if __name__ == "__main__":
    main()
