"""Keyword-spotting eval: log frame-energy front end (custom op) + small conv classifier.

Runs the validation set through the model in eager and through torch.compile and
reports accuracy and the compiled speedup, so we can switch the serving path over.
"""
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

SAMPLE_RATE = 16000
HOP = 160            # 10 ms frames
N_CLASSES = 12
N_BANDS = 16


# ---------------------------------------------------------------------------
# Front end: per-band frame energies. The production kernel is a C++/SIMD op;
# this is its reference implementation, registered the same way.
# ---------------------------------------------------------------------------
@torch.library.custom_op("kws::band_frame_energy", mutates_args=())
def band_frame_energy(wave: torch.Tensor, filt: torch.Tensor, hop: int) -> torch.Tensor:
    """wave: (B, T) float32, filt: (N_BANDS, K) FIR bank -> (B, N_BANDS, n_frames)."""
    B, T = wave.shape
    n_frames = math.ceil(T / hop)
    pad = n_frames * hop - T
    x = F.pad(wave, (0, pad))
    k = filt.shape[-1]
    bands = F.conv1d(x.unsqueeze(1), filt.unsqueeze(1), padding=k // 2)[..., : n_frames * hop]
    e = bands.pow(2).reshape(B, filt.shape[0], n_frames, hop).mean(-1)
    return e.contiguous()


@band_frame_energy.register_fake
def _(wave, filt, hop):
    B, T = wave.shape
    return wave.new_empty(B, filt.shape[0], T // hop)


def make_filterbank(n_bands=N_BANDS, taps=33):
    t = torch.arange(taps, dtype=torch.float32) - taps // 2
    win = torch.hann_window(taps, periodic=False)
    rows = []
    for b in range(n_bands):
        fc = (b + 0.5) / (2 * n_bands)
        rows.append(torch.cos(2 * math.pi * fc * t) * win)
    fb = torch.stack(rows)
    return fb / fb.norm(dim=-1, keepdim=True)


class KWSNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("filt", make_filterbank())
        self.norm = nn.BatchNorm1d(N_BANDS)
        self.convs = nn.Sequential(
            nn.Conv1d(N_BANDS, 64, 5, padding=2), nn.GELU(),
            nn.Conv1d(64, 64, 5, padding=4, dilation=2), nn.GELU(),
            nn.Conv1d(64, 96, 5, padding=8, dilation=4), nn.GELU(),
        )
        self.head = nn.Linear(96, N_CLASSES)

    def forward(self, wave):
        feats = band_frame_energy(wave, self.filt, HOP)
        feats = torch.log(feats + 1e-6)
        h = self.convs(self.norm(feats))
        return self.head(h.mean(-1))


# ---------------------------------------------------------------------------
# Data: synthetic stand-in for the validation manifest (1 s clips, some are
# shorter after silence trimming).
# ---------------------------------------------------------------------------
def synth_clip(label, n_samples, g):
    t = torch.arange(n_samples, dtype=torch.float32) / SAMPLE_RATE
    f0 = 200.0 + 150.0 * label
    env = torch.exp(-((t - 0.5) ** 2) / 0.05)
    x = env * torch.sin(2 * math.pi * f0 * t) + 0.01 * torch.randn(n_samples, generator=g)
    return x


def trim_trailing_silence(x, thresh=0.02, block=HOP):
    n_blocks = x.numel() // block
    rms = x[: n_blocks * block].reshape(n_blocks, block).pow(2).mean(-1).sqrt()
    keep = (rms > thresh).nonzero()
    if keep.numel() == 0:
        return x
    end = min(x.numel(), (int(keep[-1]) + 1) * block + 37)
    return x[:end]


def build_val_batches(n_batches=10, batch_size=16, seed=0):
    g = torch.Generator().manual_seed(seed)
    batches = []
    for i in range(n_batches):
        labels = torch.randint(0, N_CLASSES, (batch_size,), generator=g)
        clips = [synth_clip(int(l), SAMPLE_RATE, g) for l in labels]
        if i >= 3:
            # later manifests were preprocessed with silence trimming
            clips = [trim_trailing_silence(c, thresh=0.02 + 0.01 * (i % 3)) for c in clips]
        T = min(c.numel() for c in clips)
        wave = torch.stack([c[:T] for c in clips])
        batches.append((wave, labels))
    return batches


def quick_train(model, batches, steps=30):
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for s in range(steps):
        wave, labels = batches[s % 3]
        loss = F.cross_entropy(model(wave), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()


@torch.no_grad()
def evaluate(fn, batches):
    correct, total, t0 = 0, 0, time.perf_counter()
    for bi, (wave, labels) in enumerate(batches):
        logits = fn(wave)
        correct += (logits.argmax(-1) == labels).sum().item()
        total += labels.numel()
    return correct / total, time.perf_counter() - t0


def main():
    torch.manual_seed(0)
    batches = build_val_batches()
    print("batch lengths:", [b[0].shape[1] for b in batches])
    model = KWSNet()
    quick_train(model, batches)

    acc_e, t_e = evaluate(model, batches)
    print(f"eager    acc={acc_e:.4f}  time={t_e:.2f}s")

    compiled = torch.compile(model)
    acc_c, t_c = evaluate(compiled, batches)
    print(f"compiled acc={acc_c:.4f}  time={t_c:.2f}s (incl. compile)")

    with torch.no_grad():
        diffs = [(model(w) - compiled(w)).abs().max().item() for w, _ in batches]
    print(f"max |eager - compiled| logits: {max(diffs):.3e}")
    assert abs(acc_e - acc_c) < 1e-6, "compiled accuracy differs from eager"
    print("OK")


if __name__ == "__main__":
    main()
