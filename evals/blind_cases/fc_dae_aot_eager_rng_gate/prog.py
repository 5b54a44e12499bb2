"""Compile smoke gate for the transaction denoising autoencoder (DAE) pretraining step.

CI runs this on every PR. The runners have no C++ toolchain budget for Inductor, so the
gate traces the model with a lightweight backend (aot_eager by default) and checks that a
short seeded pretraining run gives the same losses as plain eager. aot_eager executes the
same ATen kernels as eager, so the two runs are expected to agree to float32 round-off.
"""
import argparse
import math
import sys
import time
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class DAEConfig:
    n_numeric: int = 48
    n_categorical: int = 6
    cat_cardinality: int = 32
    cat_dim: int = 8
    hidden: int = 256
    bottleneck: int = 64
    swap_prob: float = 0.15
    jitter_std: float = 0.0
    lr: float = 2e-3
    weight_decay: float = 1e-4
    batch_size: int = 256
    steps: int = 12
    seed: int = 1234


class SwapNoiseCorruptor(nn.Module):
    """Swap noise (values borrowed from other rows of the batch) plus optional gaussian jitter."""

    def __init__(self, swap_prob: float, jitter_std: float):
        super().__init__()
        self.swap_prob = swap_prob
        self.jitter_std = jitter_std

    def forward(self, x: torch.Tensor):
        B, D = x.shape
        swap_mask = torch.rand(B, D, device=x.device) < self.swap_prob
        donor_rows = torch.randint(0, B, (B, D), device=x.device)
        donors = torch.gather(x, 0, donor_rows)
        x_cor = torch.where(swap_mask, donors, x)
        noise = torch.randn_like(x_cor)
        if self.jitter_std > 0.0:
            x_cor = x_cor + self.jitter_std * noise
        return x_cor, swap_mask


class TransactionDAE(nn.Module):
    def __init__(self, cfg: DAEConfig):
        super().__init__()
        self.cfg = cfg
        self.cat_emb = nn.ModuleList(
            [nn.Embedding(cfg.cat_cardinality, cfg.cat_dim) for _ in range(cfg.n_categorical)]
        )
        d_in = cfg.n_numeric + cfg.n_categorical * cfg.cat_dim
        self.corrupt = SwapNoiseCorruptor(cfg.swap_prob, cfg.jitter_std)
        self.encoder = nn.Sequential(
            nn.Linear(d_in, cfg.hidden), nn.SiLU(),
            nn.Linear(cfg.hidden, cfg.hidden), nn.SiLU(),
            nn.Linear(cfg.hidden, cfg.bottleneck),
        )
        self.decoder = nn.Sequential(
            nn.Linear(cfg.bottleneck, cfg.hidden), nn.SiLU(),
            nn.Linear(cfg.hidden, d_in),
        )
        self.mask_head = nn.Linear(cfg.bottleneck, d_in)

    def embed(self, num: torch.Tensor, cat: torch.Tensor) -> torch.Tensor:
        parts = [num] + [emb(cat[:, i]) for i, emb in enumerate(self.cat_emb)]
        return torch.cat(parts, dim=1)

    def forward(self, num: torch.Tensor, cat: torch.Tensor):
        x = self.embed(num, cat)
        target = x.detach()
        x_cor, swap_mask = self.corrupt(x)
        z = self.encoder(x_cor)
        recon = self.decoder(z)
        mask_logits = self.mask_head(z)
        rec_loss = F.mse_loss(recon, target)
        mask_loss = F.binary_cross_entropy_with_logits(mask_logits, swap_mask.float())
        return rec_loss + 0.5 * mask_loss, rec_loss, mask_loss


def make_table(cfg: DAEConfig, n_rows: int = 4096):
    g = torch.Generator().manual_seed(7)
    num = torch.randn(n_rows, cfg.n_numeric, generator=g)
    num[:, :8] = torch.log1p(torch.rand(n_rows, 8, generator=g) * 1e3)
    cat = torch.randint(0, cfg.cat_cardinality, (n_rows, cfg.n_categorical), generator=g)
    mu, sd = num.mean(0, keepdim=True), num.std(0, keepdim=True)
    return (num - mu) / sd, cat


def pretrain(cfg: DAEConfig, num_all, cat_all, backend: str | None):
    torch.manual_seed(cfg.seed)
    model = TransactionDAE(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    step_fn = model if backend is None else torch.compile(model, backend=backend)
    losses = []
    model.train()
    for step in range(cfg.steps):
        idx = torch.randint(0, num_all.shape[0], (cfg.batch_size,))
        loss, rec, msk = step_fn(num_all[idx], cat_all[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append((loss.item(), rec.item(), msk.item()))
    return losses, model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="aot_eager")
    ap.add_argument("--rtol", type=float, default=1e-5)
    args = ap.parse_args()

    torch.set_num_threads(1)
    cfg = DAEConfig()
    num_all, cat_all = make_table(cfg)

    t0 = time.time()
    ref, ref_model = pretrain(cfg, num_all, cat_all, backend=None)
    t1 = time.time()
    got, got_model = pretrain(cfg, num_all, cat_all, backend=args.backend)
    t2 = time.time()
    print(f"torch {torch.__version__}  backend={args.backend}  eager {t1 - t0:.1f}s  compiled {t2 - t1:.1f}s")

    worst = 0.0
    print(f"{'step':>4} {'eager loss':>12} {'compiled loss':>14} {'rel diff':>10}")
    for i, ((le, _, _), (lc, _, _)) in enumerate(zip(ref, got)):
        rel = abs(le - lc) / max(abs(le), 1e-12)
        worst = max(worst, rel)
        print(f"{i:>4} {le:>12.6f} {lc:>14.6f} {rel:>10.2e}")

    w_diff = max(
        (p.detach() - q.detach()).abs().max().item()
        for p, q in zip(ref_model.parameters(), got_model.parameters())
    )
    print(f"max |param diff| after {cfg.steps} steps: {w_diff:.3e}")
    if worst > args.rtol or math.isnan(worst):
        print(f"COMPILE GATE FAILED: worst relative loss diff {worst:.2e} > rtol {args.rtol:.0e}")
        sys.exit(1)
    print("COMPILE GATE PASSED")


if __name__ == "__main__":
    main()
