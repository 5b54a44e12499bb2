"""CI gate: the compiled fp16 inference path must match eager before we ship the compiled server."""
import argparse
import logging
import sys

import torch
import torch.nn as nn

logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
log = logging.getLogger("compile_gate")


class EncoderBlock(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        b, t, d = x.shape
        h = self.ln1(x)
        q, k, v = self.qkv(h).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        att = torch.softmax(q @ k.transpose(-1, -2) * (d // self.heads) ** -0.5, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.mlp(self.ln2(x))


class Encoder(nn.Module):
    def __init__(self, vocab, dim, heads, depth, n_cls):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(EncoderBlock(dim, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, n_cls)

    def forward(self, ids):
        x = self.emb(ids)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x).mean(dim=1)), x


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--dtype", default="float16", choices=["float16", "float32"])
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=32)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--depth", type=int, default=4)
    p.add_argument("--seed", type=int, default=1234)
    return p.parse_args()


def main():
    args = parse_args()
    dtype = getattr(torch, args.dtype)
    torch.manual_seed(args.seed)
    model = Encoder(vocab=1000, dim=args.dim, heads=4, depth=args.depth, n_cls=5).to(dtype).eval()
    ids = torch.randint(0, 1000, (args.batch, args.seq))

    compiled = torch.compile(model)
    with torch.inference_mode():
        ref_logits, ref_hidden = model(ids)
        out_logits, out_hidden = compiled(ids)

    failures = 0
    for name, ref, out in [("logits", ref_logits, out_logits), ("hidden", ref_hidden, out_hidden)]:
        diff = (out.float() - ref.float()).abs().max().item()
        try:
            torch.testing.assert_close(out, ref)
            log.info("PASS %-6s dtype=%s max_abs_diff=%.3g", name, args.dtype, diff)
        except AssertionError as e:
            failures += 1
            log.error("FAIL %-6s dtype=%s max_abs_diff=%.3g\n%s", name, args.dtype, diff, e)
    if failures:
        log.error("compile parity gate: %d check(s) failed", failures)
        sys.exit(1)
    log.info("compile parity gate: OK")


if __name__ == "__main__":
    main()
