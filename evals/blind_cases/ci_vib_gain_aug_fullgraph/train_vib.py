"""Bearing-fault classifier on accelerometer windows.

Augmentation runs on the training device, fused into the compiled train step
together with the forward pass and the loss.
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("vib")


def synth_dataset(n, length, n_classes, seed):
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(length, dtype=torch.float32) / 2048.0
    y = torch.randint(0, n_classes, (n,), generator=g)
    base_hz = 30.0 + 17.0 * y.float()
    phase = torch.rand(n, 1, generator=g) * 2 * math.pi
    sig = torch.sin(2 * math.pi * base_hz[:, None] * t[None, :] + phase)
    sig = sig + 0.3 * torch.sin(2 * math.pi * 3 * base_hz[:, None] * t[None, :])
    sig = sig + 0.2 * torch.randn(n, length, generator=g)
    xyz = torch.stack([sig, 0.5 * sig.roll(7, -1), 0.25 * sig.roll(13, -1)], 1)
    return xyz, y


class WaveAugment(nn.Module):
    """Random gain (dB), additive noise at a random SNR, random polarity flip."""

    def __init__(self, gain_db=(-6.0, 6.0), snr_db=(15.0, 35.0), p_flip=0.5):
        super().__init__()
        # kept as buffers so .to(device) and state_dict() carry the aug config
        self.register_buffer("gain_lo", torch.tensor(gain_db[0]))
        self.register_buffer("gain_hi", torch.tensor(gain_db[1]))
        self.register_buffer("snr_lo", torch.tensor(snr_db[0]))
        self.register_buffer("snr_hi", torch.tensor(snr_db[1]))
        self.p_flip = p_flip

    def forward(self, x):
        b = x.shape[0]
        gain_db = torch.empty(b, 1, 1, device=x.device).uniform_(self.gain_lo, self.gain_hi)
        x = x * torch.pow(10.0, gain_db / 20.0)
        snr_db = torch.empty(b, 1, 1, device=x.device).uniform_(self.snr_lo, self.snr_hi)
        p_sig = x.pow(2).mean(dim=(1, 2), keepdim=True)
        p_noise = p_sig / torch.pow(10.0, snr_db / 10.0)
        x = x + torch.randn_like(x) * p_noise.sqrt()
        flip = (torch.rand(b, 1, 1, device=x.device) < self.p_flip).to(x.dtype)
        return x * (1.0 - 2.0 * flip)


class VibNet(nn.Module):
    def __init__(self, n_classes, width=32):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv1d(3, width, 9, stride=2, padding=4), nn.BatchNorm1d(width), nn.GELU())
        blocks = []
        for i in range(3):
            blocks += [nn.Conv1d(width, width, 5, stride=2, padding=2), nn.BatchNorm1d(width), nn.GELU()]
        self.body = nn.Sequential(*blocks)
        self.head = nn.Linear(width, n_classes)

    def forward(self, x):
        h = self.body(self.stem(x))
        return self.head(h.mean(-1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--length", type=int, default=1024)
    ap.add_argument("--classes", type=int, default=4)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)

    x_all, y_all = synth_dataset(1024, args.length, args.classes, args.seed)
    aug = WaveAugment()
    model = VibNet(args.classes)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)

    def loss_step(xb, yb):
        logits = model(aug(xb))
        loss = F.cross_entropy(logits, yb)
        acc = (logits.argmax(-1) == yb).float().mean()
        return loss, acc

    step_fn = loss_step if args.no_compile else torch.compile(loss_step, fullgraph=True)
    log.info("torch %s, compile=%s", torch.__version__, not args.no_compile)

    model.train()
    t0 = time.time()
    for step in range(args.steps):
        idx = torch.randint(0, x_all.shape[0], (args.batch,))
        ts = time.time()
        loss, acc = step_fn(x_all[idx], y_all[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step == 0 or (step + 1) % 10 == 0:
            log.info("step %3d loss %.4f acc %.3f (%.2fs)", step + 1, loss.item(), acc.item(), time.time() - ts)
    log.info("done in %.1fs", time.time() - t0)


if __name__ == "__main__":
    main()
