"""Train Poincare embeddings of a taxonomy, then export tangent-space vectors for the ANN index.

The export path (logmap0 + depth readout) runs on every nightly refresh, so it is compiled.
A parity check against the eager export guards the compiled path.
"""
import argparse
import logging
import time

import torch
import torch.nn as nn

log = logging.getLogger("poincare")
EPS = 1e-5
MAX_NORM = 1.0 - 1e-5


def build_taxonomy(branching, depth):
    parent = [-1]
    frontier = [0]
    for _ in range(depth):
        nxt = []
        for p in frontier:
            for _ in range(branching):
                parent.append(p)
                nxt.append(len(parent) - 1)
        frontier = nxt
    # transitive closure: (child, ancestor) pairs
    pairs = []
    for node in range(1, len(parent)):
        a = parent[node]
        while a != -1:
            pairs.append((node, a))
            a = parent[a]
    levels = [0] * len(parent)
    for node in range(1, len(parent)):
        levels[node] = levels[parent[node]] + 1
    return torch.tensor(pairs), torch.tensor(levels), len(parent)


def mobius_add(x, y):
    xy = (x * y).sum(-1, keepdim=True)
    x2 = (x * x).sum(-1, keepdim=True)
    y2 = (y * y).sum(-1, keepdim=True)
    num = (1 + 2 * xy + y2) * x + (1 - x2) * y
    den = 1 + 2 * xy + x2 * y2
    return num / den.clamp_min(EPS)


def poincare_dist(u, v):
    diff = mobius_add(-u, v).norm(dim=-1).clamp(max=MAX_NORM)
    return 2 * torch.atanh(diff)


def logmap0(x):
    n = x.norm(dim=-1, keepdim=True).clamp(min=1e-15, max=MAX_NORM)
    return torch.atanh(n) * x / n


class PoincareEmbedding(nn.Module):
    def __init__(self, n, dim, init_scale):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n, dim).uniform_(-init_scale, init_scale))

    def forward(self, idx):
        return self.weight[idx]


def rsgd_step(param, lr):
    with torch.no_grad():
        g = param.grad
        scale = ((1 - param.pow(2).sum(-1, keepdim=True)) ** 2) / 4
        param.sub_(lr * scale * g)
        norms = param.norm(dim=-1, keepdim=True)
        param.mul_(torch.where(norms > MAX_NORM, MAX_NORM / norms, torch.ones_like(norms)))
        param.grad = None


def train(model, pairs, n_nodes, epochs, burnin, batch, negs, lr, gen):
    for ep in range(epochs):
        perm = torch.randperm(len(pairs), generator=gen)
        cur_lr = lr / 10 if ep < burnin else lr
        total = 0.0
        for i in range(0, len(pairs), batch):
            b = pairs[perm[i:i + batch]]
            neg = torch.randint(0, n_nodes, (len(b), negs), generator=gen)
            cand = torch.cat([b[:, 1:], neg], 1)
            u = model(b[:, 0]).unsqueeze(1)
            v = model(cand)
            d = poincare_dist(u.expand_as(v), v)
            loss = nn.functional.cross_entropy(-d, torch.zeros(len(b), dtype=torch.long))
            loss.backward()
            rsgd_step(model.weight, cur_lr)
            total += loss.item() * len(b)
        log.info("epoch %d lr %.3f loss %.4f", ep, cur_lr, total / len(pairs))


def export_tangent(emb, levels):
    tangent = logmap0(emb)
    depth = 2 * torch.atanh(emb.norm(dim=-1).clamp(max=MAX_NORM))
    per_level = torch.stack([depth[levels == l].mean() for l in range(int(levels.max()) + 1)])
    return tangent, depth, per_level


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--branching", type=int, default=4)
    ap.add_argument("--depth", type=int, default=5)
    ap.add_argument("--dim", type=int, default=10)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--burnin", type=int, default=2)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--negs", type=int, default=10)
    ap.add_argument("--lr", type=float, default=0.3)
    ap.add_argument("--init-scale", type=float, default=1e-5)
    ap.add_argument("--rtol", type=float, default=1e-5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    pairs, levels, n = build_taxonomy(args.branching, args.depth)
    log.info("taxonomy: %d nodes, %d closure pairs", n, len(pairs))
    model = PoincareEmbedding(n, args.dim, args.init_scale)
    t0 = time.time()
    train(model, pairs, n, args.epochs, args.burnin, args.batch, args.negs, args.lr, gen)
    log.info("training took %.1fs", time.time() - t0)

    emb = model.weight.detach().clone()
    norms = emb.norm(dim=-1)
    log.info("embedding norms: min %.3g median %.3g max %.3g", norms.min(), norms.median(), norms.max())

    eager_t, eager_d, eager_lvl = export_tangent(emb, levels)
    export_c = torch.compile(export_tangent)
    t0 = time.time()
    comp_t, comp_d, comp_lvl = export_c(emb, levels)
    log.info("compiled export ready in %.1fs", time.time() - t0)

    log.info("mean depth per level (eager):    %s", " ".join(f"{x:.4g}" for x in eager_lvl.tolist()))
    log.info("mean depth per level (compiled): %s", " ".join(f"{x:.4g}" for x in comp_lvl.tolist()))
    rel_t = ((comp_t - eager_t).norm(dim=-1) / eager_t.norm(dim=-1))
    rel_d = (comp_d - eager_d).abs() / eager_d.abs()
    rel = torch.maximum(rel_t, rel_d)
    worst = int(rel.argmax())
    log.info("tangent rel diff max %.3g | depth rel diff max %.3g", rel_t.max(), rel_d.max())
    log.info("worst node %d (level %d, norm %.3g): depth eager %.6g compiled %.6g; rows over rtol: %d/%d",
             worst, int(levels[worst]), norms[worst], eager_d[worst], comp_d[worst],
             int((rel > args.rtol).sum()), n)
    if (rel > args.rtol).any():
        log.error("PARITY FAILED: compiled export differs from eager beyond rtol=%g", args.rtol)
        raise SystemExit(1)
    log.info("parity OK")


if __name__ == "__main__":
    main()
