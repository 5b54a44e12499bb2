import torch
import torch.nn as nn

from features import CATEGORICAL, NUMERIC


class ChurnRanker(nn.Module):
    def __init__(self, emb_dim=8, hidden=64):
        super().__init__()
        self.tables = nn.ModuleDict({name: nn.Embedding(v, emb_dim) for name, v in CATEGORICAL.items()})
        self.num_norm = nn.LayerNorm(len(NUMERIC))
        in_dim = emb_dim * len(CATEGORICAL) + len(NUMERIC)
        self.mlp = nn.Sequential(
            nn.Linear(in_dim, hidden), nn.GELU(),
            nn.Linear(hidden, hidden), nn.GELU(),
            nn.Linear(hidden, 1),
        )

    def embed(self, batch):
        # the export also carries ids/timestamps and, for older partitions, fewer columns;
        # only look up the categorical columns that are both present and known
        present = set(batch) & set(self.tables)
        missing = set(self.tables) - present
        if missing:
            raise KeyError(f"batch is missing categorical columns {sorted(missing)}")
        return [self.tables[name](batch[name]) for name in present]

    def forward(self, batch):
        parts = self.embed(batch)
        parts.append(self.num_norm(batch["numeric"]))
        return self.mlp(torch.cat(parts, dim=-1)).squeeze(-1)
