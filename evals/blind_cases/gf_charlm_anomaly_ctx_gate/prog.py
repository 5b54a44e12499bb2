"""Char-level transformer LM: CI compile-readiness gate.

Runs a short eager smoke-train, then checks that torch.compile (Dynamo) captures
the whole training forward as a single graph with no graph breaks, so the
nightly torch.compile training job gets the full-model fusion.
"""
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class LMConfig:
    vocab_size: int = 96
    block_size: int = 64
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    dropout: float = 0.0
    anomaly_check: bool = False   # flip on when chasing NaNs in a run


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: LMConfig):
        super().__init__()
        self.n_head = cfg.n_head
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)
        mask = torch.tril(torch.ones(cfg.block_size, cfg.block_size, dtype=torch.bool))
        self.register_buffer("mask", mask.view(1, 1, cfg.block_size, cfg.block_size), persistent=False)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        hd = C // self.n_head
        q = q.view(B, T, self.n_head, hd).transpose(1, 2)
        k = k.view(B, T, self.n_head, hd).transpose(1, 2)
        v = v.view(B, T, self.n_head, hd).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
        att = att.masked_fill(~self.mask[:, :, :T, :T], float("-inf"))
        att = self.drop(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y)


class MLP(nn.Module):
    def __init__(self, cfg: LMConfig):
        super().__init__()
        self.fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd)
        self.out = nn.Linear(4 * cfg.n_embd, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x):
        return self.drop(self.out(F.gelu(self.fc(x), approximate="tanh")))


class Block(nn.Module):
    def __init__(self, cfg: LMConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.n_embd)
        self.attn = CausalSelfAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.n_embd)
        self.mlp = MLP(cfg)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        x = x + self.mlp(self.ln2(x))
        return x


class CharLM(nn.Module):
    def __init__(self, cfg: LMConfig):
        super().__init__()
        self.cfg = cfg
        self.tok = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.pos = nn.Embedding(cfg.block_size, cfg.n_embd)
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layer)])
        self.ln_f = nn.LayerNorm(cfg.n_embd)
        self.head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.head.weight = self.tok.weight
        self.apply(self._init)

    @staticmethod
    def _init(m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, std=0.02)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        pos = torch.arange(T, device=idx.device)
        with torch.autograd.set_detect_anomaly(self.cfg.anomaly_check, check_nan=True):
            x = self.tok(idx) + self.pos(pos)
            for blk in self.blocks:
                x = blk(x)
            logits = self.head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


def make_corpus(n_chars: int, vocab: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    # a cheap "language": repeated random words separated by a space token
    words = [torch.randint(1, vocab, (int(torch.randint(2, 9, (1,), generator=g)),), generator=g)
             for _ in range(200)]
    out, total = [], 0
    while total < n_chars:
        w = words[int(torch.randint(0, len(words), (1,), generator=g))]
        out.append(w)
        out.append(torch.zeros(1, dtype=torch.long))
        total += len(w) + 1
    return torch.cat(out)[:n_chars]


def get_batch(data, batch_size, block_size, g):
    ix = torch.randint(0, len(data) - block_size - 1, (batch_size,), generator=g)
    x = torch.stack([data[i:i + block_size] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + block_size] for i in ix])
    return x, y


def smoke_train(model, data, steps, batch_size, block_size):
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    g = torch.Generator().manual_seed(1234)
    losses = []
    for _ in range(steps):
        x, y = get_batch(data, batch_size, block_size, g)
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
    return losses


def compile_readiness(model, data, batch_size, block_size):
    """CI check: the training forward must be captured by Dynamo as one graph."""
    g = torch.Generator().manual_seed(99)
    x, y = get_batch(data, batch_size, block_size, g)
    torch._dynamo.reset()
    report = torch._dynamo.explain(model)(x, y)
    n_ops = sum(len(ops) for ops in report.ops_per_graph)
    return report.graph_count, report.graph_break_count, n_ops


def main():
    torch.manual_seed(0)
    cfg = LMConfig()
    data = make_corpus(200_000, cfg.vocab_size)
    model = CharLM(cfg)

    losses = smoke_train(model, data, steps=5, batch_size=16, block_size=cfg.block_size)
    print(f"smoke train: loss {losses[0]:.4f} -> {losses[-1]:.4f}")

    graphs, breaks, n_ops = compile_readiness(model, data, batch_size=16, block_size=cfg.block_size)
    print(f"dynamo capture: graphs={graphs} graph_breaks={breaks} captured_ops={n_ops}")
    if graphs != 1 or breaks != 0:
        raise SystemExit("FAIL: training forward is not captured as a single graph")
    print("OK")


if __name__ == "__main__":
    main()
