"""Credit-risk scorer: calibrated numeric features + categorical embeddings + MLP.

usage: python train_risk.py [--compile] [--steps 150]
"""
import argparse
import logging
import time

import torch
import torch.nn as nn

from pwl_calibration import PWLCalibrator

log = logging.getLogger("train_risk")

N_NUM = 12
CAT_CARD = [8, 24, 50]


class RiskModel(nn.Module):
    def __init__(self, hidden=128, emb_dim=8):
        super().__init__()
        self.calib = PWLCalibrator(N_NUM, n_keypoints=16)
        self.embs = nn.ModuleList([nn.Embedding(c, emb_dim) for c in CAT_CARD])
        in_dim = N_NUM + emb_dim * len(CAT_CARD)
        self.mlp = nn.Sequential(
            nn.Linear(in_dim, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, 1),
        )

    def forward(self, num, cat):
        z = self.calib(num)
        e = [emb(cat[:, j]) for j, emb in enumerate(self.embs)]
        return self.mlp(torch.cat([z] + e, dim=-1)).squeeze(-1)


def make_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    num = torch.randn(n, N_NUM, generator=g) * 1.3
    cat = torch.stack([torch.randint(0, c, (n,), generator=g) for c in CAT_CARD], dim=1)
    logit = torch.tanh(num[:, 0]) * 2 - num[:, 1].abs() + 0.5 * (cat[:, 0] % 3 - 1) + 0.3 * num[:, 2] ** 2 - 0.5
    y = (torch.rand(n, generator=g) < torch.sigmoid(logit)).float()
    return num, cat, y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--batch-size", type=int, default=512)
    ap.add_argument("--lr", type=float, default=2e-3)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")

    torch.manual_seed(0)
    num, cat, y = make_data(60_000, seed=1)
    vnum, vcat, vy = make_data(8_000, seed=2)

    model = RiskModel()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = nn.BCEWithLogitsLoss()
    fwd = torch.compile(model) if args.compile else model
    log.info("compile=%s  params=%d", args.compile, sum(p.numel() for p in model.parameters()))

    g = torch.Generator().manual_seed(3)
    t0 = time.time()
    for step in range(args.steps):
        idx = torch.randint(0, len(y), (args.batch_size,), generator=g)
        loss = loss_fn(fwd(num[idx], cat[idx]), y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step == 0:
            log.info("first step %.1fs", time.time() - t0)
        if step % 50 == 0 or step == args.steps - 1:
            with torch.no_grad():
                vloss = loss_fn(fwd(vnum, vcat), vy).item()
            log.info("step %4d  train %.4f  val %.4f", step, loss.item(), vloss)
    log.info("done in %.1fs  final val loss %.5f", time.time() - t0, vloss)


if __name__ == "__main__":
    main()
