"""Token router for the sparse-expert FFN.

Each token gets a budget of expert slots proportional to the probability mass that
lands on enabled experts; disabled experts (expert_mask == 0) give their mass up.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ExpertFFN(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.w1 = nn.Linear(d_model, d_ff)
        self.w2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.w2(F.gelu(self.w1(x)))


class BudgetRouterMoE(nn.Module):
    def __init__(self, d_model=64, d_ff=128, n_experts=8, max_slots=2, expert_mask=None):
        super().__init__()
        self.gate = nn.Linear(d_model, n_experts, bias=False)
        self.experts = nn.ModuleList(ExpertFFN(d_model, d_ff) for _ in range(n_experts))
        self.max_slots = max_slots
        if expert_mask is not None:
            self.register_buffer("expert_mask", expert_mask.float())
        else:
            self.expert_mask = None

    def route(self, x):
        probs = self.gate(x).softmax(dim=-1)
        if self.expert_mask is not None:
            probs = probs * self.expert_mask
        mass = probs.sum(dim=-1)
        slots = torch.floor(mass * self.max_slots).long()
        return probs, slots

    def forward(self, x):
        b, t, d = x.shape
        flat = x.reshape(-1, d)
        probs, slots = self.route(flat)
        top_p, top_i = probs.topk(self.max_slots, dim=-1)
        keep = torch.arange(self.max_slots, device=x.device)[None, :] < slots[:, None]
        weights = top_p * keep
        weights = weights / weights.sum(dim=-1, keepdim=True).clamp(min=1e-9)
        out = torch.zeros_like(flat)
        for e, expert in enumerate(self.experts):
            sel = (top_i == e).to(flat.dtype) * weights
            out = out + expert(flat) * sel.sum(dim=-1, keepdim=True)
        return out.reshape(b, t, d), slots.reshape(b, t)
