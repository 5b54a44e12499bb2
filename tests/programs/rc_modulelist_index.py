"""A multi-site scorer: a shared encoder and one head per site in an nn.ModuleList, the whole model compiled, the
head picked with self.heads[site] from a Python int per request: every site is a graph of its own (the index is a
constant while tracing; blind A/B batch 49). FIXED=1 compiles only the shared encoder: one graph for every site."""
import os

import torch
import torch.nn as nn


class SiteScorer(nn.Module):
    def __init__(self, n_sites=4, dim=16):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(8, dim), nn.ReLU(), nn.Linear(dim, dim))
        self.heads = nn.ModuleList(nn.Linear(dim, 1) for _ in range(n_sites))

    def forward(self, x, site: int):
        return self.heads[site](self.encoder(x)).squeeze(-1)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = SiteScorer().eval()
    if os.environ.get("FIXED"):
        model.encoder.compile(backend="eager")
        scorer = model
    else:
        scorer = torch.compile(model, backend="eager")
    with torch.no_grad():
        for site in (0, 1, 2, 3, 1):
            print(f"site {site}: score {scorer(torch.randn(5, 8), site).mean().item():.4f}")
