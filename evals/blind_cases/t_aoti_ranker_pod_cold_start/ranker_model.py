import torch
import torch.nn as nn


class CrossLayer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Linear(d, d)

    def forward(self, x0, x):
        return x0 * self.w(x) + x


class CTRRanker(nn.Module):
    """DCN-v2 style ranker: sparse embeddings + dense features -> cross net + deep tower."""

    def __init__(self, n_dense=13, table_sizes=(1000, 500, 200, 50, 20), emb_dim=16, n_cross=3, hidden=(128, 64)):
        super().__init__()
        self.tables = nn.ModuleList(nn.Embedding(n, emb_dim) for n in table_sizes)
        self.dense_proj = nn.Linear(n_dense, emb_dim)
        d = emb_dim * (len(table_sizes) + 1)
        self.cross = nn.ModuleList(CrossLayer(d) for _ in range(n_cross))
        layers, prev = [], d
        for h in hidden:
            layers += [nn.Linear(prev, h), nn.ReLU()]
            prev = h
        self.deep = nn.Sequential(*layers)
        self.out = nn.Linear(prev + d, 1)

    def forward(self, dense, sparse):
        embs = [t(sparse[:, i]) for i, t in enumerate(self.tables)]
        x0 = torch.cat([self.dense_proj(torch.log1p(dense.clamp_min(0)))] + embs, dim=-1)
        x = x0
        for layer in self.cross:
            x = layer(x0, x)
        return torch.sigmoid(self.out(torch.cat([x, self.deep(x0)], dim=-1))).squeeze(-1)


def example_inputs(batch=64, seed=0):
    g = torch.Generator().manual_seed(seed)
    dense = torch.rand(batch, 13, generator=g) * 10
    sparse = torch.stack([torch.randint(0, n, (batch,), generator=g) for n in (1000, 500, 200, 50, 20)], dim=1)
    return dense, sparse
