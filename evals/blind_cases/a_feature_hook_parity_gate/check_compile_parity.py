"""CI gate: the compiled student must match eager on logits *and* on the
intermediate features the distillation loss consumes.

Exit code 0 = pass, 1 = fail.
"""
import argparse
import logging
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

from featcap import FeatureCapture

logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
log = logging.getLogger("parity")


class Block(nn.Module):
    def __init__(self, dim, heads, mlp_ratio=2):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, mlp_ratio * dim), nn.GELU(), nn.Linear(mlp_ratio * dim, dim))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class PatchStudent(nn.Module):
    """Small ViT-style student."""

    def __init__(self, img=32, patch=8, dim=64, depth=3, heads=4, num_classes=10):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, patch, stride=patch)
        n = (img // patch) ** 2
        self.pos = nn.Parameter(torch.randn(1, n, dim) * 0.02)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2) + self.pos
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x).mean(1))


def compare(name, ref, got, atol, rtol):
    try:
        torch.testing.assert_close(got, ref, atol=atol, rtol=rtol)
        log.info("  %-22s OK   max_abs=%.2e", name, (got - ref).abs().max().item())
        return True
    except AssertionError as e:
        log.error("  %-22s FAIL %s", name, str(e).splitlines()[0])
        return False


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[8, 16])
    p.add_argument("--atol", type=float, default=1e-4)
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--backend", default="inductor")
    p.add_argument("--fullgraph", action="store_true")
    args = p.parse_args()

    torch.manual_seed(0)
    model = PatchStudent().eval()
    layers = ["blocks.0", "blocks.1", "blocks.2", "norm"]
    cap = FeatureCapture(model, layers)
    compiled = torch.compile(model, backend=args.backend, fullgraph=args.fullgraph)

    ok = True
    for bs in args.batch_sizes:
        x = torch.randn(bs, 3, 32, 32)
        log.info("batch %d", bs)
        with torch.no_grad():
            with cap.capture() as feats:
                ref_logits = model(x)
                ref_feats = dict(feats)
            with cap.capture() as feats:
                got_logits = compiled(x)
                got_feats = dict(feats)
        ok &= compare("logits", ref_logits, got_logits, args.atol, args.rtol)
        ok &= compare("probs", F.softmax(ref_logits, -1), F.softmax(got_logits, -1), args.atol, args.rtol)
        for name in layers:
            if name not in got_feats:
                log.error("  %-22s FAIL feature not captured in compiled run (captured: %s)",
                          "feat:" + name, sorted(got_feats))
                ok = False
                continue
            ok &= compare("feat:" + name, ref_feats[name], got_feats[name], args.atol, args.rtol)

    log.info("compile parity: %s", "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
