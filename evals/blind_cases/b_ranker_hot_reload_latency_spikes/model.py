import torch
import torch.nn as nn
import torch.nn.functional as F


class FeatureTower(nn.Module):
    def __init__(self, n_dense, vocab_sizes, emb_dim, hidden):
        super().__init__()
        self.embs = nn.ModuleList([nn.Embedding(v, emb_dim) for v in vocab_sizes])
        self.dense_proj = nn.Linear(n_dense, emb_dim)
        d_in = emb_dim * (len(vocab_sizes) + 1)
        self.mlp = nn.Sequential(
            nn.Linear(d_in, hidden), nn.LayerNorm(hidden), nn.SiLU(),
            nn.Linear(hidden, hidden), nn.LayerNorm(hidden), nn.SiLU(),
        )

    def forward(self, dense, sparse):
        parts = [self.dense_proj(torch.log1p(dense.clamp_min(0)))]
        parts += [emb(sparse[:, i]) for i, emb in enumerate(self.embs)]
        return self.mlp(torch.cat(parts, dim=-1))


class CrossNet(nn.Module):
    def __init__(self, d, n_layers=3):
        super().__init__()
        self.w = nn.ModuleList([nn.Linear(d, d) for _ in range(n_layers)])

    def forward(self, x0):
        x = x0
        for lin in self.w:
            x = x0 * lin(x) + x
        return x


class Ranker(nn.Module):
    """Two-tower-ish ranker with DCN-style crossing; scores (user, item) pairs."""

    def __init__(self, n_dense=16, user_vocab=(5000, 200, 50), item_vocab=(20000, 300, 40),
                 emb_dim=32, hidden=256):
        super().__init__()
        self.user = FeatureTower(n_dense, user_vocab, emb_dim, hidden)
        self.item = FeatureTower(n_dense, item_vocab, emb_dim, hidden)
        self.cross = CrossNet(2 * hidden)
        self.head = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.SiLU(), nn.Linear(hidden, 3))

    def forward(self, u_dense, u_sparse, i_dense, i_sparse):
        u = self.user(u_dense, u_sparse)
        it = self.item(i_dense, i_sparse)
        x = self.cross(torch.cat([u, it], dim=-1))
        logits = self.head(x)
        # click / like / share probabilities and a blended score
        probs = torch.sigmoid(logits)
        score = probs @ torch.tensor([1.0, 2.0, 4.0], device=probs.device)
        return probs, score
