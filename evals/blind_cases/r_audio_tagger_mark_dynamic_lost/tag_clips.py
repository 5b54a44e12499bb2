"""Offline sound-event tagging over a folder of clips.

Clips have different durations, so every batch is padded to its own longest clip.
The model is compiled once with explicit dynamic-shape annotations on the frame axis.
"""
import argparse
import math
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

N_MELS = 40
N_CLASSES = 12


class ClipFeatures(Dataset):
    """Stands in for the feature cache: log-mel frames stored as float64 numpy arrays."""

    def __init__(self, n_clips, seed=0):
        rng = np.random.default_rng(seed)
        self.frames = rng.integers(60, 400, size=n_clips)
        self.rng_seed = seed

    def __len__(self):
        return len(self.frames)

    def __getitem__(self, idx):
        rng = np.random.default_rng(self.rng_seed * 100003 + idx)
        n = int(self.frames[idx])
        mel = rng.standard_normal((n, N_MELS)) * 2.0 - 4.0
        return {"mel": mel, "clip_id": idx}


def collate_clips(items):
    lengths = [it["mel"].shape[0] for it in items]
    t_max = max(lengths)
    mel = np.zeros((len(items), t_max, N_MELS), dtype=np.float64)
    for i, it in enumerate(items):
        mel[i, : lengths[i]] = it["mel"]
    mel = torch.from_numpy(mel)
    lengths = torch.tensor(lengths, dtype=torch.long)
    torch._dynamo.mark_dynamic(mel, 1)
    return {"mel": mel, "lengths": lengths, "clip_id": [it["clip_id"] for it in items]}


class ConvSubsample(nn.Module):
    def __init__(self, n_mels, d_model):
        super().__init__()
        self.conv1 = nn.Conv1d(n_mels, d_model, kernel_size=3, stride=2, padding=1)
        self.conv2 = nn.Conv1d(d_model, d_model, kernel_size=3, stride=2, padding=1)

    def forward(self, x):
        x = x.transpose(1, 2)
        x = F.gelu(self.conv1(x))
        x = F.gelu(self.conv2(x))
        return x.transpose(1, 2)


class SinusoidalPositions(nn.Module):
    def __init__(self, d_model, max_len=2048):
        super().__init__()
        pos = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe, persistent=False)

    def forward(self, x):
        return x + self.pe[: x.size(1)].unsqueeze(0)


class AttentionPool(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.score = nn.Linear(d_model, 1)

    def forward(self, h, mask):
        s = self.score(h).squeeze(-1)
        s = s.masked_fill(~mask, float("-inf"))
        w = torch.softmax(s, dim=1).unsqueeze(-1)
        return (w * h).sum(1)


class EventTagger(nn.Module):
    def __init__(self, d_model=96, n_layers=2, n_heads=4):
        super().__init__()
        self.norm_in = nn.LayerNorm(N_MELS)
        self.subsample = ConvSubsample(N_MELS, d_model)
        self.pos = SinusoidalPositions(d_model)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, dim_feedforward=2 * d_model,
                                           dropout=0.0, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.pool = AttentionPool(d_model)
        self.head = nn.Linear(d_model, N_CLASSES)

    def forward(self, mel, lengths):
        x = self.norm_in(mel)
        x = self.subsample(x)
        sub_len = torch.div(lengths + 3, 4, rounding_mode="floor")
        steps = torch.arange(x.size(1), device=x.device).unsqueeze(0)
        mask = steps < sub_len.unsqueeze(1)
        x = self.pos(x)
        x = self.encoder(x, src_key_padding_mask=~mask)
        return self.head(self.pool(x, mask))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clips", type=int, default=192)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()

    torch.manual_seed(0)
    device = torch.device("cpu")
    model = EventTagger().to(device).eval()
    runner = model if args.no_compile else torch.compile(model, dynamic=False)

    loader = DataLoader(ClipFeatures(args.clips), batch_size=args.batch_size,
                        shuffle=False, collate_fn=collate_clips)

    scores = {}
    batch_times = []
    t_start = time.perf_counter()
    with torch.inference_mode():
        for step, batch in enumerate(loader):
            t0 = time.perf_counter()
            mel = batch["mel"].to(device, dtype=torch.float32, non_blocking=True)
            lengths = batch["lengths"].to(device)
            logits = runner(mel, lengths)
            probs = torch.sigmoid(logits)
            for cid, p in zip(batch["clip_id"], probs):
                scores[cid] = p
            dt = time.perf_counter() - t0
            batch_times.append(dt)
            print(f"batch {step:3d}  frames={mel.shape[1]:4d}  {dt * 1000:8.1f} ms")

    total = time.perf_counter() - t_start
    tail = sorted(batch_times[len(batch_times) // 2:])
    print(f"tagged {len(scores)} clips in {total:.1f}s; "
          f"median of second half {tail[len(tail) // 2] * 1000:.1f} ms/batch")
    top = torch.stack([scores[i] for i in range(len(scores))]).mean(0)
    print("mean class activation:", " ".join(f"{v:.3f}" for v in top.tolist()))


if __name__ == "__main__":
    main()
