"""Merge LoRA deltas into a base model's weights before sampling.

Usage:
    python patch_lora.py --layers 12 --rank 8 --strength 0.8 --compile
"""
import argparse
import logging
import time

import torch
import torch.nn as nn

log = logging.getLogger("patch_lora")


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.to_q = nn.Linear(dim, dim)
        self.to_k = nn.Linear(dim, dim)
        self.to_v = nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        h = self.norm(x)
        q, k, v = self.to_q(h), self.to_k(h), self.to_v(h)
        a = torch.softmax(q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5, dim=-1) @ v
        x = x + self.proj(a)
        return x + self.ff(x)


class TinyDiT(nn.Module):
    def __init__(self, dim, layers):
        super().__init__()
        self.blocks = nn.ModuleList(Block(dim) for _ in range(layers))
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.out(x)


class LoraPatch:
    """One LoRA delta for one weight: W + strength * (up @ down) * alpha / rank."""

    def __init__(self, down, up, alpha, strength):
        self.down = down
        self.up = up
        self.alpha = alpha
        self.strength = strength


class ModelPatcher:
    def __init__(self, model, compile_patches=False):
        self.model = model
        self.patches = {}
        self.backup = {}
        self.compile_patches = compile_patches

    def add_patches(self, lora_sd, strength):
        params = dict(self.model.named_parameters())
        for key, (down, up, alpha) in lora_sd.items():
            if key not in params:
                log.warning("skipping unknown key %s", key)
                continue
            self.patches[key] = LoraPatch(down, up, alpha, strength)
        log.info("registered %d lora patches", len(self.patches))
        if self.compile_patches:
            self.calculate_weight = torch.compile(self.calculate_weight)

    def calculate_weight(self, weight, key):
        patch = self.patches[key]
        rank = patch.down.shape[0]
        delta = (patch.up.float() @ patch.down.float()) * (patch.alpha / rank)
        return (weight.float() + patch.strength * delta).to(weight.dtype)

    @torch.no_grad()
    def patch_model(self):
        params = dict(self.model.named_parameters())
        for key in self.patches:
            w = params[key]
            self.backup[key] = w.detach().clone()
            w.copy_(self.calculate_weight(w, key))

    @torch.no_grad()
    def unpatch_model(self):
        params = dict(self.model.named_parameters())
        for key, w in self.backup.items():
            params[key].copy_(w)
        self.backup.clear()


def make_lora(model, rank, generator):
    sd = {}
    for name, p in model.named_parameters():
        if name.endswith(("to_q.weight", "to_k.weight", "to_v.weight")):
            out_f, in_f = p.shape
            down = torch.randn(rank, in_f, generator=generator) * 0.01
            up = torch.randn(out_f, rank, generator=generator) * 0.01
            sd[name] = (down, up, float(rank))
    return sd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--rank", type=int, default=8)
    ap.add_argument("--strength", type=float, default=0.8)
    ap.add_argument("--rounds", type=int, default=3, help="patch/unpatch cycles (one per prompt batch)")
    ap.add_argument("--compile", action="store_true")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    model = TinyDiT(args.dim, args.layers).eval()
    patcher = ModelPatcher(model, compile_patches=args.compile)
    patcher.add_patches(make_lora(model, args.rank, g), args.strength)

    x = torch.randn(2, 64, args.dim)
    with torch.no_grad():
        ref = model(x)
    for r in range(args.rounds):
        t0 = time.perf_counter()
        patcher.patch_model()
        t_patch = time.perf_counter() - t0
        with torch.no_grad():
            y = model(x)
        patcher.unpatch_model()
        log.info("round %d: patch %.3fs, output delta vs base %.4f", r, t_patch, (y - ref).abs().mean().item())


if __name__ == "__main__":
    main()
