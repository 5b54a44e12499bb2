"""Semi-supervised node classification with a 2-layer GCN (Kipf & Welling style).

Synthetic citation-like graph so the script runs without downloads: nodes belong to communities,
edges are mostly intra-community, features are noisy bag-of-words vectors.
"""
import argparse
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_graph(n_nodes=2708, n_feats=512, n_classes=7, avg_degree=4, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, n_classes, size=n_nodes)
    n_edges = n_nodes * avg_degree // 2
    src = rng.integers(0, n_nodes, size=n_edges * 3)
    dst = rng.integers(0, n_nodes, size=n_edges * 3)
    same = labels[src] == labels[dst]
    keep = same | (rng.random(n_edges * 3) < 0.15)
    src, dst = src[keep][:n_edges], dst[keep][:n_edges]

    centroids = rng.random((n_classes, n_feats)) < 0.04
    feats = (rng.random((n_nodes, n_feats)) < 0.01) | (centroids[labels] & (rng.random((n_nodes, n_feats)) < 0.35))
    feats = feats.astype(np.float32)
    feats /= np.maximum(feats.sum(1, keepdims=True), 1.0)
    return src, dst, feats, labels


def normalized_adjacency(src, dst, n_nodes):
    """D^-1/2 (A + I) D^-1/2 as a sparse COO tensor."""
    rows = np.concatenate([src, dst, np.arange(n_nodes)])
    cols = np.concatenate([dst, src, np.arange(n_nodes)])
    idx = torch.from_numpy(np.stack([rows, cols])).long()
    vals = torch.ones(idx.shape[1])
    adj = torch.sparse_coo_tensor(idx, vals, (n_nodes, n_nodes)).coalesce()
    deg = torch.sparse.sum(adj, dim=1).to_dense()
    d_inv_sqrt = deg.pow(-0.5)
    i, j = adj.indices()
    norm_vals = d_inv_sqrt[i] * adj.values() * d_inv_sqrt[j]
    return torch.sparse_coo_tensor(adj.indices(), norm_vals, adj.shape).coalesce()


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(in_features, out_features))
        self.bias = nn.Parameter(torch.zeros(out_features)) if bias else None
        nn.init.xavier_uniform_(self.weight)

    def forward(self, x, adj):
        support = x @ self.weight
        out = torch.sparse.mm(adj, support)
        if self.bias is not None:
            out = out + self.bias
        return out


class GCN(nn.Module):
    def __init__(self, n_feats, n_hidden, n_classes, dropout=0.5):
        super().__init__()
        self.gc1 = GraphConvolution(n_feats, n_hidden)
        self.gc2 = GraphConvolution(n_hidden, n_classes)
        self.dropout = dropout

    def forward(self, x, adj):
        x = F.dropout(x, self.dropout, self.training)
        x = F.relu(self.gc1(x, adj))
        x = F.dropout(x, self.dropout, self.training)
        return F.log_softmax(self.gc2(x, adj), dim=1)


def accuracy(log_probs, labels):
    return (log_probs.argmax(1) == labels).float().mean().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=120)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--weight-decay", type=float, default=5e-4)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--fullgraph", action="store_true", help="fail loudly instead of silently falling back")
    args = ap.parse_args()

    torch.manual_seed(42)
    src, dst, feats, labels = make_graph()
    n = feats.shape[0]
    adj = normalized_adjacency(src, dst, n)
    x = torch.from_numpy(feats)
    y = torch.from_numpy(labels).long()

    perm = torch.randperm(n)
    idx_train, idx_val, idx_test = perm[:140], perm[140:640], perm[1708:]

    model = GCN(x.shape[1], args.hidden, int(y.max()) + 1)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    step_model = model if args.no_compile else torch.compile(model, fullgraph=args.fullgraph)

    print(f"graph: {n} nodes, {adj._nnz()} nnz in normalized adjacency, {x.shape[1]} features")
    t0 = time.perf_counter()
    epoch_times = []
    for epoch in range(args.epochs):
        te = time.perf_counter()
        model.train()
        opt.zero_grad(set_to_none=True)
        out = step_model(x, adj)
        loss = F.nll_loss(out[idx_train], y[idx_train])
        loss.backward()
        opt.step()
        epoch_times.append(time.perf_counter() - te)

        if epoch % 20 == 0 or epoch == args.epochs - 1:
            model.eval()
            with torch.no_grad():
                out = step_model(x, adj)
            print(f"epoch {epoch:3d} loss {loss.item():.4f} "
                  f"train {accuracy(out[idx_train], y[idx_train]):.3f} "
                  f"val {accuracy(out[idx_val], y[idx_val]):.3f} "
                  f"({epoch_times[-1] * 1000:.1f} ms)")

    model.eval()
    with torch.no_grad():
        out = step_model(x, adj)
    steady = sorted(epoch_times[10:])[len(epoch_times[10:]) // 2]
    print(f"test acc {accuracy(out[idx_test], y[idx_test]):.3f}; "
          f"total {time.perf_counter() - t0:.1f}s, median epoch {steady * 1000:.2f} ms")


if __name__ == "__main__":
    main()
