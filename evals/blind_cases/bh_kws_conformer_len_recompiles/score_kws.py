"""Offline scoring of the keyword-spotting encoder on variable-length log-mel utterances.

Conv2d subsampling front end (x4 in time) -> small transformer encoder -> masked mean pool -> classifier.
Utterances are sorted into length buckets (padded to a multiple of 32 frames) to keep the number of shapes small.
"""
import argparse
import logging
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("kws")


class SyntheticCommands(torch.utils.data.Dataset):
    """Stand-in for the speech-commands feature cache: (frames, n_mels) log-mels + label."""

    def __init__(self, n_items, n_mels, n_classes, min_frames, max_frames, seed):
        g = torch.Generator().manual_seed(seed)
        self.lengths = torch.randint(min_frames, max_frames + 1, (n_items,), generator=g).tolist()
        self.labels = torch.randint(0, n_classes, (n_items,), generator=g).tolist()
        self.n_mels = n_mels
        self.seed = seed

    def __len__(self):
        return len(self.lengths)

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(self.seed * 100003 + i)
        feats = torch.randn(self.lengths[i], self.n_mels, generator=g)
        feats[:, self.labels[i] % self.n_mels] += 2.0  # make the task learnable
        return feats, self.labels[i]


def bucket_collate(batch, multiple=32):
    lens = torch.tensor([b[0].shape[0] for b in batch])
    T = int(lens.max())
    T = ((T + multiple - 1) // multiple) * multiple
    feats = torch.zeros(len(batch), T, batch[0][0].shape[1])
    for j, (f, _) in enumerate(batch):
        feats[j, : f.shape[0]] = f
    labels = torch.tensor([b[1] for b in batch])
    return feats, lens, labels


class ConvSubsampling(nn.Module):
    def __init__(self, n_mels, d_model, stride=4):
        super().__init__()
        self.stride = stride
        self.conv = nn.Sequential(
            nn.Conv2d(1, 32, 3, stride=2, padding=1), nn.GELU(),
            nn.Conv2d(32, 32, 3, stride=2, padding=1), nn.GELU(),
        )
        self.proj = nn.Linear(32 * ((n_mels + 3) // 4), d_model)

    def out_frames(self, n_frames):
        return int(np.ceil(n_frames / self.stride))

    def forward(self, x):
        B, T, M = x.shape
        n_out = self.out_frames(T)
        pad = n_out * self.stride - T
        if pad:
            x = F.pad(x, (0, 0, 0, pad))
        y = self.conv(x.unsqueeze(1))                   # B, C, T/4, M/4
        y = y.permute(0, 2, 1, 3).reshape(B, n_out, -1)
        return self.proj(y)


class KWSEncoder(nn.Module):
    def __init__(self, n_mels=40, d_model=128, n_heads=4, n_layers=2, n_classes=12, max_frames=1024):
        super().__init__()
        self.subsample = ConvSubsampling(n_mels, d_model)
        self.pos = nn.Parameter(torch.randn(1, max_frames // 4 + 1, d_model) * 0.02)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, 4 * d_model, dropout=0.1,
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, n_classes)

    def forward(self, feats, lengths):
        h = self.subsample(feats)
        T4 = h.shape[1]
        h = h + self.pos[:, :T4]
        sub_len = torch.div(lengths + 3, 4, rounding_mode="floor")
        pad_mask = torch.arange(T4, device=h.device)[None, :] >= sub_len[:, None]
        h = self.encoder(h, src_key_padding_mask=pad_mask)
        h = self.norm(h).masked_fill(pad_mask[..., None], 0.0)
        pooled = h.sum(1) / sub_len[:, None].clamp(min=1).to(h.dtype)
        return self.head(pooled)


def length_sorted_batches(lengths, batch_size):
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    g = torch.Generator().manual_seed(3)
    return [batches[i] for i in torch.randperm(len(batches), generator=g).tolist()]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--utterances", type=int, default=96)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--min-frames", type=int, default=40)
    p.add_argument("--max-frames", type=int, default=300)
    p.add_argument("--compile", action="store_true")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(0)

    ds = SyntheticCommands(args.utterances, 40, 12, args.min_frames, args.max_frames, seed=1)
    dl = torch.utils.data.DataLoader(ds, batch_sampler=length_sorted_batches(ds.lengths, args.batch_size),
                                     collate_fn=bucket_collate)
    model = KWSEncoder().eval()
    fwd = torch.compile(model, dynamic=True) if args.compile else model
    log.info("params=%.2fM compile=%s", sum(p.numel() for p in model.parameters()) / 1e6, args.compile)

    t_start = time.perf_counter()
    times, correct, seen = [], 0, 0
    with torch.no_grad():
        for step, (feats, lens, labels) in enumerate(dl):
            t0 = time.perf_counter()
            logits = fwd(feats, lens)
            dt = time.perf_counter() - t0
            times.append(dt)
            correct += (logits.argmax(-1) == labels).sum().item()
            seen += labels.numel()
            log.info("batch %2d  T=%3d  batch_time %.3fs", step, feats.shape[1], dt)
    late = sorted(times[len(times) // 2:])
    log.info("done: %d batches in %.1fs, acc %.3f, median batch time (second half) %.3fs",
             len(times), time.perf_counter() - t_start, correct / seen, late[len(late) // 2])


if __name__ == "__main__":
    main()
