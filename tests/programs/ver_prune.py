"""Structured pruning inside a compiled step: the pruned weight replaces .data with a smaller tensor.
torch 2.14 fails while tracing it; torch 2.15 graph-breaks on it (GB6602/GB9182) and runs."""
import torch
from torch import nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4))
x = torch.randn(32, 16)


@torch.compile
def prune_and_eval(x, keep):
    w = net[0].weight
    idx = w.norm(dim=1).topk(keep).indices
    net[0].weight.data = w[idx].detach()        # keep the strongest rows
    net[0].bias.data = net[0].bias[idx].detach()
    net[2].weight.data = net[2].weight[:, idx].detach()
    return net(x)


out = prune_and_eval(x, 8)
print("pruned output", tuple(out.shape), f"{out.abs().mean().item():.4f}")
