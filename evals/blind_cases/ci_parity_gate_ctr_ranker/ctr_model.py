"""DLRM-style click-through-rate ranker used by the feed ranking service."""
from dataclasses import dataclass, field

import torch
import torch.nn as nn


@dataclass
class RankerConfig:
    table_sizes: tuple = (5000, 2000, 800, 300, 120, 50)
    embedding_dim: int = 16
    num_dense: int = 13
    bottom_mlp: tuple = (64, 32, 16)
    top_mlp: tuple = (64, 32)
    dropout: float = 0.1
    extra: dict = field(default_factory=dict)


def mlp(sizes, dropout=0.0, final_act=True):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2 or final_act:
            layers.append(nn.ReLU())
            if dropout > 0:
                layers.append(nn.Dropout(dropout))
    return nn.Sequential(*layers)


class DotInteraction(nn.Module):
    def forward(self, dense, sparse):
        # dense: [B, D], sparse: [B, T, D]
        feats = torch.cat([dense.unsqueeze(1), sparse], dim=1)
        inter = torch.bmm(feats, feats.transpose(1, 2))
        n = feats.shape[1]
        li, lj = torch.triu_indices(n, n, offset=1, device=feats.device)
        return torch.cat([dense, inter[:, li, lj]], dim=1)


class CTRRanker(nn.Module):
    def __init__(self, cfg: RankerConfig):
        super().__init__()
        self.cfg = cfg
        self.tables = nn.ModuleList(
            nn.EmbeddingBag(n, cfg.embedding_dim, mode="sum") for n in cfg.table_sizes
        )
        self.bottom = mlp((cfg.num_dense,) + tuple(cfg.bottom_mlp), cfg.dropout)
        self.interaction = DotInteraction()
        n_feat = len(cfg.table_sizes) + 1
        inter_dim = cfg.bottom_mlp[-1] + n_feat * (n_feat - 1) // 2
        self.top = mlp((inter_dim,) + tuple(cfg.top_mlp) + (1,), cfg.dropout, final_act=False)

    def forward(self, dense, sparse_ids, sparse_offsets):
        # sparse_ids / sparse_offsets: one (ids, offsets) pair per table
        d = self.bottom(torch.log1p(dense.clamp(min=0)))
        pooled = [tbl(ids, offs) for tbl, ids, offs in zip(self.tables, sparse_ids, sparse_offsets)]
        s = torch.stack(pooled, dim=1)
        x = self.interaction(d, s)
        return self.top(x).squeeze(-1), s


def build_model(cfg: RankerConfig) -> CTRRanker:
    model = CTRRanker(cfg)
    for tbl in model.tables:
        nn.init.uniform_(tbl.weight, -0.05, 0.05)
    return model


def synthetic_batch(cfg: RankerConfig, batch_size: int, gen: torch.Generator, max_bag: int = 4):
    dense = torch.rand(batch_size, cfg.num_dense, generator=gen) * 100
    ids, offsets = [], []
    for n in cfg.table_sizes:
        lens = torch.randint(1, max_bag + 1, (batch_size,), generator=gen)
        offs = torch.zeros(batch_size, dtype=torch.long)
        offs[1:] = torch.cumsum(lens, 0)[:-1]
        ids.append(torch.randint(0, n, (int(lens.sum()),), generator=gen))
        offsets.append(offs)
    return dense, ids, offsets
