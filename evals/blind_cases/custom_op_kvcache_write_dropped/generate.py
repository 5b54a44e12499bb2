import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from kv_ops import kv_write


class Attention(nn.Module):
    def __init__(self, dim, heads, max_len, batch):
        super().__init__()
        self.h, self.d = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim, bias=False)
        self.register_buffer("k_cache", torch.zeros(batch, heads, max_len, self.d), persistent=False)
        self.register_buffer("v_cache", torch.zeros(batch, heads, max_len, self.d), persistent=False)

    def forward(self, x, pos, mask):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.h, self.d).permute(2, 0, 3, 1, 4)
        kv_write(self.k_cache, self.v_cache, k, v, pos)
        y = F.scaled_dot_product_attention(q, self.k_cache, self.v_cache, attn_mask=mask)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    def __init__(self, dim, heads, max_len, batch):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = Attention(dim, heads, max_len, batch)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x, pos, mask):
        x = x + self.attn(self.ln1(x), pos, mask)
        return x + self.mlp(self.ln2(x))


class TinyLM(nn.Module):
    def __init__(self, vocab=512, dim=128, heads=4, layers=2, max_len=64, batch=4):
        super().__init__()
        self.max_len = max_len
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.blocks = nn.ModuleList(Block(dim, heads, max_len, batch) for _ in range(layers))
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, idx, pos):
        # pos: absolute positions of the tokens in idx, shape [T]
        mask = torch.arange(self.max_len)[None, :] <= pos[:, None]
        x = self.tok(idx) + self.pos(pos)
        for blk in self.blocks:
            x = blk(x, pos, mask)
        return self.head(self.ln(x))


@torch.no_grad()
def generate(model, step_fn, prompt, new_tokens):
    for blk in model.blocks:
        blk.attn.k_cache.zero_()
        blk.attn.v_cache.zero_()
    T = prompt.shape[1]
    logits = step_fn(prompt, torch.arange(T))
    out = [logits[:, -1].argmax(-1)]
    for t in range(T, T + new_tokens - 1):
        logits = step_fn(out[-1][:, None], torch.tensor([t]))
        out.append(logits[:, -1].argmax(-1))
    return torch.stack(out, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompt-len", type=int, default=8)
    ap.add_argument("--new-tokens", type=int, default=24)
    args = ap.parse_args()

    torch.manual_seed(0)
    model = TinyLM().eval()
    prompt = torch.randint(0, 512, (4, args.prompt_len))

    t0 = time.perf_counter()
    ref = generate(model, model, prompt, args.new_tokens)
    print(f"eager    {time.perf_counter() - t0:.2f}s  {ref[0, :12].tolist()}")

    compiled = torch.compile(model)
    for i in range(2):
        t0 = time.perf_counter()
        got = generate(model, compiled, prompt, args.new_tokens)
        print(f"compiled {time.perf_counter() - t0:.2f}s  {got[0, :12].tolist()}")

    agree = (ref == got).float().mean().item()
    print(f"token agreement eager vs compiled: {agree:.1%}")
    if agree < 1.0:
        raise SystemExit("compiled generation diverged from eager")


if __name__ == "__main__":
    main()
