"""CI job for the batch tagging service: compile check + eager/compiled replay.

The tagger is served with torch.compile(fullgraph=True) so that anything that
introduces a graph break is caught here rather than as a silent slowdown in prod.
Replays a fixed set of request batches through eager and compiled models, checks
that the tag scores agree and reports p50 latency.
"""
import contextlib
import contextvars
import math
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# ---------------------------------------------------------------------------
# telemetry: which part of the model is currently running (used by the error
# reporter and the slow-request logger of the service)
# ---------------------------------------------------------------------------
_CURRENT_SPAN = contextvars.ContextVar("current_span", default="tagger")


@contextlib.contextmanager
def span(name):
    token = _CURRENT_SPAN.set(name)
    try:
        yield
    finally:
        _CURRENT_SPAN.reset(token)


def current_span():
    return _CURRENT_SPAN.get()


# ---------------------------------------------------------------------------
# model
# ---------------------------------------------------------------------------
class RotaryCache(nn.Module):
    def __init__(self, head_dim, max_len=512):
        super().__init__()
        inv = 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim))
        t = torch.arange(max_len).float()
        freqs = torch.outer(t, inv)
        self.register_buffer("cos", freqs.cos(), persistent=False)
        self.register_buffer("sin", freqs.sin(), persistent=False)

    def forward(self, x):
        # x: (B, H, T, D)
        T = x.shape[2]
        cos, sin = self.cos[:T], self.sin[:T]
        x1, x2 = x[..., 0::2], x[..., 1::2]
        out = torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)
        return out.flatten(-2)


class EncoderBlock(nn.Module):
    def __init__(self, d_model, n_heads, ff_mult, name):
        super().__init__()
        self.name = name
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.norm1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.ff_in = nn.Linear(d_model, 2 * ff_mult * d_model)
        self.ff_out = nn.Linear(ff_mult * d_model, d_model)
        self.rope = RotaryCache(self.head_dim)

    def forward(self, x, pad_mask):
        with span(self.name):
            B, T, C = x.shape
            h = self.norm1(x)
            q, k, v = self.qkv(h).view(B, T, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
            q, k = self.rope(q), self.rope(k)
            attn_mask = pad_mask[:, None, None, :]
            a = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
            x = x + self.proj(a.transpose(1, 2).reshape(B, T, C))
            g, u = self.ff_in(self.norm2(x)).chunk(2, dim=-1)
            x = x + self.ff_out(F.silu(g) * u)
        return x


class Tagger(nn.Module):
    def __init__(self, vocab=8000, d_model=192, n_heads=6, n_layers=4, ff_mult=2, n_tags=24):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model, padding_idx=0)
        self.blocks = nn.ModuleList(
            [EncoderBlock(d_model, n_heads, ff_mult, f"encoder.{i}") for i in range(n_layers)]
        )
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, n_tags)

    def forward(self, input_ids):
        pad_mask = input_ids != 0
        x = self.embed(input_ids) * math.sqrt(self.embed.embedding_dim)
        for blk in self.blocks:
            x = blk(x, pad_mask)
        with span("head"):
            x = self.norm(x)
            m = pad_mask.unsqueeze(-1).to(x.dtype)
            pooled = (x * m).sum(1) / m.sum(1).clamp_min(1.0)
            return torch.sigmoid(self.head(pooled))


# ---------------------------------------------------------------------------
# replay
# ---------------------------------------------------------------------------
BUCKET = 128


def make_batches(n_batches, batch_size, seed=0):
    g = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(n_batches):
        ids = torch.zeros(batch_size, BUCKET, dtype=torch.long)
        lens = torch.randint(24, BUCKET + 1, (batch_size,), generator=g)
        for i, L in enumerate(lens.tolist()):
            ids[i, :L] = torch.randint(1, 8000, (L,), generator=g)
        batches.append(ids)
    return batches


def serve(model, batches, warmup=3):
    lat = []
    with torch.inference_mode():
        for ids in batches[:warmup]:
            model(ids)
        for ids in batches[warmup:]:
            t0 = time.perf_counter()
            try:
                out = model(ids)
            except Exception:
                print(f"request failed in span {current_span()}", file=sys.stderr)
                raise
            lat.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(lat), out


def main():
    torch.manual_seed(0)
    model = Tagger().eval()
    batches = make_batches(n_batches=13, batch_size=16)

    t0 = time.perf_counter()
    compiled = torch.compile(model, fullgraph=True)
    with torch.inference_mode():
        compiled(batches[0])
    compile_s = time.perf_counter() - t0

    p50_eager, out_e = serve(model, batches)
    p50_comp, out_c = serve(compiled, batches)
    max_diff = (out_e - out_c).abs().max().item()
    speedup = p50_eager / p50_comp

    print(f"torch {torch.__version__}, threads={torch.get_num_threads()}")
    print(f"first compiled call: {compile_s:.1f}s")
    print(f"p50 eager    : {p50_eager:7.2f} ms/batch")
    print(f"p50 compiled : {p50_comp:7.2f} ms/batch")
    print(f"speedup      : {speedup:.2f}x   (max |diff| = {max_diff:.2e})")
    if max_diff > 1e-4:
        print("CHECK FAILED: compiled scores differ from eager")
        sys.exit(1)
    print("CHECK OK")


if __name__ == "__main__":
    main()
