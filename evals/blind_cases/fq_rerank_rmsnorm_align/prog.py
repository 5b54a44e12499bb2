"""Package the passage re-ranker for the CPU serving tier (AOTInductor).

Loads the re-ranker (pre-norm transformer encoder, rotary attention, SwiGLU
MLP, RMSNorm), exports it with dynamic batch / sequence length, compiles it
into a .pt2 package, reloads the package and checks it against eager before
the artifact is uploaded.
"""
import argparse
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB = 8000
D_MODEL = 256
N_HEADS = 4
N_LAYERS = 4
FFN_MULT = 4
MAX_LEN = 256
BATCH = 8
SEQ_LEN = 192
N_BATCHES = 12


# ---------------------------------------------------------------------------
# norm layer (shared with the GPU build, which dispatches to a fused kernel)
# ---------------------------------------------------------------------------
def _maybe_align(x: torch.Tensor, alignment_in_bytes: int = 16) -> torch.Tensor:
    # the fused kernel reads 16-byte vectors
    return x if x.data_ptr() % alignment_in_bytes == 0 else x.clone()


def _rms_norm_ref(x, weight, eps):
    dtype = x.dtype
    x = x.float()
    x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return (x * weight.float()).to(dtype)


class FusedRMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        x = _maybe_align(x.contiguous())
        if x.is_cuda and _fused_rms_norm is not None:
            return _fused_rms_norm(x, self.weight, self.eps)
        return _rms_norm_ref(x, self.weight, self.eps)


_fused_rms_norm = None  # filled in by the GPU build


# ---------------------------------------------------------------------------
# model
# ---------------------------------------------------------------------------
def rotary_tables(seq_len, head_dim, base=10000.0):
    inv = 1.0 / (base ** (torch.arange(0, head_dim, 2).float() / head_dim))
    t = torch.arange(seq_len).float()
    freqs = torch.outer(t, inv)
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


class Attention(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.out = nn.Linear(d, d, bias=False)

    def forward(self, x, cos, sin, mask):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.out(o.transpose(1, 2).reshape(b, t, d))


class SwiGLU(nn.Module):
    def __init__(self, d, mult):
        super().__init__()
        hidden = int(2 * mult * d / 3)
        self.w12 = nn.Linear(d, 2 * hidden, bias=False)
        self.w3 = nn.Linear(hidden, d, bias=False)

    def forward(self, x):
        a, b = self.w12(x).chunk(2, dim=-1)
        return self.w3(F.silu(a) * b)


class Block(nn.Module):
    def __init__(self, d, h, mult):
        super().__init__()
        self.norm1 = FusedRMSNorm(d)
        self.attn = Attention(d, h)
        self.norm2 = FusedRMSNorm(d)
        self.mlp = SwiGLU(d, mult)

    def forward(self, x, cos, sin, mask):
        x = x + self.attn(self.norm1(x), cos, sin, mask)
        x = x + self.mlp(self.norm2(x))
        return x


class ReRanker(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D_MODEL)
        self.blocks = nn.ModuleList([Block(D_MODEL, N_HEADS, FFN_MULT) for _ in range(N_LAYERS)])
        self.norm = FusedRMSNorm(D_MODEL)
        self.score = nn.Linear(D_MODEL, 1)
        cos, sin = rotary_tables(MAX_LEN, D_MODEL // N_HEADS)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, input_ids, attention_mask):
        t = input_ids.shape[1]
        cos, sin = self.cos[:t], self.sin[:t]
        mask = attention_mask[:, None, None, :].bool()
        x = self.embed(input_ids)
        for blk in self.blocks:
            x = blk(x, cos, sin, mask)
        x = self.norm(x)
        m = attention_mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * m).sum(1) / m.sum(1).clamp_min(1.0)
        return self.score(pooled).squeeze(-1)


# ---------------------------------------------------------------------------
# packaging
# ---------------------------------------------------------------------------
def load_reranker(ckpt):
    model = ReRanker()
    if ckpt and os.path.exists(ckpt):
        model.load_state_dict(torch.load(ckpt, map_location="cpu"))
    else:
        print(f"[package] no checkpoint at {ckpt!r}, using seed-0 weights (smoke build)")
    return model.eval()


def make_batch(bsz, seq, g):
    ids = torch.randint(1, VOCAB, (bsz, seq), generator=g)
    lens = torch.randint(max(1, seq // 2), seq + 1, (bsz,), generator=g)
    am = (torch.arange(seq)[None, :] < lens[:, None]).long()
    return ids * am, am


def export_reranker(model):
    g = torch.Generator().manual_seed(1)
    example = make_batch(BATCH, SEQ_LEN, g)
    batch = torch.export.Dim("batch", min=1, max=64)
    seq = torch.export.Dim("seq", min=8, max=MAX_LEN)
    dynamic_shapes = {
        "input_ids": {0: batch, 1: seq},
        "attention_mask": {0: batch, 1: seq},
    }
    with torch.no_grad():
        return torch.export.export(model, example, dynamic_shapes=dynamic_shapes)


def check_package(model, runner, n=6):
    g = torch.Generator().manual_seed(7)
    worst = 0.0
    t_eager = t_pkg = 0.0
    with torch.no_grad():
        for i in range(n):
            bsz, seq = [(1, 40), (8, 192), (3, 77), (16, 128), (8, 256), (2, 9)][i % 6]
            ids, am = make_batch(bsz, seq, g)
            t0 = time.perf_counter()
            ref = model(ids, am)
            t1 = time.perf_counter()
            out = runner(ids, am)
            t2 = time.perf_counter()
            t_eager += t1 - t0
            t_pkg += t2 - t1
            worst = max(worst, (ref - out).abs().max().item())
    return worst, t_eager / n * 1e3, t_pkg / n * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default="checkpoints/reranker_v7.pt")
    ap.add_argument("--out", default="/tmp/reranker_cpu.pt2")
    ap.add_argument("--tol", type=float, default=1e-4)
    args = ap.parse_args()

    print(f"[package] torch {torch.__version__}")
    model = load_reranker(args.ckpt)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"[package] re-ranker: {N_LAYERS} layers, d={D_MODEL}, {n_params / 1e6:.1f}M params")

    t0 = time.perf_counter()
    ep = export_reranker(model)
    print(f"[package] export ok ({time.perf_counter() - t0:.1f}s)")

    t0 = time.perf_counter()
    path = torch._inductor.aoti_compile_and_package(ep, package_path=args.out)
    print(f"[package] AOTInductor package written to {path} ({time.perf_counter() - t0:.1f}s)")

    runner = torch._inductor.aoti_load_package(path)
    worst, ms_eager, ms_pkg = check_package(model, runner)
    print(f"[package] parity: max|pkg - eager| = {worst:.2e} (tol {args.tol:g})")
    print(f"[package] latency: eager {ms_eager:.1f} ms/batch, package {ms_pkg:.1f} ms/batch")
    if worst > args.tol:
        print("[package] FAILED parity gate")
        sys.exit(1)
    print("[package] OK")


if __name__ == "__main__":
    main()
