"""A/B: does torch.compile change the training trajectory of our char-level LM?

Trains the same model from the same initial weights on the same batches twice, once eager and once
compiled, and compares the loss curves step by step.

    python ab_compile.py --steps 60 --tol 1e-3
"""
import argparse
import json
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("ab")

CORPUS = (
    "the quick brown fox jumps over the lazy dog. pack my box with five dozen liquor jugs. "
    "how vexingly quick daft zebras jump! sphinx of black quartz, judge my vow. "
    "the five boxing wizards jump quickly. jackdaws love my big sphinx of quartz. "
) * 40


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.heads = heads

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=-1)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(B, T, C))
        return x + self.mlp(self.ln2(x))


class CharLM(nn.Module):
    def __init__(self, vocab, dim=128, heads=4, depth=3, ctx=64):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(ctx, dim)
        self.blocks = nn.ModuleList([Block(dim, heads) for _ in range(depth)])
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.tok.weight
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def forward(self, idx, targets):
        T = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(T, device=idx.device))
        for b in self.blocks:
            x = b(x)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def batches(data, n_steps, batch, ctx, seed):
    g = torch.Generator().manual_seed(seed)
    for _ in range(n_steps):
        ix = torch.randint(0, len(data) - ctx - 1, (batch,), generator=g)
        x = torch.stack([data[i:i + ctx] for i in ix])
        y = torch.stack([data[i + 1:i + ctx + 1] for i in ix])
        yield x, y


def lr_lambda(warmup, total):
    def f(step):
        if step < warmup:
            return (step + 1) / warmup
        p = (step - warmup) / max(1, total - warmup)
        return 0.5 * (1 + math.cos(math.pi * p))
    return f


def train(step_fn, model, data, args, tag):
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1, betas=(0.9, 0.95))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda(args.warmup, args.steps))
    losses = []
    t0 = time.perf_counter()
    for step, (x, y) in enumerate(batches(data, args.steps, args.batch, args.ctx, args.data_seed)):
        loss = step_fn(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(loss.item())
        if step % args.log_every == 0 or step == args.steps - 1:
            log.info("[%s] step %3d  loss %.4f  lr %.2e", tag, step, losses[-1], sched.get_last_lr()[0])
    log.info("[%s] %d steps in %.1fs", tag, args.steps, time.perf_counter() - t0)
    return losses


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--ctx", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data-seed", type=int, default=1234)
    ap.add_argument("--tol", type=float, default=1e-3, help="max allowed relative loss difference")
    ap.add_argument("--log-every", type=int, default=10)
    ap.add_argument("--report", default=None, help="write the two curves as JSON here")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    torch.manual_seed(args.seed)

    chars = sorted(set(CORPUS))
    data = torch.tensor([chars.index(c) for c in CORPUS], dtype=torch.long)
    model = CharLM(len(chars), ctx=args.ctx)
    log.info("torch %s | %d params | vocab %d", torch.__version__,
             sum(p.numel() for p in model.parameters()), len(chars))

    # both arms start from these weights
    init_state = model.state_dict()

    model.train()
    eager_losses = train(model, model, data, args, "eager")

    model.load_state_dict(init_state)
    compiled = torch.compile(model)
    compiled_losses = train(compiled, model, data, args, "compiled")

    rel = [abs(a - b) / abs(a) for a, b in zip(eager_losses, compiled_losses)]
    worst = max(range(len(rel)), key=rel.__getitem__)
    log.info("step 0 loss: eager %.5f compiled %.5f", eager_losses[0], compiled_losses[0])
    log.info("final loss:  eager %.5f compiled %.5f", eager_losses[-1], compiled_losses[-1])
    log.info("worst relative loss difference %.3e at step %d (tol %.0e)", rel[worst], worst, args.tol)
    if args.report:
        with open(args.report, "w") as f:
            json.dump({"eager": eager_losses, "compiled": compiled_losses}, f)
    if rel[worst] > args.tol:
        log.error("A/B FAILED: compiled training diverges from eager")
        raise SystemExit(1)
    log.info("A/B OK")


if __name__ == "__main__":
    main()
