import argparse
import math
import time
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._dynamo.utils import counters

from tensor_checks import checked


@dataclass
class TSTConfig:
    n_channels: int = 6
    seq_len: int = 96
    patch_len: int = 8
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    ff_mult: int = 2
    n_classes: int = 5
    dropout: float = 0.0


@checked
def patchify(x: torch.Tensor, patch_len: int) -> torch.Tensor:
    b, c, t = x.shape
    x = x.reshape(b, c, t // patch_len, patch_len)
    return x.permute(0, 2, 1, 3).reshape(b, t // patch_len, c * patch_len)


@checked
def scaled_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, n_heads: int) -> torch.Tensor:
    b, n, d = q.shape
    hd = d // n_heads
    q = q.view(b, n, n_heads, hd).transpose(1, 2)
    k = k.view(b, n, n_heads, hd).transpose(1, 2)
    v = v.view(b, n, n_heads, hd).transpose(1, 2)
    att = (q @ k.transpose(-2, -1)) / math.sqrt(hd)
    out = att.softmax(-1) @ v
    return out.transpose(1, 2).reshape(b, n, d)


@checked
def gated_ff(x: torch.Tensor, w_in: torch.Tensor, w_out: torch.Tensor) -> torch.Tensor:
    a, g = F.linear(x, w_in).chunk(2, dim=-1)
    return F.linear(a * F.silu(g), w_out)


class Block(nn.Module):
    def __init__(self, cfg: TSTConfig):
        super().__init__()
        d = cfg.d_model
        self.n_heads = cfg.n_heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.w_in = nn.Parameter(torch.randn(2 * cfg.ff_mult * d, d) / math.sqrt(d))
        self.w_out = nn.Parameter(torch.randn(d, cfg.ff_mult * d) / math.sqrt(cfg.ff_mult * d))
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x):
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        x = x + self.drop(self.proj(scaled_attention(q, k, v, self.n_heads)))
        x = x + self.drop(gated_ff(self.ln2(x), self.w_in, self.w_out))
        return x


class PatchTSTClassifier(nn.Module):
    def __init__(self, cfg: TSTConfig):
        super().__init__()
        self.cfg = cfg
        n_patches = cfg.seq_len // cfg.patch_len
        self.embed = nn.Linear(cfg.n_channels * cfg.patch_len, cfg.d_model)
        self.pos = nn.Parameter(torch.zeros(1, n_patches, cfg.d_model))
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.norm = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.n_classes)

    def forward(self, x):
        x = (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + 1e-5)
        h = self.embed(patchify(x, self.cfg.patch_len)) + self.pos
        for blk in self.blocks:
            h = blk(h)
        return self.head(self.norm(h).mean(1))


def synthetic_batches(cfg, n_batches, batch_size, seed=0):
    g = torch.Generator().manual_seed(seed)
    t = torch.linspace(0, 8 * math.pi, cfg.seq_len)
    for _ in range(n_batches):
        y = torch.randint(0, cfg.n_classes, (batch_size,), generator=g)
        freq = (y.float() + 1).view(-1, 1, 1) * 0.5
        x = torch.sin(freq * t) + 0.3 * torch.randn(batch_size, cfg.n_channels, cfg.seq_len, generator=g)
        yield x, y


def train(model, cfg, steps, batch_size, label):
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    times = []
    for i, (x, y) in enumerate(synthetic_batches(cfg, steps, batch_size)):
        t0 = time.perf_counter()
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
        if i % 10 == 0:
            print(f"[{label}] step {i:3d} loss {loss.item():.4f} step_ms {1000 * times[-1]:.1f}")
    steady = sorted(times[5:])[len(times[5:]) // 2]
    print(f"[{label}] first step {times[0]:.1f}s, median steady step {1000 * steady:.2f} ms")
    return steady


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--batch-size", type=int, default=32)
    args = ap.parse_args()
    torch.manual_seed(0)
    cfg = TSTConfig()

    eager_model = PatchTSTClassifier(cfg)
    compiled_src = PatchTSTClassifier(cfg)
    compiled_src.load_state_dict(eager_model.state_dict())

    eager_ms = train(eager_model, cfg, args.steps, args.batch_size, "eager")
    counters.clear()
    compiled = torch.compile(compiled_src)
    comp_ms = train(compiled, cfg, args.steps, args.batch_size, "compiled")

    print(f"speedup (eager/compiled steady step): {eager_ms / comp_ms:.2f}x")
    print("dynamo unique graphs:", counters["stats"]["unique_graphs"],
          "graph breaks:", sum(counters["graph_break"].values()))


if __name__ == "__main__":
    main()
