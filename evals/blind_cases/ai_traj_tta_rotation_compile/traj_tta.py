"""Evaluate a pedestrian trajectory forecaster with rotation test-time augmentation.

Usage:
    python traj_tta.py                  # eager
    python traj_tta.py --compile        # torch.compile the model
"""
import argparse
import logging
import math
import time

import numpy as np
import torch
import torch.nn as nn

from geometry import rotate, to_agent_frame

log = logging.getLogger("traj_tta")


class TrajectoryForecaster(nn.Module):
    """Temporal-conv encoder over the observed history + MLP decoder for the future offsets."""

    def __init__(self, obs_len=8, pred_len=12, hidden=64, tta_degrees=(0.0, 90.0, 180.0, 270.0)):
        super().__init__()
        self.obs_len, self.pred_len = obs_len, pred_len
        self.embed = nn.Sequential(nn.Linear(4, hidden), nn.ReLU())
        self.encoder = nn.Sequential(
            nn.Conv1d(hidden, hidden, 3, padding=1), nn.GELU(),
            nn.Conv1d(hidden, hidden, 3, padding=1), nn.GELU(),
        )
        self.summary = nn.Linear(hidden * obs_len, hidden)
        self.decoder = nn.Sequential(
            nn.Linear(hidden, 2 * hidden), nn.ReLU(),
            nn.Linear(2 * hidden, 2 * hidden), nn.ReLU(),
            nn.Linear(2 * hidden, pred_len * 2),
        )
        self.tta_angles = [math.radians(d) for d in tta_degrees]

    def _predict(self, hist):
        vel = torch.diff(hist, dim=1, prepend=hist[:, :1])
        h = self.embed(torch.cat([hist, vel], dim=-1))
        h = self.encoder(h.transpose(1, 2)).flatten(1)
        out = self.decoder(torch.relu(self.summary(h)))
        return out.view(-1, self.pred_len, 2).cumsum(dim=1)

    def forward(self, history):
        hist, origin = to_agent_frame(history)
        preds = []
        for theta in self.tta_angles:
            p = self._predict(rotate(hist, theta))
            preds.append(rotate(p, -theta))
        return torch.stack(preds).mean(0) + origin


def make_scenes(n, obs_len, pred_len, seed):
    """Synthetic pedestrian tracks: constant heading + slowly turning + noise (metres, 2.5 Hz)."""
    rng = np.random.default_rng(seed)
    T = obs_len + pred_len
    start = rng.uniform(-20, 20, size=(n, 1, 2))
    heading = rng.uniform(0, 2 * np.pi, size=(n, 1))
    turn = rng.normal(0, 0.05, size=(n, 1))
    speed = rng.uniform(0.4, 0.8, size=(n, 1))
    t = np.arange(T)[None, :]
    ang = heading + turn * t
    step = np.stack([np.cos(ang), np.sin(ang)], -1) * speed[..., None]
    traj = start + np.cumsum(step, axis=1) + rng.normal(0, 0.03, size=(n, T, 2))
    traj = torch.from_numpy(traj.astype(np.float32))
    return traj[:, :obs_len], traj[:, obs_len:]


def ade_fde(pred, fut):
    err = (pred - fut).norm(dim=-1)
    return err.mean().item(), err[:, -1].mean().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--scenes", type=int, default=1024)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--train-steps", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)

    obs_len, pred_len = 8, 12
    train_hist, train_fut = make_scenes(args.scenes, obs_len, pred_len, args.seed)
    val_hist, val_fut = make_scenes(512, obs_len, pred_len, args.seed + 1)

    model = TrajectoryForecaster(obs_len, pred_len)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    run_model = torch.compile(model) if args.compile else model
    log.info("torch %s, compile=%s", torch.__version__, args.compile)

    t0 = time.perf_counter()
    model.train()
    for step in range(args.train_steps):
        idx = torch.randint(0, args.scenes, (args.batch_size,))
        pred = run_model(train_hist[idx])
        loss = (pred - train_fut[idx]).norm(dim=-1).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 10 == 0 or step == args.train_steps - 1:
            log.info("step %4d  train ADE %.3f m  (%.1fs)", step, loss.item(), time.perf_counter() - t0)

    model.eval()
    with torch.no_grad():
        pred = torch.cat([run_model(val_hist[i:i + 256]) for i in range(0, len(val_hist), 256)])
    ade, fde = ade_fde(pred, val_fut)
    log.info("val ADE %.3f m  FDE %.3f m  (total %.1fs)", ade, fde, time.perf_counter() - t0)


if __name__ == "__main__":
    main()
