"""Voice-intent inference server (offline replay of a request log).

Upstream feature service sends 40-bin log-mel features as (n_mels, frames).
We micro-batch requests, pad to a length bucket, and run the intent encoder.
"""
import argparse
import math
import random
import statistics
import time
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class EncoderConfig:
    n_mels: int = 40
    d_model: int = 96
    n_heads: int = 4
    ffn_dim: int = 192
    n_layers: int = 3
    n_intents: int = 24
    dropout: float = 0.1
    max_frames: int = 400


class ConvSubsampler(nn.Module):
    """Two strided 1-D convs: 4x time reduction, like most speech frontends."""

    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        self.conv1 = nn.Conv1d(cfg.n_mels, cfg.d_model, kernel_size=3, stride=2, padding=1)
        self.conv2 = nn.Conv1d(cfg.d_model, cfg.d_model, kernel_size=3, stride=2, padding=1)

    def forward(self, feats):  # (B, n_mels, T)
        x = F.gelu(self.conv1(feats))
        x = F.gelu(self.conv2(x))
        return x  # (B, d_model, T // 4)

    @staticmethod
    def out_frames(frames: int) -> int:
        t = (frames - 1) // 2 + 1
        return (t - 1) // 2 + 1


class IntentEncoder(nn.Module):
    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        self.cfg = cfg
        self.subsample = ConvSubsampler(cfg)
        self.feat_norm = nn.LayerNorm(cfg.d_model)
        self.feat_drop = nn.Dropout(cfg.dropout)
        layer = nn.TransformerEncoderLayer(
            d_model=cfg.d_model,
            nhead=cfg.n_heads,
            dim_feedforward=cfg.ffn_dim,
            dropout=cfg.dropout,
            activation="gelu",
            batch_first=True,
        )
        self.encoder = nn.TransformerEncoder(layer, num_layers=cfg.n_layers, enable_nested_tensor=False)
        self.pool_query = nn.Linear(cfg.d_model, 1)
        self.head = nn.Sequential(
            nn.Linear(cfg.d_model, cfg.d_model), nn.GELU(), nn.Linear(cfg.d_model, cfg.n_intents)
        )

    def forward(self, feats, frame_mask):
        # feats: (B, n_mels, T) ; frame_mask: (B, T//4) True on real frames
        x = self.subsample(feats).transpose(1, 2)
        x = self.feat_drop(self.feat_norm(x))
        x = self.encoder(x)
        scores = self.pool_query(x).squeeze(-1)
        scores = scores.masked_fill(~frame_mask, float("-inf"))
        attn = torch.softmax(scores, dim=-1).unsqueeze(-1)
        pooled = (attn * x).sum(dim=1)
        return self.head(pooled)


# ---------------------------------------------------------------- request handling

BUCKETS = (64, 128, 192, 256, 320, 400)


@dataclass
class Request:
    rid: int
    feats: torch.Tensor  # (n_mels, frames)


def bucket_for(frames: int) -> int:
    for b in BUCKETS:
        if frames <= b:
            return b
    return BUCKETS[-1]


def make_batch(reqs, cfg: EncoderConfig):
    longest = max(r.feats.shape[1] for r in reqs)
    T = bucket_for(longest)
    feats = torch.zeros(len(reqs), cfg.n_mels, T)
    lens = []
    for i, r in enumerate(reqs):
        n = min(r.feats.shape[1], T)
        feats[i, :, :n] = r.feats[:, :n]
        lens.append(ConvSubsampler.out_frames(n))
    t_out = ConvSubsampler.out_frames(T)
    frame_mask = torch.arange(t_out)[None, :] < torch.tensor(lens)[:, None]
    return feats, frame_mask


def synthetic_request_log(n, cfg, seed=0):
    rng = random.Random(seed)
    g = torch.Generator().manual_seed(seed)
    log = []
    for rid in range(n):
        frames = int(min(cfg.max_frames, max(30, rng.lognormvariate(math.log(150), 0.45))))
        log.append(Request(rid, torch.randn(cfg.n_mels, frames, generator=g)))
    return log


def micro_batches(log, max_batch, seed=1):
    rng = random.Random(seed)
    i = 0
    while i < len(log):
        k = rng.randint(1, max_batch)
        yield log[i : i + k]
        i += k


class IntentServer:
    def __init__(self, model, cfg, compile_model=True):
        self.cfg = cfg
        self.model = model.eval()
        self.runner = torch.compile(self.model) if compile_model else self.model

    @torch.inference_mode()
    def warmup(self, max_batch):
        for T in BUCKETS:
            for b in sorted({1, max_batch}):
                feats = torch.randn(b, self.cfg.n_mels, T)
                mask = torch.ones(b, ConvSubsampler.out_frames(T), dtype=torch.bool)
                self.runner(feats, mask)

    @torch.inference_mode()
    def handle(self, reqs):
        feats, mask = make_batch(reqs, self.cfg)
        logits = self.runner(feats, mask)
        probs = logits.softmax(-1)
        conf, intent = probs.max(-1)
        return [(r.rid, int(i), float(c)) for r, i, c in zip(reqs, intent, conf)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--requests", type=int, default=120)
    ap.add_argument("--max-batch", type=int, default=8)
    args = ap.parse_args()

    torch.manual_seed(0)
    cfg = EncoderConfig()
    model = IntentEncoder(cfg)
    server = IntentServer(model, cfg, compile_model=not args.no_compile)

    t0 = time.perf_counter()
    server.warmup(args.max_batch)
    print(f"warmup done in {time.perf_counter() - t0:.1f}s")

    log = synthetic_request_log(args.requests, cfg)
    lat, results = [], []
    for reqs in micro_batches(log, args.max_batch):
        t = time.perf_counter()
        results.extend(server.handle(reqs))
        lat.append((time.perf_counter() - t) * 1000)
    lat.sort()
    print(f"served {len(results)} requests in {len(lat)} batches")
    print(f"latency ms p50={statistics.median(lat):.2f} p95={lat[int(0.95 * (len(lat) - 1))]:.2f}")
    hist = {}
    for _, intent, _ in results:
        hist[intent] = hist.get(intent, 0) + 1
    print("top intents:", sorted(hist.items(), key=lambda kv: -kv[1])[:5])


if __name__ == "__main__":
    main()
