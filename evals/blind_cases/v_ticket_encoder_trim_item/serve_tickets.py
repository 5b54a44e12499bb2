"""Batch scoring job for the support-ticket router.

Reads tokenised tickets, scores them with the small encoder trained last week and
reports routing accuracy plus throughput.  Tickets are padded to MAX_LEN by the
tokenizer service, so the encoder trims the padded tail before doing any work.
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

MAX_LEN = 128
VOCAB = 8000
N_QUEUES = 6


class Config:
    d_model = 128
    n_heads = 4
    n_layers = 2
    d_ff = 256
    dropout = 0.1


class SelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.n_heads = cfg.n_heads
        self.d_head = cfg.d_model // cfg.n_heads
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x, key_padding):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q = q.view(b, t, self.n_heads, self.d_head).transpose(1, 2)
        k = k.view(b, t, self.n_heads, self.d_head).transpose(1, 2)
        v = v.view(b, t, self.n_heads, self.d_head).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.d_head)
        scores = scores.masked_fill(key_padding[:, None, None, :], float("-inf"))
        attn = self.drop(scores.softmax(dim=-1))
        out = (attn @ v).transpose(1, 2).reshape(b, t, d)
        return self.proj(out)


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = SelfAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.ff = nn.Sequential(
            nn.Linear(cfg.d_model, cfg.d_ff), nn.GELU(), nn.Linear(cfg.d_ff, cfg.d_model)
        )

    def forward(self, x, key_padding):
        x = x + self.attn(self.ln1(x), key_padding)
        x = x + self.ff(self.ln2(x))
        return x


class TicketEncoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, cfg.d_model, padding_idx=0)
        self.pos = nn.Embedding(MAX_LEN, cfg.d_model)
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layers)])
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, N_QUEUES)

    def forward(self, input_ids, attention_mask):
        # drop the all-padding tail so short batches are cheap
        longest = int(attention_mask.sum(dim=1).max())
        input_ids = input_ids[:, :longest]
        attention_mask = attention_mask[:, :longest]

        pos = torch.arange(longest, device=input_ids.device)
        x = self.tok(input_ids) + self.pos(pos)[None]
        key_padding = attention_mask == 0
        for blk in self.blocks:
            x = blk(x, key_padding)
        x = self.ln_f(x)
        m = attention_mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * m).sum(dim=1) / m.sum(dim=1).clamp_min(1.0)
        return self.head(pooled)


def fake_ticket_stream(n_batches, batch_size, seed=0):
    """Stand-in for the tokenizer service: fixed-length padded batches."""
    g = torch.Generator().manual_seed(seed)
    for _ in range(n_batches):
        # ticket lengths vary a lot from batch to batch (chat vs. e-mail tickets)
        typical = int(torch.randint(12, 120, (1,), generator=g))
        lengths = torch.randint(max(4, typical // 2), typical + 1, (batch_size,), generator=g)
        ids = torch.randint(1, VOCAB, (batch_size, MAX_LEN), generator=g)
        mask = (torch.arange(MAX_LEN)[None, :] < lengths[:, None]).long()
        ids = ids * mask
        labels = (ids[:, 0] % N_QUEUES)
        yield ids, mask, labels


@torch.no_grad()
def score(model, n_batches, batch_size):
    correct = total = 0
    times = []
    for ids, mask, labels in fake_ticket_stream(n_batches, batch_size):
        t0 = time.perf_counter()
        logits = model(ids, mask)
        times.append(time.perf_counter() - t0)
        correct += (logits.argmax(-1) == labels).sum().item()
        total += labels.numel()
    return correct / total, times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=12)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()

    torch.manual_seed(0)
    cfg = Config()
    model = TicketEncoder(cfg).eval()

    if not args.no_compile:
        # the graph-break warning asked for this
        torch._dynamo.config.capture_scalar_outputs = True
        model = torch.compile(model)

    t0 = time.perf_counter()
    acc, times = score(model, args.batches, args.batch_size)
    wall = time.perf_counter() - t0
    steady = sorted(times[3:])[len(times[3:]) // 2] if len(times) > 3 else float("nan")
    print(f"routing acc {acc:.3f}  total {wall:.1f}s  first batch {times[0]:.2f}s  "
          f"median steady batch {steady * 1000:.1f} ms")


if __name__ == "__main__":
    main()
