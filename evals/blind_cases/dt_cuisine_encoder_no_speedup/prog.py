"""Recipe-title cuisine classifier: eager vs torch.compile throughput check.

Trains two copies of the same encoder (same init, same batches) for a few
steps, one eager and one wrapped in torch.compile, and reports step time.
The nightly job fails if the compiled arm is not at least MIN_SPEEDUP faster.
"""
import copy
import math
import time
import warnings
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Cfg:
    vocab: int = 6000
    n_cls: int = 12
    max_len: int = 64
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 3
    ff_mult: int = 4
    dropout: float = 0.0
    batch: int = 16
    lr: float = 3e-4
    warmup_steps: int = 2
    timed_steps: int = 16
    seed: int = 1234


MIN_SPEEDUP = 1.12
PAD_ID = 0


# ---------------------------------------------------------------- data
class TitleStream:
    """Synthetic stand-in for the tokenised recipe-title corpus.

    Each cuisine has its own unigram distribution over the vocabulary, titles
    have variable length and are right-padded to max_len.
    """

    def __init__(self, cfg: Cfg, seed: int):
        self.cfg = cfg
        vocab_g = torch.Generator().manual_seed(cfg.seed)
        logits = torch.randn(cfg.n_cls, cfg.vocab, generator=vocab_g) * 2.0
        logits[:, PAD_ID] = -1e4
        self.probs = logits.softmax(-1)
        self.g = torch.Generator().manual_seed(seed)

    def batch(self):
        cfg = self.cfg
        y = torch.randint(0, cfg.n_cls, (cfg.batch,), generator=self.g)
        ids = torch.multinomial(self.probs[y], cfg.max_len, replacement=True, generator=self.g)
        lens = torch.randint(cfg.max_len // 3, cfg.max_len + 1, (cfg.batch,), generator=self.g)
        pad = torch.arange(cfg.max_len)[None, :] >= lens[:, None]
        ids = ids.masked_fill(pad, PAD_ID)
        return ids, pad, y


# ---------------------------------------------------------------- model
def distance_bias(max_len: int, slope: float = 0.05) -> torch.Tensor:
    pos = torch.arange(max_len)
    return -slope * (pos[None, :] - pos[:, None]).abs().float()


class EncoderBlock(nn.Module):
    def __init__(self, cfg: Cfg):
        super().__init__()
        d = cfg.d_model
        self.norm1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, cfg.n_heads, dropout=cfg.dropout, batch_first=True)
        self.norm2 = nn.LayerNorm(d)
        self.ff = nn.Sequential(
            nn.Linear(d, cfg.ff_mult * d),
            nn.GELU(),
            nn.Dropout(cfg.dropout),
            nn.Linear(cfg.ff_mult * d, d),
        )
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x, attn_bias, pad_mask):
        h = self.norm1(x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=UserWarning)
            a, _ = self.attn(h, h, h, attn_mask=attn_bias, key_padding_mask=pad_mask, need_weights=False)
        x = x + self.drop(a)
        x = x + self.drop(self.ff(self.norm2(x)))
        return x


class CuisineEncoder(nn.Module):
    def __init__(self, cfg: Cfg):
        super().__init__()
        self.cfg = cfg
        self.tok = nn.Embedding(cfg.vocab, cfg.d_model, padding_idx=PAD_ID)
        self.blocks = nn.ModuleList(EncoderBlock(cfg) for _ in range(cfg.n_layers))
        self.norm = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.n_cls)
        self.register_buffer("attn_bias", distance_bias(cfg.max_len), persistent=False)
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.normal_(self.tok.weight, std=0.02)
        with torch.no_grad():
            self.tok.weight[PAD_ID].zero_()
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, ids, pad_mask):
        T = ids.shape[1]
        x = self.tok(ids) * math.sqrt(self.cfg.d_model)
        bias = self.attn_bias[:T, :T]
        for blk in self.blocks:
            x = blk(x, bias, pad_mask)
        x = self.norm(x)
        keep = (~pad_mask).unsqueeze(-1).to(x.dtype)
        pooled = (x * keep).sum(1) / keep.sum(1).clamp_min(1.0)
        return self.head(pooled)


# ---------------------------------------------------------------- training
def make_optimizer(model, cfg):
    decay, no_decay = [], []
    for n, p in model.named_parameters():
        (no_decay if p.ndim < 2 or "norm" in n else decay).append(p)
    return torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.05}, {"params": no_decay, "weight_decay": 0.0}],
        lr=cfg.lr, betas=(0.9, 0.98),
    )


class Arm:
    def __init__(self, name, model, cfg):
        self.name = name
        self.model = model
        self.opt = make_optimizer(model, cfg)
        self.times = []
        self.losses = []

    def step(self, ids, pad, y):
        self.model.train()
        t0 = time.perf_counter()
        logits = self.model(ids, pad)
        loss = F.cross_entropy(logits, y, label_smoothing=0.05)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.opt.step()
        self.times.append(time.perf_counter() - t0)
        self.losses.append(loss.item())

    def report(self, cfg):
        steady = sorted(self.times[cfg.warmup_steps:])
        median = steady[len(steady) // 2]
        print(f"[{self.name:8s}] first step {self.times[0]:6.2f}s | median step {median * 1e3:7.1f} ms | "
              f"loss {self.losses[0]:.4f} -> {self.losses[-1]:.4f}")
        return median


@torch.no_grad()
def evaluate(model, stream, n_batches=4):
    model.eval()
    correct = total = 0
    for _ in range(n_batches):
        ids, pad, y = stream.batch()
        correct += (model(ids, pad).argmax(-1) == y).sum().item()
        total += y.numel()
    model.train()
    return correct / total


def main():
    cfg = Cfg()
    torch.manual_seed(cfg.seed)
    print(f"torch {torch.__version__} | threads {torch.get_num_threads()}")

    stream = TitleStream(cfg, seed=cfg.seed)
    batches = [stream.batch() for _ in range(cfg.warmup_steps + cfg.timed_steps)]

    base = CuisineEncoder(cfg)
    eager_model = copy.deepcopy(base)
    compiled_model = torch.compile(copy.deepcopy(base))

    arms = [Arm("eager", eager_model, cfg), Arm("compiled", compiled_model, cfg)]
    # interleave the two arms so both see the same machine load
    for ids, pad, y in batches:
        for arm in arms:
            arm.step(ids, pad, y)
    t_eager, t_comp = (arm.report(cfg) for arm in arms)
    l_eager, l_comp = arms[0].losses, arms[1].losses

    val = TitleStream(cfg, seed=cfg.seed + 1)
    acc = evaluate(eager_model, val)
    drift = max(abs(a - b) for a, b in zip(l_eager, l_comp))
    speedup = t_eager / t_comp
    print(f"val acc (eager arm) {acc:.3f} | max loss drift eager vs compiled {drift:.2e}")
    print(f"speedup compiled vs eager: {speedup:.2f}x (required >= {MIN_SPEEDUP:.2f}x)")
    if speedup < MIN_SPEEDUP:
        print("PERF GATE FAILED")
        raise SystemExit(1)
    print("PERF GATE OK")


if __name__ == "__main__":
    main()
