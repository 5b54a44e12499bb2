"""Package the CTR ranker for the serving fleet.

1. build the ranker and load the latest weights (random init on dev boxes)
2. sanity-check eager logloss on a held-out slice
3. compare eager vs torch.compile latency (serving SLO check)
4. torch.export the model and write ranker.pt2 for the C++ runtime
"""
import argparse
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import ctr_ops

NUM_DENSE = 13
SPARSE_CARDINALITIES = [100_000, 50_000, 20_000, 10_000, 5_000, 2_000, 1_000, 500]
EMB_DIM = 32


def mlp(sizes, last_act=True):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2 or last_act:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class CTRRanker(nn.Module):
    def __init__(self, emb_dim=EMB_DIM, bottom=(512, 256), top=(512, 256, 1)):
        super().__init__()
        self.cards = SPARSE_CARDINALITIES
        self.embs = nn.ModuleList([nn.Embedding(c, emb_dim) for c in self.cards])
        self.bottom = mlp([NUM_DENSE, *bottom, emb_dim])
        n = len(self.cards) + 1
        inter_dim = emb_dim + n * (n - 1) // 2
        self.top = mlp([inter_dim, *top], last_act=False)
        self.dense_norm = nn.LayerNorm(NUM_DENSE)

    def forward(self, dense, raw_ids):
        # dense: [B, 13] float, raw_ids: [B, 8] int64 (unhashed feature ids)
        x = self.bottom(self.dense_norm(torch.log1p(dense.clamp_min(0))))
        sparse = []
        for f, emb in enumerate(self.embs):
            idx = ctr_ops.hash_bucketize(raw_ids[:, f], self.cards[f])
            sparse.append(emb(idx))
        sparse = torch.stack(sparse, dim=1)
        z = ctr_ops.dot_interact(x, sparse)
        return self.top(z).squeeze(-1)


def make_batch(batch_size, gen):
    dense = torch.rand(batch_size, NUM_DENSE, generator=gen) * 100
    raw_ids = torch.randint(0, 2**31 - 1, (batch_size, len(SPARSE_CARDINALITIES)), generator=gen)
    labels = (torch.rand(batch_size, generator=gen) < 0.12).float()
    return dense, raw_ids, labels


@torch.no_grad()
def eval_logloss(model, batches):
    total, n = 0.0, 0
    for dense, ids, y in batches:
        logits = model(dense, ids)
        total += F.binary_cross_entropy_with_logits(logits, y, reduction="sum").item()
        n += y.numel()
    return total / n


@torch.no_grad()
def bench(fn, batches, warmup=3, iters=20):
    for i in range(warmup):
        fn(*batches[i % len(batches)][:2])
    t0 = time.perf_counter()
    for i in range(iters):
        fn(*batches[i % len(batches)][:2])
    return (time.perf_counter() - t0) / iters * 1e3


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--ckpt", default="")
    p.add_argument("--out", default="ranker.pt2")
    p.add_argument("--skip-bench", action="store_true")
    args = p.parse_args()

    torch.manual_seed(0)
    model = CTRRanker().eval()
    if args.ckpt and os.path.exists(args.ckpt):
        model.load_state_dict(torch.load(args.ckpt, map_location="cpu"))
        print(f"loaded {args.ckpt}")
    else:
        print("no checkpoint given, using random init")

    gen = torch.Generator().manual_seed(1234)
    batches = [make_batch(args.batch_size, gen) for _ in range(8)]
    print(f"eager logloss: {eval_logloss(model, batches):.4f}")

    if not args.skip_bench:
        compiled = torch.compile(model)
        ref = model(*batches[0][:2])
        got = compiled(*batches[0][:2])
        print(f"compiled vs eager max abs diff: {(ref - got).abs().max().item():.2e}")
        t_eager = bench(model, batches)
        t_comp = bench(compiled, batches)
        print(f"latency  eager {t_eager:.2f} ms/batch   compiled {t_comp:.2f} ms/batch")

    example = batches[0][:2]
    batch = torch.export.Dim("batch", min=1, max=4096)
    ep = torch.export.export(model, example, dynamic_shapes=({0: batch}, {0: batch}))
    torch.export.save(ep, args.out)
    print(f"wrote {args.out}")

    loaded = torch.export.load(args.out).module()
    with torch.no_grad():
        for dense, ids, _ in batches[:3]:
            diff = (loaded(dense, ids) - model(dense, ids)).abs().max().item()
            print(f"exported vs eager max abs diff: {diff:.2e}")


if __name__ == "__main__":
    main()
