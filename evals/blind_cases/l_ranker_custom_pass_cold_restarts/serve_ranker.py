import os
import time

# persistent compile cache on the worker's volume (mounted at the same path on every restart)
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), ".inductor_cache"))
os.environ.setdefault("TORCHINDUCTOR_FX_GRAPH_CACHE", "1")
os.environ.setdefault("TORCHINDUCTOR_AUTOGRAD_CACHE", "1")

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch._inductor.config as inductor_config
from torch._dynamo.utils import counters

N_DENSE = 32
N_SPARSE = 8
EMB_ROWS = 5000
D = 64


def audit_graph_pass(graph: torch.fx.Graph):
    """Platform requirement: record which aten ops end up in every served graph."""
    ops = {}
    for node in graph.nodes:
        if node.op == "call_function":
            name = getattr(node.target, "__name__", str(node.target))
            ops[name] = ops.get(name, 0) + 1
    audit_graph_pass.last = ops


audit_graph_pass.last = {}
inductor_config.post_grad_custom_post_pass = audit_graph_pass


class CrossLayer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Linear(d, d)

    def forward(self, x0, x):
        return x0 * self.w(x) + x


class Ranker(nn.Module):
    def __init__(self, n_cross=3, n_mlp=4):
        super().__init__()
        self.emb = nn.ModuleList([nn.Embedding(EMB_ROWS, D) for _ in range(N_SPARSE)])
        self.dense = nn.Sequential(nn.Linear(N_DENSE, D), nn.LayerNorm(D), nn.SiLU())
        width = D * (N_SPARSE + 1)
        self.cross = nn.ModuleList([CrossLayer(width) for _ in range(n_cross)])
        layers = []
        for _ in range(n_mlp):
            layers += [nn.Linear(width, width), nn.LayerNorm(width), nn.SiLU()]
        self.mlp = nn.Sequential(*layers)
        self.out = nn.Linear(2 * width, 3)

    def forward(self, dense, sparse):
        feats = [self.dense(dense)] + [e(sparse[:, i]) for i, e in enumerate(self.emb)]
        x0 = torch.cat(feats, dim=1)
        x = x0
        for c in self.cross:
            x = c(x0, x)
        h = self.mlp(x0)
        logits = self.out(torch.cat([x, h], dim=1))
        click, cart, buy = logits.unbind(-1)
        return torch.sigmoid(click), torch.sigmoid(cart), torch.sigmoid(buy)


def request_batch(bs, seed):
    g = torch.Generator().manual_seed(seed)
    dense = torch.randn(bs, N_DENSE, generator=g)
    sparse = torch.randint(0, EMB_ROWS, (bs, N_SPARSE), generator=g)
    return dense, sparse


def main():
    t_start = time.time()
    torch.manual_seed(0)
    model = Ranker().eval()
    scorer = torch.compile(model, dynamic=False)

    t0 = time.time()
    with torch.inference_mode():
        scorer(*request_batch(256, 0))
    warm = time.time() - t0
    print(f"warm-up (compile) {warm:.1f}s")

    lat = []
    with torch.inference_mode():
        for i in range(50):
            batch = request_batch(256, i + 1)
            t0 = time.perf_counter()
            click, cart, buy = scorer(*batch)
            lat.append(time.perf_counter() - t0)
    lat.sort()
    print(f"p50 {1e3 * lat[len(lat) // 2]:.2f} ms  p99 {1e3 * lat[int(len(lat) * 0.99)]:.2f} ms")
    print(f"audited ops: {sum(audit_graph_pass.last.values())} nodes, {len(audit_graph_pass.last)} kinds")
    print("compile counters:", {k: dict(v) for k, v in counters.items() if k in ("inductor", "aot_autograd")})
    print(f"worker ready after {time.time() - t_start:.1f}s (cache dir {os.environ['TORCHINDUCTOR_CACHE_DIR']})")


if __name__ == "__main__":
    main()
