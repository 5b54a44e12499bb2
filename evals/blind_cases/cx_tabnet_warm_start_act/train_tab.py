"""Tabular residual-MLP trainer (churn-style binary target) with torch.compile.

Jobs are preempted and restarted often, so we rely on the on-disk Inductor
caches to make restarts cheap.  Usage:

    python train_tab.py --steps 30 --layers 6
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._dynamo.utils import counters

log = logging.getLogger("train_tab")


@torch.compiler.allow_in_graph
def gated_swish(x: torch.Tensor, beta: float = 1.0) -> torch.Tensor:
    """Gated swish used by the feature blocks (kept as one op in the graph)."""
    a, g = x.chunk(2, dim=-1)
    return a * torch.sigmoid(beta * a) * torch.sigmoid(g)


class NumericEmbedding(nn.Module):
    """Per-feature linear embedding for numeric columns (FT-Transformer style)."""

    def __init__(self, n_num: int, d: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_num, d) / math.sqrt(d))
        self.bias = nn.Parameter(torch.zeros(n_num, d))

    def forward(self, x_num: torch.Tensor) -> torch.Tensor:
        return x_num.unsqueeze(-1) * self.weight + self.bias


class ResidualBlock(nn.Module):
    def __init__(self, d: int, hidden: int, dropout: float):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.up = nn.Linear(d, 2 * hidden)
        self.down = nn.Linear(hidden, d)
        self.drop = nn.Dropout(dropout)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        z = gated_swish(self.up(self.norm(h)))
        return h + self.drop(self.down(z))


class TabularNet(nn.Module):
    def __init__(self, n_num, cat_cards, d=64, hidden=128, layers=6, dropout=0.1):
        super().__init__()
        self.num_emb = NumericEmbedding(n_num, d)
        self.cat_embs = nn.ModuleList(nn.Embedding(c, d) for c in cat_cards)
        n_tokens = n_num + len(cat_cards)
        self.proj = nn.Linear(n_tokens * d, d)
        self.blocks = nn.ModuleList(ResidualBlock(d, hidden, dropout) for _ in range(layers))
        self.head_norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, 1)

    def forward(self, x_num, x_cat):
        toks = [self.num_emb(x_num)]
        toks += [emb(x_cat[:, i]).unsqueeze(1) for i, emb in enumerate(self.cat_embs)]
        h = torch.cat(toks, dim=1).flatten(1)
        h = self.proj(h)
        for blk in self.blocks:
            h = blk(h)
        return self.head(self.head_norm(h)).squeeze(-1)


def make_batch(gen, batch, n_num, cat_cards):
    x_num = torch.randn(batch, n_num, generator=gen)
    x_cat = torch.stack([torch.randint(0, c, (batch,), generator=gen) for c in cat_cards], 1)
    logit = x_num[:, 0] - 0.5 * x_num[:, 1] + (x_cat[:, 0] % 3 == 0).float()
    y = (logit + 0.3 * torch.randn(batch, generator=gen) > 0).float()
    return x_num, x_cat, y


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    n_num, cat_cards = 12, [7, 31, 5, 120]
    model = TabularNet(n_num, cat_cards, layers=args.layers)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    cmodel = torch.compile(model)
    gen = torch.Generator().manual_seed(args.seed)

    t0 = time.perf_counter()
    for step in range(args.steps):
        x_num, x_cat, y = make_batch(gen, args.batch, n_num, cat_cards)
        ts = time.perf_counter()
        loss = F.binary_cross_entropy_with_logits(cmodel(x_num, x_cat), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step == 0:
            log.info("first step (compile) took %.1fs", time.perf_counter() - ts)
        elif step % 10 == 0:
            log.info("step %d loss %.4f", step, loss.item())
    log.info("train loop %.1fs, final loss %.4f", time.perf_counter() - t0, loss.item())
    aot = counters["aot_autograd"]
    ind = counters["inductor"]
    log.info("cache stats: aot hit=%d miss=%d | fx hit=%d miss=%d",
             aot["autograd_cache_hit"], aot["autograd_cache_miss"],
             ind["fxgraph_cache_hit"], ind["fxgraph_cache_miss"])


if __name__ == "__main__":
    main()
