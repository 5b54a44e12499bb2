"""Small GPT pretraining loop (byte-level) with rotary attention.

Runs a short sanity validation before training (same idea as Lightning's
num_sanity_val_steps) so that a broken eval path fails fast instead of after
the first epoch.
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("pretrain")


class RotaryEmbedding(nn.Module):
    def __init__(self, head_dim, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self._seq_len_cached = 0
        self._cos_cached = None
        self._sin_cached = None

    def _update_cache(self, seq_len, device, dtype):
        if seq_len > self._seq_len_cached or self._cos_cached is None or self._cos_cached.dtype != dtype:
            t = torch.arange(seq_len, device=device, dtype=torch.float32)
            freqs = torch.outer(t, self.inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1)
            self._cos_cached = emb.cos().to(dtype)
            self._sin_cached = emb.sin().to(dtype)
            self._seq_len_cached = seq_len

    @staticmethod
    def _rotate_half(x):
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat((-x2, x1), dim=-1)

    def forward(self, q, k):
        T = q.shape[-2]
        self._update_cache(T, q.device, q.dtype)
        cos = self._cos_cached[:T]
        sin = self._sin_cached[:T]
        return q * cos + self._rotate_half(q) * sin, k * cos + self._rotate_half(k) * sin


class Block(nn.Module):
    def __init__(self, d_model, n_head, dropout):
        super().__init__()
        self.n_head = n_head
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.proj = nn.Linear(d_model, d_model, bias=False)
        self.rotary = RotaryEmbedding(d_model // n_head)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=-1)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        q, k = self.rotary(q, k)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.drop(self.proj(a.transpose(1, 2).reshape(B, T, C)))
        x = x + self.drop(self.mlp(self.ln2(x)))
        return x


class GPT(nn.Module):
    def __init__(self, vocab_size=256, d_model=128, n_head=4, n_layer=2, dropout=0.0):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, d_model)
        self.blocks = nn.ModuleList(Block(d_model, n_head, dropout) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)
        self.head.weight = self.tok.weight
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
            if getattr(m, "bias", None) is not None:
                nn.init.zeros_(m.bias)

    def forward(self, idx, targets=None):
        x = self.tok(idx)
        for blk in self.blocks:
            x = blk(x)
        logits = self.head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


def synthetic_corpus(n_bytes, seed):
    # repetitive "log lines" so the loss actually goes down
    g = torch.Generator().manual_seed(seed)
    words = [bytes(torch.randint(97, 123, (int(l),), generator=g).tolist())
             for l in torch.randint(2, 8, (200,), generator=g)]
    out = bytearray()
    while len(out) < n_bytes:
        idx = torch.randint(0, len(words), (8,), generator=g).tolist()
        out += b" ".join(words[i] for i in idx) + b"\n"
    return torch.tensor(list(out[:n_bytes]), dtype=torch.long)


def get_batch(data, batch_size, seq_len, g):
    ix = torch.randint(0, len(data) - seq_len - 1, (batch_size,), generator=g)
    x = torch.stack([data[i:i + seq_len] for i in ix])
    y = torch.stack([data[i + 1:i + seq_len + 1] for i in ix])
    return x, y


@torch.inference_mode()
def evaluate(model, data, args, g, max_batches):
    model.eval()
    losses = []
    for _ in range(max_batches):
        x, y = get_batch(data, args.batch_size, args.seq_len, g)
        _, loss = model(x, y)
        losses.append(loss.item())
    model.train()
    return sum(losses) / len(losses)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--seq-len", type=int, default=128)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--eval-every", type=int, default=30)
    p.add_argument("--eval-batches", type=int, default=4)
    p.add_argument("--sanity-val-batches", type=int, default=2)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)
    data = synthetic_corpus(400_000, args.seed)
    n_val = len(data) // 10
    train_data, val_data = data[:-n_val], data[-n_val:]
    g_train = torch.Generator().manual_seed(args.seed + 1)
    g_val = torch.Generator().manual_seed(args.seed + 2)

    model = GPT()
    log.info("params: %.2fM", sum(p.numel() for p in model.parameters()) / 1e6)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / args.warmup) * 0.5 * (1 + math.cos(math.pi * min(s, args.steps) / args.steps)))
    if args.compile:
        model = torch.compile(model)

    if args.sanity_val_batches > 0:
        val = evaluate(model, val_data, args, g_val, args.sanity_val_batches)
        log.info("sanity val loss %.4f (expected ~ln(256)=%.2f)", val, math.log(256))

    model.train()
    t0 = time.perf_counter()
    tokens = 0
    for step in range(1, args.steps + 1):
        x, y = get_batch(train_data, args.batch_size, args.seq_len, g_train)
        _, loss = model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        tokens += x.numel()
        if step % 10 == 0:
            dt = time.perf_counter() - t0
            log.info("step %d loss %.4f lr %.2e tok/s %.0f", step, loss.item(), sched.get_last_lr()[0], tokens / dt)
        if step % args.eval_every == 0:
            log.info("step %d val loss %.4f", step, evaluate(model, val_data, args, g_val, args.eval_batches))
    log.info("done in %.1fs", time.perf_counter() - t0)


if __name__ == "__main__":
    main()
