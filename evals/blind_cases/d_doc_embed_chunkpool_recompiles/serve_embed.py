"""Document embedding service (CPU). Replays a recorded request trace and reports latency.

    python serve_embed.py              # compiled (production setting)
    python serve_embed.py --no-compile # eager baseline
"""
import argparse
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from chunk_ops import chunk_mean_pool

CHUNK = 32


class DocEncoder(nn.Module):
    def __init__(self, vocab=4096, dim=128, heads=4, layers=2, max_len=512, out_dim=64):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, dim * 2, dropout=0.0, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.proj = nn.Linear(dim, out_dim)

    def forward(self, ids, mask):
        # ids, mask: [T] for a single document
        T = ids.shape[0]
        pos = torch.arange(T, device=ids.device)
        h = self.tok(ids) + self.pos(pos)
        h = self.encoder(h[None], src_key_padding_mask=(mask[None] == 0))[0]
        h = self.norm(h)
        chunks = chunk_mean_pool(h, mask.to(h.dtype), CHUNK)
        return F.normalize(self.proj(chunks), dim=-1)


def make_trace(n_requests, seed=0):
    g = torch.Generator().manual_seed(seed)
    trace = []
    for _ in range(n_requests):
        T = int(torch.randint(40, 480, (1,), generator=g))
        ids = torch.randint(1, 4096, (T,), generator=g)
        mask = torch.ones(T)
        # trailing boilerplate (signatures, footers) is masked out by the tokenizer stage
        tail = int(torch.randint(0, 8, (1,), generator=g))
        if tail:
            mask[-tail:] = 0
        trace.append((ids, mask))
    return trace


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--requests", type=int, default=60)
    args = ap.parse_args()

    torch.manual_seed(0)
    model = DocEncoder().eval()
    runner = model if args.no_compile else torch.compile(model, dynamic=True)
    trace = make_trace(args.requests)

    lat = []
    checksum = 0.0
    t_start = time.perf_counter()
    with torch.inference_mode():
        for i, (ids, mask) in enumerate(trace):
            t0 = time.perf_counter()
            emb = runner(ids, mask)
            dt = time.perf_counter() - t0
            lat.append(dt * 1000)
            checksum += emb.sum().item()
            if i % 10 == 0:
                print(f"req {i:3d}: tokens={ids.shape[0]:3d} chunks={emb.shape[0]:2d} {dt * 1000:8.1f} ms", flush=True)
    total = time.perf_counter() - t_start

    steady = lat[len(lat) // 2:]
    print(f"mode={'eager' if args.no_compile else 'compiled'} requests={len(lat)} total={total:.1f}s "
          f"p50(2nd half)={statistics.median(steady):.1f}ms max(2nd half)={max(steady):.1f}ms checksum={checksum:.4f}")


if __name__ == "__main__":
    main()
