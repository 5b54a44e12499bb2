"""Small MoE language model, trained on synthetic tokens.

    python train_moe.py             # eager
    python train_moe.py --compile   # torch.compile(model)
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, DIM, HIDDEN, N_EXPERTS, TOP_K, N_LAYERS, SEQ, BATCH = 1024, 128, 256, 8, 2, 4, 64, 8


class Expert(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Linear(DIM, HIDDEN, bias=False)
        self.w2 = nn.Linear(HIDDEN, DIM, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)))


class MoE(nn.Module):
    def __init__(self):
        super().__init__()
        self.router = nn.Linear(DIM, N_EXPERTS, bias=False)
        self.experts = nn.ModuleList(Expert() for _ in range(N_EXPERTS))

    def forward(self, x):
        B, T, D = x.shape
        x = x.reshape(-1, D)
        probs = self.router(x).softmax(dim=-1)
        gate, idx = probs.topk(TOP_K, dim=-1)                      # [N, K]
        gate = gate / gate.sum(-1, keepdim=True)

        flat_idx = idx.reshape(-1)                                   # [N*K]
        order = flat_idx.argsort(stable=True)
        tok = torch.arange(x.shape[0], device=x.device).repeat_interleave(TOP_K)[order]
        tokens_per_expert = torch.bincount(flat_idx, minlength=N_EXPERTS)
        counts = tokens_per_expert.tolist()

        routed = x[tok]
        outs = []
        for e, chunk in enumerate(routed.split(counts)):
            outs.append(self.experts[e](chunk))
        y_sorted = torch.cat(outs) * gate.reshape(-1)[order].unsqueeze(-1)
        y = torch.zeros_like(x).index_add_(0, tok, y_sorted)

        # load-balancing aux loss (Switch style)
        frac = tokens_per_expert.float() / flat_idx.numel()
        aux = N_EXPERTS * (frac * probs.mean(0)).sum()
        return y.reshape(B, T, D), aux


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(DIM)
        self.attn = nn.MultiheadAttention(DIM, 4, batch_first=True)
        self.ln2 = nn.LayerNorm(DIM)
        self.moe = MoE()

    def forward(self, x, causal):
        h = self.ln1(x)
        a, _ = self.attn(h, h, h, attn_mask=causal, need_weights=False)
        x = x + a
        m, aux = self.moe(self.ln2(x))
        return x + m, aux


class MoELM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, DIM)
        self.pos = nn.Parameter(torch.zeros(SEQ, DIM))
        self.blocks = nn.ModuleList(Block() for _ in range(N_LAYERS))
        self.ln = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB, bias=False)
        self.register_buffer("causal", torch.triu(torch.ones(SEQ, SEQ, dtype=torch.bool), 1))

    def forward(self, ids, targets):
        x = self.emb(ids) + self.pos[: ids.shape[1]]
        aux_total = 0.0
        for blk in self.blocks:
            x, aux = blk(x, self.causal)
            aux_total = aux_total + aux
        logits = self.head(self.ln(x))
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
        return loss + 0.01 * aux_total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--steps", type=int, default=30)
    args = ap.parse_args()

    torch.manual_seed(0)
    model = MoELM()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    step_fn = torch.compile(model) if args.compile else model

    data = torch.randint(0, VOCAB, (args.steps, BATCH, SEQ + 1))
    times = []
    for step in range(args.steps):
        t0 = time.perf_counter()
        ids, tgt = data[step, :, :-1], data[step, :, 1:]
        loss = step_fn(ids, tgt)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        times.append(time.perf_counter() - t0)
        if step % 10 == 0 or step == args.steps - 1:
            print(f"step {step:3d} loss {loss.item():.4f} step_time {times[-1]*1000:.0f} ms")
    steady = sorted(times[10:])[len(times[10:]) // 2]
    print(f"{'compiled' if args.compile else 'eager'}: median step time after warmup "
          f"{steady*1000:.1f} ms, first step {times[0]:.1f} s")


if __name__ == "__main__":
    main()
