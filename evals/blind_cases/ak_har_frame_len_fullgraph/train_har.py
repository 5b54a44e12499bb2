"""Human-activity recognition from wrist accelerometer streams.

Each batch comes from one recording device; devices sample at different rates,
so the framing window (250 ms) is derived from the batch's sample-rate tensor.
"""
import argparse
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("har")

N_CLASSES = 6
FRAME_MS = 250


def make_device_batches(n_batches, batch, seconds, seed):
    g = torch.Generator().manual_seed(seed)
    rates = [32, 50, 64, 100]
    out = []
    for i in range(n_batches):
        sr = rates[i % len(rates)]
        T = sr * seconds
        y = torch.randint(0, N_CLASSES, (batch,), generator=g)
        t = torch.arange(T) / sr
        freq = (1.0 + y.float())[:, None]
        base = torch.sin(2 * torch.pi * freq * t[None, :])
        x = torch.stack([base, 0.5 * base.roll(3, 1), torch.cos(2 * torch.pi * freq * t)], 1)
        x = x + 0.3 * torch.randn(x.shape, generator=g)
        out.append({"x": x, "sr": torch.full((batch,), sr), "y": y})
    return out


class FrameEncoder(nn.Module):
    def __init__(self, channels=3, hidden=64):
        super().__init__()
        self.proj = nn.Linear(channels * 4, hidden)
        self.norm = nn.LayerNorm(hidden)

    def forward(self, x, sr):
        # samples per 250 ms frame for this device
        frame = int(sr.min()) * FRAME_MS // 1000
        frames = x.unfold(-1, frame, frame)              # B, C, n_frames, frame
        feats = torch.cat([
            frames.mean(-1), frames.std(-1),
            frames.amax(-1), frames.amin(-1),
        ], dim=1)                                        # B, 4C, n_frames
        return self.norm(self.proj(feats.transpose(1, 2)))


class ActivityNet(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.enc = FrameEncoder(hidden=hidden)
        self.temporal = nn.Sequential(
            nn.Conv1d(hidden, hidden, 3, padding=1), nn.GELU(),
            nn.Conv1d(hidden, hidden, 3, padding=1), nn.GELU(),
        )
        self.head = nn.Linear(hidden, N_CLASSES)

    def forward(self, x, sr):
        h = self.temporal(self.enc(x, sr).transpose(1, 2))
        return self.head(h.mean(-1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=24)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seconds", type=int, default=4)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--fullgraph", action="store_true")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    torch.manual_seed(0)
    model = ActivityNet()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    fwd = model
    if args.compile:
        # .item()/int() on the sample rate would otherwise break the graph
        torch._dynamo.config.capture_scalar_outputs = True
        fwd = torch.compile(model, fullgraph=args.fullgraph)

    batches = make_device_batches(args.steps, args.batch, args.seconds, seed=1)
    t0 = time.time()
    for step, b in enumerate(batches):
        ts = time.time()
        logits = fwd(b["x"], b["sr"])
        loss = F.cross_entropy(logits, b["y"])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        acc = (logits.argmax(-1) == b["y"]).float().mean().item()
        if step % 4 == 0 or step == len(batches) - 1:
            log.info("step %2d sr=%3d loss %.4f acc %.2f  %.2fs", step, int(b["sr"][0]), loss.item(), acc, time.time() - ts)
    log.info("done: %d steps in %.1fs, final loss %.4f", len(batches), time.time() - t0, loss.item())


if __name__ == "__main__":
    main()
