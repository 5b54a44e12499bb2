#!/usr/bin/env python
"""CI gate: torch.compile(fullgraph=True) must match eager for every block config we ship.

Runs on every PR that touches models/. Each config builds the block, compiles it,
and compares outputs and input-gradients against eager within tolerance.
Exit code 1 if any config fails.
"""
import argparse
import json
import logging
import math
import sys
import time
from dataclasses import dataclass, asdict

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("parity_gate")


@dataclass
class BlockConfig:
    name: str
    dim: int
    heads: int
    mlp_ratio: int = 4
    causal: bool = True


SHIPPED_CONFIGS = [
    BlockConfig("tiny-h1", 64, 1),
    BlockConfig("tiny-h2", 64, 2),
    BlockConfig("tiny-h4", 64, 4),
    BlockConfig("tiny-h8", 64, 8),
    BlockConfig("small-h2", 96, 2),
    BlockConfig("small-h3", 96, 3),
    BlockConfig("small-h4", 96, 4),
    BlockConfig("small-h6", 96, 6),
    BlockConfig("small-enc", 96, 4, causal=False),
    BlockConfig("base-h4", 128, 4),
    BlockConfig("base-h8", 128, 8),
    BlockConfig("base-mlp2", 128, 8, mlp_ratio=2),
]


class Block(nn.Module):
    def __init__(self, cfg: BlockConfig):
        super().__init__()
        self.heads = cfg.heads
        self.causal = cfg.causal
        self.norm1 = nn.LayerNorm(cfg.dim)
        self.qkv = nn.Linear(cfg.dim, 3 * cfg.dim)
        self.proj = nn.Linear(cfg.dim, cfg.dim)
        self.norm2 = nn.LayerNorm(cfg.dim)
        self.fc1 = nn.Linear(cfg.dim, cfg.mlp_ratio * cfg.dim)
        self.fc2 = nn.Linear(cfg.mlp_ratio * cfg.dim, cfg.dim)

    def forward(self, x):
        B, T, D = x.shape
        h = self.norm1(x)
        q, k, v = self.qkv(h).view(B, T, 3, self.heads, D // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
        x = x + self.proj(a.transpose(1, 2).reshape(B, T, D))
        x = x + self.fc2(F.gelu(self.fc1(self.norm2(x))))
        return x


def check_config(cfg, args):
    torch.manual_seed(args.seed)
    model = Block(cfg).eval()
    compiled = torch.compile(model, fullgraph=True)

    x = torch.randn(args.batch, args.seq, cfg.dim, requires_grad=True)
    x_c = x.detach().clone().requires_grad_(True)

    ref = model(x)
    ref.square().mean().backward()
    out = compiled(x_c)
    out.square().mean().backward()

    fwd_err = (ref - out).abs().max().item()
    bwd_err = (x.grad - x_c.grad).abs().max().item()
    ok = math.isclose(fwd_err, 0.0, abs_tol=args.atol) and math.isclose(bwd_err, 0.0, abs_tol=args.atol)
    return ok, fwd_err, bwd_err


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--seq", type=int, default=32)
    p.add_argument("--atol", type=float, default=1e-4)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--only", default=None, help="comma-separated config names")
    p.add_argument("--report", default=None, help="write JSON summary here")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")

    configs = SHIPPED_CONFIGS
    if args.only:
        wanted = set(args.only.split(","))
        configs = [c for c in configs if c.name in wanted]

    results = []
    for cfg in configs:
        t0 = time.perf_counter()
        try:
            ok, fwd_err, bwd_err = check_config(cfg, args)
            status = "PASS" if ok else "FAIL"
            detail = f"fwd_err={fwd_err:.2e} bwd_err={bwd_err:.2e}"
        except Exception as e:  # report and keep going so CI shows every failing config
            status, detail = "ERROR", f"{type(e).__name__}: {str(e).splitlines()[0]}"
        dt = time.perf_counter() - t0
        log.info("%-10s %-5s %s (%.1fs)", cfg.name, status, detail, dt)
        results.append({**asdict(cfg), "status": status, "detail": detail, "seconds": round(dt, 2)})

    n_bad = sum(r["status"] != "PASS" for r in results)
    log.info("%d/%d configs passed", len(results) - n_bad, len(results))
    if args.report:
        with open(args.report, "w") as f:
            json.dump(results, f, indent=2)
    sys.exit(1 if n_bad else 0)


if __name__ == "__main__":
    main()
