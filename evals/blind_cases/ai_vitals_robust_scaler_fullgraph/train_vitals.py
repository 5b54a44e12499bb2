"""Train a small transformer that predicts clinical deterioration from 48 h of vitals.

    python train_vitals.py                          # eager
    python train_vitals.py --compile                # torch.compile
    python train_vitals.py --compile --fullgraph    # what the export pipeline needs
"""
import argparse
import logging
import math
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from preprocessing import robust_scale

log = logging.getLogger("vitals")
CHANNELS = ["hr", "sbp", "dbp", "map", "resp", "spo2", "temp", "gcs", "fio2", "lactate", "wbc", "creat"]


class DeteriorationModel(nn.Module):
    def __init__(self, n_channels=len(CHANNELS), seq_len=48, d_model=64, n_heads=4, n_layers=2):
        super().__init__()
        self.input_proj = nn.Linear(2 * n_channels, d_model)
        self.pos = nn.Parameter(torch.randn(1, seq_len, d_model) * 0.02)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, 4 * d_model, dropout=0.1,
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.head = nn.Sequential(nn.LayerNorm(d_model), nn.Linear(d_model, 1))

    def forward(self, vitals):
        z, observed = robust_scale(vitals)
        h = self.input_proj(torch.cat([z, observed], dim=-1)) + self.pos
        h = self.encoder(h)
        return self.head(h.mean(dim=1)).squeeze(-1)


def synth_cohort(n, seq_len, seed):
    rng = np.random.default_rng(seed)
    C = len(CHANNELS)
    base = rng.normal(0, 1, size=(n, 1, C)) * np.linspace(5, 20, C) + np.linspace(20, 120, C)
    label = rng.random(n) < 0.2
    drift = np.where(label[:, None, None], rng.normal(0.4, 0.2, size=(n, 1, C)), 0.0)
    t = np.linspace(0, 1, seq_len)[None, :, None]
    x = base * (1 + drift * t) + rng.normal(0, 2, size=(n, seq_len, C))
    x[rng.random(x.shape) < 0.35] = np.nan          # irregular sampling
    return torch.from_numpy(x.astype(np.float32)), torch.from_numpy(label.astype(np.float32))


def auroc(scores, labels):
    order = torch.argsort(scores)
    ranks = torch.empty_like(scores)
    ranks[order] = torch.arange(1, len(scores) + 1, dtype=scores.dtype)
    pos = labels.bool()
    n_pos, n_neg = pos.sum().item(), (~pos).sum().item()
    return ((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)).item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--fullgraph", action="store_true")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--n-train", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)

    x_tr, y_tr = synth_cohort(args.n_train, 48, args.seed)
    x_va, y_va = synth_cohort(512, 48, args.seed + 1)
    model = DeteriorationModel()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    step_model = torch.compile(model, fullgraph=args.fullgraph) if args.compile else model
    log.info("torch %s compile=%s fullgraph=%s", torch.__version__, args.compile, args.fullgraph)
    pos_weight = torch.tensor((1 - y_tr.mean().item()) / y_tr.mean().item())

    t_start = time.perf_counter()
    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(args.n_train)
        t0, losses = time.perf_counter(), []
        for i in range(0, args.n_train, args.batch_size):
            idx = perm[i:i + args.batch_size]
            logits = step_model(x_tr[idx])
            loss = F.binary_cross_entropy_with_logits(logits, y_tr[idx], pos_weight=pos_weight)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        model.eval()
        with torch.no_grad():
            scores = torch.cat([step_model(x_va[j:j + 128]) for j in range(0, 512, 128)])
        log.info("epoch %d  loss %.4f  val AUROC %.3f  epoch time %.1fs", epoch, sum(losses) / len(losses),
                 auroc(scores, y_va), time.perf_counter() - t0)
    log.info("done in %.1fs", time.perf_counter() - t_start)


if __name__ == "__main__":
    main()
