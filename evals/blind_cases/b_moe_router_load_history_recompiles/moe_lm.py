"""Small decoder-only LM with a top-2 mixture-of-experts FFN."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, d: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=-1)
        q, k, v = (t.view(B, T, self.n_heads, C // self.n_heads).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class Top2Router(nn.Module):
    """Top-2 router with soft-capped logits, z-loss and a switch-style balance
    loss. Keeps the per-step expert load so the trainer can report load
    balance over the logging window."""

    def __init__(self, d_model: int, n_experts: int, cap: float = 10.0):
        super().__init__()
        self.n_experts = n_experts
        self.cap = cap
        self.gate = nn.Linear(d_model, n_experts, bias=False)
        self.load_history: list[torch.Tensor] = []

    def forward(self, x):
        logits = self.cap * torch.tanh(self.gate(x) / self.cap)
        z_loss = torch.logsumexp(logits, dim=-1).pow(2).mean()
        probs = logits.softmax(dim=-1)
        top_p, top_i = probs.topk(2, dim=-1)
        top_p = top_p / top_p.sum(dim=-1, keepdim=True)
        dispatch = torch.zeros_like(probs).scatter(-1, top_i, top_p)
        load = (dispatch > 0).float().mean(dim=(0, 1))
        importance = probs.mean(dim=(0, 1))
        balance = self.n_experts * (load * importance).sum()
        self.load_history.append(load.detach())
        return dispatch, balance + 0.1 * z_loss


class MoEFFN(nn.Module):
    """SwiGLU experts, dense dispatch (every expert sees every token, outputs
    are mixed with the sparse top-2 weights)."""

    def __init__(self, d_model: int, d_ff: int, n_experts: int):
        super().__init__()
        self.router = Top2Router(d_model, n_experts)
        self.w_gate = nn.Parameter(torch.randn(n_experts, d_model, d_ff) / math.sqrt(d_model))
        self.w_up = nn.Parameter(torch.randn(n_experts, d_model, d_ff) / math.sqrt(d_model))
        self.w_down = nn.Parameter(torch.randn(n_experts, d_ff, d_model) / math.sqrt(d_ff))

    def forward(self, x):
        dispatch, aux = self.router(x)                     # (B, T, E)
        g = torch.einsum("btd,edf->btef", x, self.w_gate)
        u = torch.einsum("btd,edf->btef", x, self.w_up)
        h = F.silu(g) * u
        y = torch.einsum("btef,efd->bted", h, self.w_down)
        return torch.einsum("bted,bte->btd", y, dispatch), aux


class Block(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, n_experts):
        super().__init__()
        self.ln1 = RMSNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_heads)
        self.ln2 = RMSNorm(d_model)
        self.moe = MoEFFN(d_model, d_ff, n_experts)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        y, aux = self.moe(self.ln2(x))
        return x + y, aux


class MoELM(nn.Module):
    def __init__(self, vocab=512, d_model=64, n_heads=4, d_ff=96, n_experts=4, n_layers=4, max_len=128):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList([Block(d_model, n_heads, d_ff, n_experts) for _ in range(n_layers)])
        self.ln_f = RMSNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)

    def routers(self):
        return [b.moe.router for b in self.blocks]

    def forward(self, idx, targets):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        aux_total = x.new_zeros(())
        for blk in self.blocks:
            x, aux = blk(x)
            aux_total = aux_total + aux
        logits = self.head(self.ln_f(x))
        lm_loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        return lm_loss, aux_total
