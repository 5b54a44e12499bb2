"""Stateful character-level language model with minGRU layers.

The corpus is treated as `batch_size` parallel streams.  Each stream is cut into
consecutive chunks of `--chunk` characters and the recurrent state at the end of
one chunk is fed as the initial state of the next chunk, so the model can use
context longer than one chunk.
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--chunk", type=int, default=64)
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--depth", type=int, default=2)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--retain-graph", action="store_true")
    return p.parse_args()


def make_corpus(n_chars, vocab, seed=0):
    """Order-2 Markov text so there is something to learn across characters."""
    g = torch.Generator().manual_seed(seed)
    table = torch.softmax(3.0 * torch.randn(vocab, vocab, vocab, generator=g), dim=-1)
    out = torch.empty(n_chars, dtype=torch.long)
    a, b = 0, 1
    u = torch.rand(n_chars, generator=g)
    cdf = table.cumsum(-1)
    for i in range(n_chars):
        c = int(torch.searchsorted(cdf[a, b], u[i]).clamp(max=vocab - 1))
        out[i] = c
        a, b = b, c
    return out


def stream_batches(corpus, batch_size, chunk):
    n = corpus.numel() // batch_size
    streams = corpus[: n * batch_size].view(batch_size, n)
    pos = 0
    while True:
        if pos + chunk + 1 > n:
            pos = 0
        yield streams[:, pos:pos + chunk], streams[:, pos + 1:pos + chunk + 1], pos == 0
        pos += chunk


def g(x):
    return torch.where(x >= 0, x + 0.5, x.sigmoid())


def log_g(x):
    return torch.where(x >= 0, (F.relu(x) + 0.5).log(), -F.softplus(-x))


def parallel_scan_log(log_coeffs, log_values):
    a_star = torch.cumsum(log_coeffs, dim=1)
    log_h0_plus_b_star = torch.logcumsumexp(log_values - a_star, dim=1)
    return torch.exp(a_star + log_h0_plus_b_star)


class MinGRU(nn.Module):
    def __init__(self, dim, expansion=1.5):
        super().__init__()
        inner = int(dim * expansion)
        self.inner = inner
        self.to_hidden_and_gate = nn.Linear(dim, inner * 2, bias=False)
        self.to_out = nn.Linear(inner, dim, bias=False)

    def forward(self, x, prev_hidden):
        hidden, gate = self.to_hidden_and_gate(x).chunk(2, dim=-1)
        log_coeffs = -F.softplus(gate)
        log_z = -F.softplus(-gate)
        log_values = log_z + log_g(hidden)
        log_values = torch.cat((prev_hidden.log(), log_values), dim=1)
        log_coeffs = F.pad(log_coeffs, (0, 0, 1, 0))
        out = parallel_scan_log(log_coeffs, log_values)[:, -x.shape[1]:]
        next_hidden = out[:, -1:]
        return self.to_out(out), next_hidden


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm1 = nn.RMSNorm(dim)
        self.rnn = MinGRU(dim)
        self.norm2 = nn.RMSNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x, h):
        y, h = self.rnn(self.norm1(x), h)
        x = x + y
        x = x + self.ff(self.norm2(x))
        return x, h


class StreamLM(nn.Module):
    def __init__(self, vocab, dim, depth):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])
        self.norm = nn.RMSNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def init_states(self, batch_size):
        return [torch.full((batch_size, 1, blk.rnn.inner), 0.5) for blk in self.blocks]

    def forward(self, tokens, states):
        x = self.emb(tokens)
        new_states = []
        for blk, h in zip(self.blocks, states):
            x, h = blk(x, h)
            new_states.append(h)
        return self.head(self.norm(x)), new_states


def main():
    args = parse_args()
    torch.manual_seed(0)
    vocab = 48
    corpus = make_corpus(40_000, vocab)
    model = StreamLM(vocab, args.dim, args.depth)
    fwd = torch.compile(model) if args.compile else model
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    batches = stream_batches(corpus, args.batch_size, args.chunk)

    print(f"torch {torch.__version__} compile={args.compile} retain_graph={args.retain_graph} "
          f"uniform-guess loss {math.log(vocab):.3f}")
    states = model.init_states(args.batch_size)
    t_all = time.perf_counter()
    for step in range(args.steps):
        x, y, new_epoch = next(batches)
        if new_epoch:
            states = model.init_states(args.batch_size)
        t0 = time.perf_counter()
        logits, states = fwd(x, states)
        loss = F.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward(retain_graph=args.retain_graph)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        dt = time.perf_counter() - t0
        if step % 5 == 0 or step == args.steps - 1:
            print(f"step {step:3d} loss {loss.item():.4f} step_time {dt * 1000:8.1f} ms")
    print(f"done in {time.perf_counter() - t_all:.1f}s")


if __name__ == "__main__":
    main()
