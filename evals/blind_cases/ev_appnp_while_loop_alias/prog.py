"""Nightly node-classification scoring job.

Trains a small feature MLP on the labelled nodes of a citation-style graph,
then smooths the logits with personalized-PageRank propagation (APPNP-style)
until the update falls below a tolerance. The propagation uses torch.while_loop
so the early stop stays inside the compiled graph; the scoring function is
torch.compile'd because the production graph is ~40x larger than this fixture.
"""
import time
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

NUM_NODES = 3000
NUM_CLASSES = 6
FEAT_DIM = 64
P_IN, P_OUT = 0.012, 0.0008
TRAIN_FRAC = 0.05
ALPHA = 0.1
TOL = 1e-4
MAX_ITER = 60


# ----------------------------------------------------------------- data
def make_sbm_graph(n, k, p_in, p_out, feat_dim, noise=2.5):
    labels = torch.randint(0, k, (n,))
    same = labels.unsqueeze(0) == labels.unsqueeze(1)
    probs = torch.where(same, torch.tensor(p_in), torch.tensor(p_out))
    adj = torch.rand(n, n) < probs
    adj = torch.triu(adj, diagonal=1)
    adj = adj | adj.T
    src, dst = adj.nonzero(as_tuple=True)
    centers = torch.randn(k, feat_dim)
    feats = centers[labels] + noise * torch.randn(n, feat_dim)
    return feats, labels, src, dst


def sym_norm_weights(src, dst, n):
    # add self loops, then D^-1/2 A D^-1/2
    loops = torch.arange(n)
    src = torch.cat([src, loops])
    dst = torch.cat([dst, loops])
    deg = torch.zeros(n).index_add_(0, dst, torch.ones_like(dst, dtype=torch.float32))
    dinv = deg.clamp_min(1).rsqrt()
    w = dinv[src] * dinv[dst]
    return src, dst, w


# ----------------------------------------------------------------- model
class FeatureMLP(nn.Module):
    def __init__(self, d_in, d_hidden, d_out, p_drop=0.5):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)
        self.drop = nn.Dropout(p_drop)

    def forward(self, x):
        return self.fc2(self.drop(F.relu(self.fc1(self.drop(x)))))


def ppr_propagate(h0, src, dst, w, alpha: float, tol: float, max_iter: int):
    """h_{k+1} = (1 - alpha) * A_hat h_k + alpha * h0, stopped when the update is small."""

    def cond_fn(it, h, delta):
        return (it < max_iter) & (delta > tol)

    def body_fn(it, h, delta):
        msg = h.index_select(0, src) * w.unsqueeze(1)
        agg = torch.zeros_like(h).index_add(0, dst, msg)
        h_new = (1.0 - alpha) * agg + alpha * h0
        return it + 1, h_new, (h_new - h).abs().max()

    init = (torch.tensor(0), h0, torch.tensor(float("inf")))
    it, h, _ = torch.while_loop(cond_fn, body_fn, init)
    return h, it


class APPNPScorer(nn.Module):
    def __init__(self, mlp, src, dst, w, alpha, tol, max_iter):
        super().__init__()
        self.mlp = mlp
        self.register_buffer("src", src)
        self.register_buffer("dst", dst)
        self.register_buffer("w", w)
        self.alpha, self.tol, self.max_iter = alpha, tol, max_iter

    def forward(self, feats):
        logits = self.mlp(feats)
        smoothed, iters = ppr_propagate(logits, self.src, self.dst, self.w,
                                        self.alpha, self.tol, self.max_iter)
        return smoothed.log_softmax(-1), iters


# ----------------------------------------------------------------- train / eval
def train_mlp(mlp, feats, labels, train_idx, epochs=150):
    opt = torch.optim.Adam(mlp.parameters(), lr=1e-2, weight_decay=5e-4)
    for ep in range(epochs):
        mlp.train()
        opt.zero_grad()
        loss = F.cross_entropy(mlp(feats[train_idx]), labels[train_idx])
        loss.backward()
        opt.step()
        if ep % 50 == 0 or ep == epochs - 1:
            print(f"  epoch {ep:3d}  train loss {loss.item():.4f}")


def accuracy(logp, labels, idx):
    return (logp[idx].argmax(-1) == labels[idx]).float().mean().item()


def main():
    t0 = time.time()
    feats, labels, src, dst = make_sbm_graph(NUM_NODES, NUM_CLASSES, P_IN, P_OUT, FEAT_DIM)
    src, dst, w = sym_norm_weights(src, dst, NUM_NODES)
    print(f"graph: {NUM_NODES} nodes, {src.numel()} directed edges (incl. self loops)")

    perm = torch.randperm(NUM_NODES)
    n_train = int(TRAIN_FRAC * NUM_NODES)
    train_idx, test_idx = perm[:n_train], perm[n_train:]

    mlp = FeatureMLP(FEAT_DIM, 64, NUM_CLASSES)
    print("training feature MLP ...")
    train_mlp(mlp, feats, labels, train_idx)

    scorer = APPNPScorer(mlp, src, dst, w, ALPHA, TOL, MAX_ITER).eval()

    with torch.no_grad():
        mlp_only = accuracy(mlp(feats).log_softmax(-1), labels, test_idx)
        ref_logp, ref_iters = scorer(feats)
    print(f"eager:    MLP-only test acc {mlp_only:.4f} | APPNP test acc "
          f"{accuracy(ref_logp, labels, test_idx):.4f} ({int(ref_iters)} iterations)")

    compiled = torch.compile(scorer)
    with torch.no_grad():
        t1 = time.time()
        logp, iters = compiled(feats)
        t_first = time.time() - t1
        t1 = time.time()
        for _ in range(5):
            logp, iters = compiled(feats)
        t_steady = (time.time() - t1) / 5

    max_diff = (logp - ref_logp).abs().max().item()
    print(f"compiled: APPNP test acc {accuracy(logp, labels, test_idx):.4f} "
          f"({int(iters)} iterations), max |diff| vs eager {max_diff:.2e}")
    print(f"compiled first call {t_first:.1f}s, steady {t_steady * 1e3:.1f} ms/call")
    assert max_diff < 1e-4, "compiled scorer disagrees with eager"
    print(f"done in {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
