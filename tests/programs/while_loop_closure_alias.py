"""Personalized-PageRank smoothing with torch.while_loop whose body reads the starting logits from the enclosing
function, which also start the carried state (blind A/B batch 60's ev, pytorch#191582): torch.compile passes one
tensor to the loop twice and the alias check rejects it, naming cond_fn. FIXED=1: the loop starts from a copy."""
import os

import torch


def smooth(h0, adj, alpha=0.1, tol=1e-4):
    def cond_fn(i, h, delta):
        return (i < 50) & (delta > tol)

    def body_fn(i, h, delta):
        new = (1 - alpha) * adj @ h + alpha * h0
        return i + 1, new, (new - h).abs().max()

    start = h0.clone() if os.environ.get("FIXED") == "1" else h0
    _, h, _ = torch.while_loop(cond_fn, body_fn, (torch.tensor(0), start, torch.tensor(float("inf"))))
    return h


torch.manual_seed(0)
adj = torch.rand(32, 32)
adj = adj / adj.sum(1, keepdim=True)
h0 = torch.randn(32, 4)
out = torch.compile(smooth)(h0, adj)
print(f"max |compiled - eager| {(out - smooth(h0, adj)).abs().max().item():.2e}")
