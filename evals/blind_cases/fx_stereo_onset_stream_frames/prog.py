"""Streaming onset detector for the two-mic capture board.

The capture driver hands us interleaved int16 -> float PCM as a (T, 2) buffer per
chunk: the first CURRENT samples are the chunk being scored, the rest is lookahead
that the next call will see again.  Only the left (reference) mic is scored.

This script trains the small detector in eager, then runs the serving path
(`detect_chunk`) eagerly and through torch.compile and reports both, the way the
nightly release check does.
"""
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

SR = 16000
CURRENT = 512           # samples scored per call
LOOKAHEAD = 512         # kept in the buffer for the next call
T = CURRENT + LOOKAHEAD
FRAME = 64
HOP = 32
N_BANDS = 12
GAIN = 4.0

torch.manual_seed(0)


# ----------------------------------------------------------------------------
# synthetic capture data
# ----------------------------------------------------------------------------
def make_chunk(gen, positive):
    """Interleaved (T, 2) buffer. A positive chunk has a tone burst inside the
    scored region; a negative one has the burst only in the lookahead (it belongs
    to the next chunk) or no burst at all."""
    t = torch.arange(T, dtype=torch.float32) / SR
    left = 0.05 * torch.randn(T, generator=gen) + 0.3
    right = 0.05 * torch.randn(T, generator=gen) - 0.2
    if positive:
        start = int(torch.randint(0, CURRENT - 160, (1,), generator=gen))
    elif float(torch.rand(1, generator=gen)) < 0.7:
        start = int(torch.randint(CURRENT + 32, T - 160, (1,), generator=gen))
    else:
        start = None
    if start is not None:
        f0 = float(torch.empty(1).uniform_(1500, 3000, generator=gen))
        n = 160
        env = torch.hann_window(n)
        burst = 0.6 * env * torch.sin(2 * math.pi * f0 * t[:n])
        left[start:start + n] += burst
        right[start:start + n] += 0.3 * burst
    buf = torch.stack([left, right], dim=1).contiguous()
    return buf


def make_set(n, seed):
    gen = torch.Generator().manual_seed(seed)
    bufs, labels = [], []
    for i in range(n):
        pos = (i % 2) == 0
        bufs.append(make_chunk(gen, pos))
        labels.append(1.0 if pos else 0.0)
    return bufs, torch.tensor(labels)


# ----------------------------------------------------------------------------
# features
# ----------------------------------------------------------------------------
_WINDOW = torch.hann_window(FRAME)
_BAND_EDGES = [int(v) for v in torch.linspace(0, FRAME // 2 + 1, N_BANDS + 1).long()]


def frame_view(x, frame, hop, length):
    """Overlapping frames of the first `length` samples of a 1-D signal, as a view
    (no copy).  Works for strided channels of an interleaved buffer."""
    s = x.stride(0)
    n = 1 + (length - frame) // hop
    return x.as_strided((n, frame), (hop * s, s))


def featurize(ch):
    # The chunk buffer is owned by the serving loop, so normalise in place
    # instead of allocating another copy per call.
    ch.sub_(ch.mean()).mul_(GAIN)
    frames = frame_view(ch, FRAME, HOP, CURRENT)
    spec = torch.fft.rfft(frames * _WINDOW, dim=-1).abs().pow(2)
    bands = torch.stack(
        [spec[:, _BAND_EDGES[i]:_BAND_EDGES[i + 1]].sum(-1) for i in range(N_BANDS)],
        dim=-1,
    )
    return torch.log(bands + 1e-4)          # (n_frames, N_BANDS)


# ----------------------------------------------------------------------------
# model
# ----------------------------------------------------------------------------
class OnsetNet(nn.Module):
    def __init__(self, bands=N_BANDS, width=32):
        super().__init__()
        self.norm = nn.LayerNorm(bands)
        self.conv1 = nn.Conv1d(bands, width, 3, padding=1)
        self.conv2 = nn.Conv1d(width, width, 3, padding=1)
        self.head = nn.Linear(2 * width, 1)

    def forward(self, feats):                 # (B, n_frames, bands)
        h = self.norm(feats).transpose(1, 2)
        h = F.gelu(self.conv1(h))
        h = F.gelu(self.conv2(h))
        pooled = torch.cat([h.mean(-1), h.amax(-1)], dim=-1)
        return self.head(pooled).squeeze(-1)


def batch_features(bufs):
    feats = []
    for b in bufs:
        b = b.clone()
        feats.append(featurize(b[:, 0]))
    return torch.stack(feats)


def train(model, bufs, labels, epochs=25, bs=32):
    feats = batch_features(bufs)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    for ep in range(epochs):
        perm = torch.randperm(len(bufs))
        tot = 0.0
        for i in range(0, len(bufs), bs):
            idx = perm[i:i + bs]
            loss = F.binary_cross_entropy_with_logits(model(feats[idx]), labels[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += loss.item() * len(idx)
        if ep % 5 == 4:
            print(f"epoch {ep + 1:2d}  train loss {tot / len(bufs):.4f}")


# ----------------------------------------------------------------------------
# serving path
# ----------------------------------------------------------------------------
def make_detector(model):
    def detect_chunk(buf):
        left = buf[:, 0]
        feats = featurize(left)
        return torch.sigmoid(model(feats.unsqueeze(0)))[0]
    return detect_chunk


@torch.no_grad()
def run_stream(detect, bufs, labels):
    probs = []
    for b in bufs:
        probs.append(detect(b.clone()))
    probs = torch.stack(probs)
    acc = ((probs > 0.5).float() == labels).float().mean().item()
    return probs, acc


def main():
    t0 = time.time()
    train_bufs, train_y = make_set(384, seed=1)
    val_bufs, val_y = make_set(200, seed=2)

    model = OnsetNet()
    train(model, train_bufs, train_y)
    model.eval()

    detect = make_detector(model)
    p_eager, acc_eager = run_stream(detect, val_bufs, val_y)
    print(f"eager    val acc {acc_eager:.3f}")

    detect_c = torch.compile(make_detector(model))
    p_comp, acc_comp = run_stream(detect_c, val_bufs, val_y)
    print(f"compiled val acc {acc_comp:.3f}")

    diff = (p_eager - p_comp).abs()
    agree = ((p_eager > 0.5) == (p_comp > 0.5)).float().mean().item()
    print(f"max |p_eager - p_compiled| = {diff.max().item():.4f}  decision agreement {agree:.3f}")
    print(f"wall {time.time() - t0:.1f}s")
    if diff.max().item() > 1e-3:
        raise SystemExit("RELEASE CHECK FAILED: compiled detector disagrees with eager")
    print("release check passed")


if __name__ == "__main__":
    main()
