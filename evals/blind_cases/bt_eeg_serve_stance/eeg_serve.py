"""Online EEG event tagger: compiled once at start-up, then serves variable-length windows.

Requests arrive as (n_samples, n_channels) float32 windows cut by the acquisition front end.
The model is compiled with dynamic shapes at start-up, warmed up once, and the request path is
then locked with torch.compiler.set_stance("fail_on_recompile") so that no request ever pays a
compile.
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("eeg_serve")

EVENT_NAMES = ["background", "spike", "sharp_wave", "artifact_eye", "artifact_muscle"]


class TemporalConvStem(nn.Module):
    def __init__(self, n_channels, d_model):
        super().__init__()
        self.proj = nn.Linear(n_channels, d_model)
        self.dw = nn.Conv1d(d_model, d_model, kernel_size=7, padding=3, groups=d_model)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x):                      # x: (B, T, C)
        h = self.proj(x)                       # (B, T, D)
        h = h + self.dw(h.transpose(1, 2)).transpose(1, 2)
        return self.norm(h)


class Block(nn.Module):
    def __init__(self, d_model, n_heads, ff_mult=2, dropout=0.0):
        super().__init__()
        self.n_heads = n_heads
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.o = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, ff_mult * d_model), nn.GELU(),
                                nn.Linear(ff_mult * d_model, d_model))
        self.dropout = dropout

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        q, k, v = (t.reshape(B, T, self.n_heads, D // self.n_heads).transpose(1, 2) for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0)
        x = x + self.o(a.transpose(1, 2).reshape(B, T, D))
        return x + self.ff(self.ln2(x))


class EEGEventTagger(nn.Module):
    def __init__(self, n_channels=64, d_model=96, n_heads=4, n_layers=2, n_classes=len(EVENT_NAMES)):
        super().__init__()
        self.stem = TemporalConvStem(n_channels, d_model)
        self.blocks = nn.ModuleList([Block(d_model, n_heads) for _ in range(n_layers)])
        self.head = nn.Linear(d_model, n_classes)

    def forward(self, x):
        h = self.stem(x)
        for blk in self.blocks:
            h = blk(h)
        return self.head(h.mean(dim=1))


def normalize(window):
    # per-channel z-score, as done by the acquisition front end
    mu = window.mean(dim=0, keepdim=True)
    sd = window.std(dim=0, keepdim=True).clamp_min(1e-6)
    return (window - mu) / sd


def request_stream(n_requests, n_channels, fs, seed):
    g = torch.Generator().manual_seed(seed)
    for i in range(n_requests):
        seconds = 0.5 + 1.5 * torch.rand((), generator=g).item()   # 0.5 s .. 2 s windows
        n = int(seconds * fs)
        yield i, torch.randn(n, n_channels, generator=g)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--channels", type=int, default=64)
    p.add_argument("--fs", type=int, default=256, help="sampling rate (Hz)")
    p.add_argument("--warmup-ms", type=int, default=250)
    p.add_argument("--requests", type=int, default=12)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    model = EEGEventTagger(n_channels=args.channels).eval()
    log.info("torch %s, model params %.2fM", torch.__version__,
             sum(p.numel() for p in model.parameters()) / 1e6)

    compiled = torch.compile(model, dynamic=True)

    # warm-up: one short dummy window so the compile happens before we accept traffic
    warm_len = int(math.ceil(args.warmup_ms * args.fs / 1000))
    t0 = time.perf_counter()
    with torch.inference_mode():
        compiled(normalize(torch.randn(warm_len, args.channels)).unsqueeze(0))
    log.info("warm-up done: window %d samples, %.1f s", warm_len, time.perf_counter() - t0)

    # from here on, a compile in the request path is a bug
    torch.compiler.set_stance("fail_on_recompile")

    lat = []
    with torch.inference_mode():
        for i, win in request_stream(args.requests, args.channels, args.fs, args.seed):
            t0 = time.perf_counter()
            logits = compiled(normalize(win).unsqueeze(0))
            dt = (time.perf_counter() - t0) * 1e3
            lat.append(dt)
            top = EVENT_NAMES[int(logits.argmax(-1))]
            log.info("req %02d len=%4d -> %-15s %.2f ms", i, win.shape[0], top, dt)

    lat.sort()
    log.info("served %d requests, p50 %.2f ms, max %.2f ms", len(lat), lat[len(lat) // 2], lat[-1])


if __name__ == "__main__":
    main()
