"""CPU ranking worker.

Each pod runs one worker.  At startup the worker loads the ranker, compiles it
for the request-size buckets it serves and then handles traffic.  Startup time
matters: pods are rescheduled often and traffic is not routed to a pod until
warm-up is done.  The inductor cache lives on a persistent volume mounted at
$RANKER_CACHE (default ./inductor_cache) so restarted pods should start warm.
"""
import argparse
import os
import statistics
import time

os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.environ.get("RANKER_CACHE", os.path.abspath("inductor_cache")))

import torch
import torch.nn as nn
import torch._inductor.config as inductor_config

# CPU inference settings from the perf tuning guide
inductor_config.freezing = True
torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))

BUCKETS = (8, 32, 128)
N_DENSE = 48
N_SPARSE = 6
EMB_ROWS = 5000
EMB_DIM = 32


class CrossLayer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, d)

    def forward(self, x0, x):
        return x0 * self.lin(x) + x


class Ranker(nn.Module):
    """DCN-v2 style ranker: dense features + a few hashed sparse ids."""

    def __init__(self):
        super().__init__()
        self.tables = nn.ModuleList([nn.Embedding(EMB_ROWS, EMB_DIM) for _ in range(N_SPARSE)])
        d = N_DENSE + N_SPARSE * EMB_DIM
        self.dense_norm = nn.LayerNorm(N_DENSE)
        self.cross = nn.ModuleList([CrossLayer(d) for _ in range(3)])
        self.deep = nn.Sequential(
            nn.Linear(d, 256), nn.ReLU(),
            nn.Linear(256, 128), nn.ReLU(),
            nn.Linear(128, 64), nn.ReLU(),
        )
        self.out = nn.Linear(d + 64, 1)

    def forward(self, dense, sparse):
        embs = [t(sparse[:, i]) for i, t in enumerate(self.tables)]
        x0 = torch.cat([self.dense_norm(dense)] + embs, dim=1)
        x = x0
        for layer in self.cross:
            x = layer(x0, x)
        h = self.deep(x0)
        return torch.sigmoid(self.out(torch.cat([x, h], dim=1))).squeeze(1)


def load_ranker():
    torch.manual_seed(0)
    model = Ranker().eval()
    # (production loads weights from the model store here)
    return model


def make_request(n, g):
    dense = torch.randn(n, N_DENSE, generator=g)
    sparse = torch.randint(0, EMB_ROWS, (n, N_SPARSE), generator=g)
    return dense, sparse


def pad_to_bucket(dense, sparse):
    n = dense.shape[0]
    b = next(b for b in BUCKETS if b >= n)
    dense_buf = dense.new_zeros(b, dense.shape[1])
    sparse_buf = sparse.new_zeros(b, sparse.shape[1])
    dense_buf[:n] = dense
    sparse_buf[:n] = sparse
    return dense_buf, sparse_buf, n


class Worker:
    def __init__(self):
        self.model = load_ranker()
        self.compiled = torch.compile(self.model, dynamic=False)

    @torch.inference_mode()
    def warmup(self):
        g = torch.Generator().manual_seed(1)
        t0 = time.perf_counter()
        for b in BUCKETS:
            tb = time.perf_counter()
            self.score(*make_request(b, g))
            print(f"  warm-up bucket {b:4d}: {time.perf_counter() - tb:6.2f} s")
        return time.perf_counter() - t0

    @torch.inference_mode()
    def score(self, dense, sparse):
        dense, sparse, n = pad_to_bucket(dense, sparse)
        return self.compiled(dense, sparse)[:n]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=200)
    args = ap.parse_args()

    print(f"torch {torch.__version__}, cache dir {os.environ['TORCHINDUCTOR_CACHE_DIR']}")
    t_start = time.perf_counter()
    worker = Worker()
    warm = worker.warmup()
    print(f"startup: warm-up {warm:.2f} s, ready after {time.perf_counter() - t_start:.2f} s")

    g = torch.Generator().manual_seed(2)
    lat = []
    for i in range(args.requests):
        n = int(torch.randint(1, BUCKETS[-1] + 1, (1,), generator=g))
        dense, sparse = make_request(n, g)
        t = time.perf_counter()
        scores = worker.score(dense, sparse)
        lat.append(1e3 * (time.perf_counter() - t))
        assert scores.shape == (n,)
    lat.sort()
    print(f"served {args.requests} requests: p50 {statistics.median(lat):.3f} ms, p99 {lat[int(0.99 * len(lat))]:.3f} ms")


if __name__ == "__main__":
    main()
