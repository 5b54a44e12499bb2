"""Keyword-spotting model with an in-graph feature frontend (framing + window +
log-power spectrum) so the exported model takes raw 16 kHz audio.

    python train_kws.py              # eager, works
    python train_kws.py --compile    # torch.compile, crashes
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

SR = 16000
WIN, HOP, NFFT = 400, 160, 512      # 25 ms window, 10 ms hop
N_CLASSES = 6


class Frontend(nn.Module):
    def __init__(self, preemph=0.97):
        super().__init__()
        self.preemph = preemph
        self.register_buffer("window", torch.hann_window(WIN))

    def forward(self, wav):                                  # [B, samples]
        wav = torch.cat([wav[:, :1], wav[:, 1:] - self.preemph * wav[:, :-1]], dim=1)
        frames = wav.unfold(-1, WIN, HOP)                    # [B, n_frames, WIN] (view)
        # per-frame DC removal and windowing, done in place to avoid
        # materialising another [B, n_frames, WIN] copy
        frames.sub_(frames.mean(dim=-1, keepdim=True))
        frames.mul_(self.window)
        spec = torch.fft.rfft(frames, n=NFFT).abs().pow(2)  # [B, n_frames, 257]
        return torch.log(spec + 1e-6)


class KWS(nn.Module):
    def __init__(self):
        super().__init__()
        self.frontend = Frontend()
        self.conv = nn.Sequential(
            nn.Conv1d(NFFT // 2 + 1, 64, 5, padding=2), nn.ReLU(),
            nn.Conv1d(64, 64, 5, padding=2), nn.ReLU(),
        )
        self.head = nn.Linear(64, N_CLASSES)

    def forward(self, wav):
        feats = self.frontend(wav).transpose(1, 2)          # [B, 257, T]
        feats = (feats - feats.mean(dim=(1, 2), keepdim=True)) / (feats.std(dim=(1, 2), keepdim=True) + 1e-5)
        h = self.conv(feats).mean(-1)
        return self.head(h)


def synth_batch(g, batch=16, seconds=0.5):
    """Class k = a tone at (300 + 250 k) Hz with random phase plus noise."""
    n = int(SR * seconds)
    y = torch.randint(0, N_CLASSES, (batch,), generator=g)
    t = torch.arange(n) / SR
    f = 300.0 + 250.0 * y.float()
    phase = torch.rand(batch, 1, generator=g) * 6.28
    wav = torch.sin(2 * torch.pi * f[:, None] * t[None] + phase)
    wav = wav + 0.3 * torch.randn(batch, n, generator=g)
    return wav, y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--steps", type=int, default=40)
    args = ap.parse_args()

    torch.manual_seed(0)
    model = KWS()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    fwd = torch.compile(model) if args.compile else model
    g = torch.Generator().manual_seed(1)
    t0 = time.time()
    for step in range(args.steps):
        wav, y = synth_batch(g)
        loss = F.cross_entropy(fwd(wav), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        if step % 10 == 0 or step == args.steps - 1:
            print(f"step {step:3d} loss {loss.item():.4f}")
    model.eval()
    with torch.no_grad():
        wav, y = synth_batch(torch.Generator().manual_seed(123), batch=256)
        acc = (fwd(wav).argmax(-1) == y).float().mean().item()
    print(f"val acc {acc:.3f}  ({time.time() - t0:.1f}s)")


if __name__ == "__main__":
    main()
