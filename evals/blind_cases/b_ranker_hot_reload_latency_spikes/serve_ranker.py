"""Ranking service loop with hot checkpoint reload.

The trainer publishes a new checkpoint every few minutes; the server swaps it in
between requests.  Here the trainer is simulated (perturbed weights written to a
checkpoint dir) and requests are replayed from a synthetic trace.

Run:  python serve_ranker.py
"""
import argparse
import os
import statistics
import tempfile
import time

import torch

from model import Ranker

USER_VOCAB = (5000, 200, 50)
ITEM_VOCAB = (20000, 300, 40)


class CheckpointPublisher:
    """Stands in for the trainer: writes ckpt-000N.pt files."""

    def __init__(self, root):
        self.root = root
        self.version = 0
        torch.manual_seed(0)
        self.state = Ranker(user_vocab=USER_VOCAB, item_vocab=ITEM_VOCAB).state_dict()

    def publish(self):
        self.version += 1
        with torch.no_grad():
            for v in self.state.values():
                if v.is_floating_point():
                    v.add_(0.01 * torch.randn_like(v))
        path = os.path.join(self.root, f"ckpt-{self.version:04d}.pt")
        torch.save(self.state, path)
        return path


class RankingServer:
    def __init__(self, compile_model=True):
        self.compile_model = compile_model
        self.model = None
        self.version = None

    def load(self, path):
        """Swap in a freshly published checkpoint."""
        model = Ranker(user_vocab=USER_VOCAB, item_vocab=ITEM_VOCAB)
        model.load_state_dict(torch.load(path, map_location="cpu"))
        model.eval()
        if self.compile_model:
            torch._dynamo.reset()
            model = torch.compile(model, dynamic=True)
        self.model = model
        self.version = os.path.basename(path)

    @torch.inference_mode()
    def score(self, req):
        probs, score = self.model(req["u_dense"], req["u_sparse"], req["i_dense"], req["i_sparse"])
        order = torch.argsort(score, descending=True)
        return order[:10], probs


def make_request(g):
    n = int(torch.randint(50, 400, (1,), generator=g))  # candidates for this request
    u_sparse = torch.stack([torch.randint(0, v, (1,), generator=g) for v in USER_VOCAB], 1).expand(n, -1)
    i_sparse = torch.stack([torch.randint(0, v, (n,), generator=g) for v in ITEM_VOCAB], 1)
    return {
        "u_dense": torch.rand(1, 16, generator=g).expand(n, -1) * 10,
        "u_sparse": u_sparse,
        "i_dense": torch.rand(n, 16, generator=g) * 10,
        "i_sparse": i_sparse,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=240)
    ap.add_argument("--reload-every", type=int, default=40)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--slo-ms", type=float, default=250.0)
    args = ap.parse_args()

    ckpt_dir = tempfile.mkdtemp(prefix="ranker_ckpts_")
    pub = CheckpointPublisher(ckpt_dir)
    server = RankingServer(compile_model=not args.no_compile)
    server.load(pub.publish())

    g = torch.Generator().manual_seed(123)
    lat = []
    t_start = time.perf_counter()
    for i in range(args.requests):
        if i > 0 and i % args.reload_every == 0:
            server.load(pub.publish())
        req = make_request(g)
        t0 = time.perf_counter()
        top, _ = server.score(req)
        ms = (time.perf_counter() - t0) * 1000
        lat.append(ms)
        if ms > args.slo_ms:
            print(f"req {i:4d} ({server.version}, {req['i_dense'].shape[0]} cands): {ms:8.1f} ms  > SLO", flush=True)

    lat_sorted = sorted(lat)
    p = lambda q: lat_sorted[min(len(lat) - 1, int(q * len(lat)))]
    over = sum(1 for x in lat if x > args.slo_ms)
    print(f"requests {len(lat)}  p50 {p(0.50):.1f} ms  p99 {p(0.99):.1f} ms  max {max(lat):.1f} ms  "
          f"mean {statistics.mean(lat):.1f} ms  over SLO: {over}")
    print(f"wall time {time.perf_counter() - t_start:.1f}s")


if __name__ == "__main__":
    main()
