"""Small decoder-only LM pretraining script (synthetic token stream).

python pretrain.py                 # eager
python pretrain.py --compile       # compile model, loss and optimizer step
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--compile", action="store_true")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--seq-len", type=int, default=64)
    p.add_argument("--vocab", type=int, default=512)
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--weight-decay", type=float, default=0.05)
    p.add_argument("--log-every", type=int, default=5)
    return p.parse_args()


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x32.type_as(x)


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.norm1 = RMSNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim, bias=False)
        self.norm2 = RMSNorm(dim)
        self.up = nn.Linear(dim, 4 * dim, bias=False)
        self.gate = nn.Linear(dim, 4 * dim, bias=False)
        self.down = nn.Linear(4 * dim, dim, bias=False)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(d, dim=-1)
        q = q.view(b, t, self.heads, -1).transpose(1, 2)
        k = k.view(b, t, self.heads, -1).transpose(1, 2)
        v = v.view(b, t, self.heads, -1).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class TinyLM(nn.Module):
    def __init__(self, vocab, dim, layers, heads, max_len):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.norm = RMSNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.tok.weight
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x))


def lm_loss(logits, targets):
    return F.cross_entropy(logits.flatten(0, 1).float(), targets.flatten())


def cosine_with_warmup(warmup, total):
    def f(step):
        if step < warmup:
            return (step + 1) / warmup
        progress = (step - warmup) / max(1, total - warmup)
        return 0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * progress))
    return f


def synthetic_stream(vocab, batch, seq_len, gen):
    # periodic patterns with noise, so the loss can actually go down
    period = torch.randint(3, 9, (batch, 1), generator=gen)
    offset = torch.randint(0, vocab, (batch, 1), generator=gen)
    t = torch.arange(seq_len + 1).unsqueeze(0)
    toks = (offset + (t % period) * 7) % vocab
    noise = torch.rand(toks.shape, generator=gen) < 0.05
    toks = torch.where(noise, torch.randint(0, vocab, toks.shape, generator=gen), toks)
    return toks[:, :-1].contiguous(), toks[:, 1:].contiguous()


def build_optimizer(model, args):
    decay, no_decay = [], []
    for n, p in model.named_parameters():
        (no_decay if p.ndim < 2 else decay).append(p)
    groups = [
        {"params": decay, "weight_decay": args.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    # tensor lr so the compiled step does not recompile when the schedule changes it
    return torch.optim.AdamW(groups, lr=torch.tensor(args.lr), betas=(0.9, 0.95))


def setup(args):
    torch.manual_seed(0)
    model = TinyLM(args.vocab, args.dim, args.layers, args.heads, args.seq_len)
    optimizer = build_optimizer(model, args)
    loss_fn = lm_loss
    if args.compile:
        model.compile()
        loss_fn = torch.compile(lm_loss)
        optimizer.step = torch.compile(optimizer.step)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, cosine_with_warmup(args.warmup, args.steps)
    )
    return model, optimizer, scheduler, loss_fn


def main():
    args = parse_args()
    model, optimizer, scheduler, loss_fn = setup(args)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"params: {n_params/1e6:.2f}M  compile={args.compile}")

    gen = torch.Generator().manual_seed(1234)
    model.train()
    t_start = time.perf_counter()
    for step in range(args.steps):
        t0 = time.perf_counter()
        x, y = synthetic_stream(args.vocab, args.batch_size, args.seq_len, gen)
        logits = model(x)
        loss = loss_fn(logits, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        dt = time.perf_counter() - t0
        if step % args.log_every == 0 or step == args.steps - 1:
            lr = float(optimizer.param_groups[0]["lr"])
            print(f"step {step:3d}  loss {loss.item():.4f}  lr {lr:.2e}  {dt*1000:.1f} ms")
    print(f"total {time.perf_counter() - t_start:.1f}s  final loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
