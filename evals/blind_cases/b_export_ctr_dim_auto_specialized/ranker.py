"""DLRM-style ranking model: dense features + sparse ids + recent-click history."""
import torch
import torch.nn as nn


class HistoryPooling(nn.Module):
    """Target attention over the user's recent clicked items (DIN-style)."""

    def __init__(self, dim):
        super().__init__()
        self.score = nn.Sequential(nn.Linear(4 * dim, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, target, hist, hist_mask):
        # target: [B, D], hist: [B, L, D], hist_mask: [B, L]
        t = target.unsqueeze(1).expand_as(hist)
        feats = torch.cat([t, hist, t - hist, t * hist], dim=-1)
        w = self.score(feats).squeeze(-1)
        w = w.masked_fill(hist_mask == 0, -1e4).softmax(dim=-1)
        return torch.bmm(w.unsqueeze(1), hist).squeeze(1)


class Ranker(nn.Module):
    def __init__(self, num_dense=13, table_sizes=(1000,) * 8, item_vocab=5000, dim=32):
        super().__init__()
        self.bottom = nn.Sequential(nn.Linear(num_dense, 128), nn.ReLU(), nn.Linear(128, dim))
        self.tables = nn.ModuleList([nn.Embedding(n, dim) for n in table_sizes])
        self.items = nn.Embedding(item_vocab, dim, padding_idx=0)
        self.hist_pool = HistoryPooling(dim)
        n_vec = 1 + len(table_sizes) + 2
        n_inter = n_vec * (n_vec - 1) // 2
        self.top = nn.Sequential(
            nn.Linear(dim + n_inter, 256), nn.ReLU(), nn.Linear(256, 64), nn.ReLU(), nn.Linear(64, 1)
        )
        iu = torch.triu_indices(n_vec, n_vec, offset=1)
        self.register_buffer("iu0", iu[0].clone(), persistent=False)
        self.register_buffer("iu1", iu[1].clone(), persistent=False)

    def forward(self, dense, sparse_ids, target_item, history):
        d = self.bottom(dense)
        sparse = [tbl(sparse_ids[:, i]) for i, tbl in enumerate(self.tables)]
        tgt = self.items(target_item)
        hist = self.items(history)
        pooled = self.hist_pool(tgt, hist, (history != 0).to(hist.dtype))
        vecs = torch.stack([d, *sparse, tgt, pooled], dim=1)
        inter = torch.bmm(vecs, vecs.transpose(1, 2))[:, self.iu0, self.iu1]
        return self.top(torch.cat([d, inter], dim=1)).squeeze(-1)
