"""Smoke test for the sequence-parallel MoE decoder block.

Emulates `--world` sequence-parallel ranks inside one process: tokens are chunked with
sp::chunk_tokens, each chunk goes through the expert MLP, and sp::gather_tokens restores
the original token order. Output must match the non-parallel reference block.
"""
import argparse
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import sp_ops  # noqa: F401  (registers torch.ops.sp.*)

log = logging.getLogger("sp_infer")


class Expert(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.w_in = nn.Linear(d, 2 * hidden, bias=False)
        self.w_out = nn.Linear(hidden, d, bias=False)

    def forward(self, x):
        gate, up = self.w_in(x).chunk(2, dim=-1)
        return self.w_out(F.silu(gate) * up)


class SPMoEBlock(nn.Module):
    def __init__(self, d=128, hidden=256, n_experts=4, top_k=2, world=2):
        super().__init__()
        self.world = world
        self.top_k = top_k
        self.norm = nn.RMSNorm(d)
        self.router = nn.Linear(d, n_experts, bias=False)
        self.experts = nn.ModuleList(Expert(d, hidden) for _ in range(n_experts))

    def moe(self, h):
        probs = F.softmax(self.router(h), dim=-1)
        weights, idx = probs.topk(self.top_k, dim=-1)
        weights = weights / weights.sum(-1, keepdim=True)
        out = torch.zeros_like(h)
        for e, expert in enumerate(self.experts):
            w = (weights * (idx == e)).sum(-1, keepdim=True)  # dense dispatch: fine for a smoke test
            out = out + w * expert(h)
        return out

    def forward(self, x, sequence_parallel=True):
        h = self.norm(x)
        if sequence_parallel:
            n = h.size(0)
            parts = [self.moe(torch.ops.sp.chunk_tokens(h, r, self.world)) for r in range(self.world)]
            y = torch.ops.sp.gather_tokens(parts, n)
        else:
            y = self.moe(h)
        return x + y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--world", type=int, default=2)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--requests", type=str, default="64,37,128,90", help="comma-separated token counts")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--atol", type=float, default=1e-4)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(0)
    block = SPMoEBlock(d=args.dim, world=args.world).eval()
    run = block if args.no_compile else torch.compile(block, dynamic=True)

    worst = 0.0
    with torch.inference_mode():
        for n in (int(t) for t in args.requests.split(",")):
            x = torch.randn(n, args.dim)
            ref = block(x, sequence_parallel=False)
            t0 = time.perf_counter()
            out = run(x)
            dt = (time.perf_counter() - t0) * 1e3
            err = (out - ref).abs().max().item()
            worst = max(worst, err)
            log.info("tokens=%4d  world=%d  max_err=%.2e  latency=%.1f ms", n, args.world, err, dt)
    if worst > args.atol:
        raise SystemExit(f"sequence-parallel output mismatch: {worst:.3e} > {args.atol}")
    log.info("OK: sequence-parallel block matches reference (worst err %.2e)", worst)


if __name__ == "__main__":
    main()
