"""Small char-level transformer LM trainer with gradient-flow monitoring.

Usage:
    python train_lm.py --steps 40 --compile
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("train_lm")


class GradFlowMonitor:
    """Tracks the gradient norm flowing out of every transformer block."""

    def __init__(self, blocks):
        self.norms = {}
        self.handles = []
        for idx, block in enumerate(blocks):
            self.handles.append(block.register_full_backward_hook(self._make_hook(idx)))

    def _make_hook(self, idx):
        def hook(module, grad_input, grad_output):
            self.norms[idx] = grad_output[0].detach().norm()
        return hook

    def summary(self):
        return " ".join(f"b{i}={v.item():.3f}" for i, v in sorted(self.norms.items()))

    def remove(self):
        for h in self.handles:
            h.remove()


class Block(nn.Module):
    def __init__(self, d_model, n_head, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_head, dropout=dropout, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, 4 * d_model),
            nn.GELU(),
            nn.Linear(4 * d_model, d_model),
            nn.Dropout(dropout),
        )

    def forward(self, x, mask):
        h = self.ln1(x)
        a, _ = self.attn(h, h, h, attn_mask=mask, need_weights=False)
        x = x + a
        x = x + self.mlp(self.ln2(x))
        return x


class CharLM(nn.Module):
    def __init__(self, vocab, d_model=128, n_head=4, n_layer=6, block_size=64, dropout=0.0):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(block_size, d_model)
        self.blocks = nn.ModuleList([Block(d_model, n_head, dropout) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)
        self.register_buffer(
            "causal", torch.triu(torch.full((block_size, block_size), float("-inf")), diagonal=1)
        )

    def forward(self, idx):
        T = idx.size(1)
        pos = torch.arange(T, device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        mask = self.causal[:T, :T]
        for blk in self.blocks:
            x = blk(x, mask)
        return self.head(self.ln_f(x))


def make_corpus(n_chars, vocab, seed):
    g = torch.Generator().manual_seed(seed)
    # a synthetic "language": a random Markov chain over the vocabulary
    trans = torch.softmax(torch.randn(vocab, vocab, generator=g) * 3.0, dim=-1)
    out = torch.empty(n_chars, dtype=torch.long)
    out[0] = 0
    for i in range(1, n_chars):
        out[i] = torch.multinomial(trans[out[i - 1]], 1, generator=g)
    return out


def get_batch(data, batch_size, block_size, g):
    ix = torch.randint(len(data) - block_size - 1, (batch_size,), generator=g)
    x = torch.stack([data[i : i + block_size] for i in ix])
    y = torch.stack([data[i + 1 : i + block_size + 1] for i in ix])
    return x, y


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--block-size", type=int, default=64)
    p.add_argument("--vocab", type=int, default=65)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--warmup", type=int, default=5, help="steps excluded from timing")
    p.add_argument("--log-every", type=int, default=10)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)

    data = make_corpus(20_000, args.vocab, args.seed)
    model = CharLM(args.vocab, block_size=args.block_size)
    monitor = GradFlowMonitor(model.blocks)
    n_params = sum(p.numel() for p in model.parameters())
    log.info("model params: %.2fM, torch %s, compile=%s", n_params / 1e6, torch.__version__, args.compile)

    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1)
    fwd = torch.compile(model) if args.compile else model

    g = torch.Generator().manual_seed(args.seed + 1)
    step_times = []
    model.train()
    for step in range(1, args.steps + 1):
        x, y = get_batch(data, args.batch_size, args.block_size, g)
        t0 = time.perf_counter()
        logits = fwd(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        dt = time.perf_counter() - t0
        if step > args.warmup:
            step_times.append(dt)
        if step % args.log_every == 0 or step == 1:
            log.info("step %3d loss %.4f (ppl %.1f) %.1f ms | grad flow %s",
                     step, loss.item(), math.exp(loss.item()), dt * 1e3, monitor.summary())

    med = sorted(step_times)[len(step_times) // 2]
    log.info("median step time after warm-up: %.1f ms over %d steps", med * 1e3, len(step_times))
    monitor.remove()


if __name__ == "__main__":
    main()
