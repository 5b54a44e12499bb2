"""Nightly latency gate for the CTR ranking service.

Builds the ranker, runs the same replayed request batches through the eager
model and the torch.compile'd model, checks the scores agree and that the
compiled model is fast enough to ship.
"""
import time
import statistics

import torch
import torch.nn as nn

torch.manual_seed(0)

DENSE_FEATURES = [
    "hour_sin", "hour_cos", "ctr_7d", "ctr_30d", "imp_7d", "clk_7d", "price",
    "discount", "dwell_avg", "session_len", "pos_hist", "age_days", "rating",
]
SPARSE_FEATURES = [
    "user_id", "item_id", "category", "brand", "shop_id", "geo", "device",
    "query_bucket", "last_item", "last_cat", "campaign", "creative",
]
HASH_BUCKETS = 20_000
EMB_DIM = 16
BATCH = 2048
N_BATCHES = 20
SPEEDUP_GATE = 1.10


class HashedEmbeddings(nn.Module):
    """One hashed embedding table per sparse feature.

    Request batches are heavy-tailed (a few popular items/shops/campaigns
    dominate), so ids are deduplicated per table before the lookup (see DCNRanker.forward).
    """

    def __init__(self, names, buckets, dim):
        super().__init__()
        self.names = list(names)
        self.buckets = buckets
        self.tables = nn.ModuleList(nn.Embedding(buckets, dim) for _ in self.names)


class CrossLayer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x0, x):
        return x0 * self.proj(x) + x


class DCNRanker(nn.Module):
    def __init__(self, n_dense, sparse_names, buckets, emb_dim, n_cross=3):
        super().__init__()
        self.embeddings = HashedEmbeddings(sparse_names, buckets, emb_dim)
        width = n_dense + len(sparse_names) * emb_dim
        self.norm = nn.LayerNorm(width)
        self.cross = nn.ModuleList(CrossLayer(width) for _ in range(n_cross))
        self.deep = nn.Sequential(
            nn.Linear(width, 256), nn.GELU(),
            nn.Linear(256, 64), nn.GELU(),
        )
        self.head = nn.Linear(64 + width, 1)

    def forward(self, dense, sparse):
        dense = torch.log1p(dense.clamp_min(0.0))
        feats = [dense]
        for col, table in enumerate(self.embeddings.tables):
            ids = sparse[:, col] % self.embeddings.buckets
            uniq, inverse = torch.unique(ids, return_inverse=True)
            feats.append(table(uniq)[inverse])
        x0 = self.norm(torch.cat(feats, dim=1))
        x = x0
        for layer in self.cross:
            x = layer(x0, x)
        logits = self.head(torch.cat([self.deep(x0), x], dim=1))
        return torch.sigmoid(logits.squeeze(1))


def replay_batches(n, batch, gen):
    """Synthetic stand-in for the replayed request log (Zipf-ish ids)."""
    batches = []
    for _ in range(n):
        dense = torch.rand(batch, len(DENSE_FEATURES), generator=gen) * 5.0
        ranks = torch.rand(batch, len(SPARSE_FEATURES), generator=gen)
        sparse = (ranks.pow(3.0) * 1_000_003).long()
        batches.append((dense, sparse))
    return batches


@torch.no_grad()
def time_model(fn, batches, repeats=2):
    per_batch = []
    outputs = []
    for r in range(repeats):
        for dense, sparse in batches:
            t0 = time.perf_counter()
            scores = fn(dense, sparse)
            per_batch.append(time.perf_counter() - t0)
            if r == 0:
                outputs.append(scores)
    return statistics.median(per_batch) * 1e3, outputs


def main():
    print(f"torch {torch.__version__}, threads={torch.get_num_threads()}")
    model = DCNRanker(len(DENSE_FEATURES), SPARSE_FEATURES, HASH_BUCKETS, EMB_DIM).eval()
    n_params = sum(p.numel() for p in model.parameters())
    print(f"ranker params: {n_params / 1e6:.2f}M")

    gen = torch.Generator().manual_seed(1234)
    warmup = replay_batches(3, BATCH, gen)
    batches = replay_batches(N_BATCHES, BATCH, gen)

    compiled = torch.compile(model)
    t0 = time.perf_counter()
    with torch.no_grad():
        for dense, sparse in warmup:
            compiled(dense, sparse)
            model(dense, sparse)
    print(f"warm-up (incl. compile): {time.perf_counter() - t0:.1f}s")

    eager_ms, eager_out = time_model(model, batches)
    comp_ms, comp_out = time_model(compiled, batches)
    eager_ms2, _ = time_model(model, batches)
    eager_ms = min(eager_ms, eager_ms2)

    max_diff = max((a - b).abs().max().item() for a, b in zip(eager_out, comp_out))
    speedup = eager_ms / comp_ms
    print(f"eager    : {eager_ms:7.2f} ms/batch")
    print(f"compiled : {comp_ms:7.2f} ms/batch")
    print(f"speedup  : {speedup:.2f}x   max |score diff| = {max_diff:.2e}")

    ok = max_diff < 1e-4 and speedup >= SPEEDUP_GATE
    print("LATENCY GATE:", "PASS" if ok else f"FAIL (need >= {SPEEDUP_GATE:.2f}x)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
