"""Pooling ablation + release gate for the clip-embedding model (sound-event retrieval).

Trains the frame encoder briefly on the synthetic fixture, then evaluates every
pooling strategy we ship, compiled (serving path) and eager (reference), and fails
the gate if any compiled variant drifts from eager or loses retrieval accuracy.
"""
import sys
import time
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

N_MELS = 40
N_FRAMES = 64
N_CLASSES = 10
D_MODEL = 96
BATCH = 64
ATOL = 1e-4

# strategy name -> reduction over the time axis
POOLING = {
    "mean": torch.Tensor.mean,
    "max": torch.Tensor.amax,
    "lse": torch.Tensor.logsumexp,
}


def make_fixture(n_per_class, seed):
    g = torch.Generator().manual_seed(seed)
    protos = torch.randn(N_CLASSES, N_MELS, generator=torch.Generator().manual_seed(1234))
    xs, ys = [], []
    for c in range(N_CLASSES):
        base = protos[c][None, None, :].expand(n_per_class, N_FRAMES, N_MELS)
        # events are bursty: a random on-set window per clip carries the class pattern
        onset = torch.randint(0, N_FRAMES // 2, (n_per_class,), generator=g)
        t = torch.arange(N_FRAMES)[None, :]
        env = ((t >= onset[:, None]) & (t < onset[:, None] + 16)).float()[..., None]
        noise = 0.8 * torch.randn(n_per_class, N_FRAMES, N_MELS, generator=g)
        xs.append(env * base * 1.5 + noise)
        ys.append(torch.full((n_per_class,), c))
    x = torch.cat(xs)
    y = torch.cat(ys)
    perm = torch.randperm(len(y), generator=g)
    return x[perm], y[perm]


class FrameEncoder(nn.Module):
    def __init__(self, d=D_MODEL, layers=2, heads=4):
        super().__init__()
        self.front = nn.Sequential(
            nn.Conv1d(N_MELS, d, kernel_size=5, padding=2),
            nn.GELU(),
            nn.Conv1d(d, d, kernel_size=3, padding=1),
        )
        self.pos = nn.Parameter(torch.randn(1, N_FRAMES, d) * 0.02)
        self.blocks = nn.ModuleList()
        for _ in range(layers):
            self.blocks.append(nn.ModuleDict({
                "ln1": nn.LayerNorm(d),
                "attn": nn.MultiheadAttention(d, heads, batch_first=True),
                "ln2": nn.LayerNorm(d),
                "ff": nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d)),
            }))
        self.out_ln = nn.LayerNorm(d)

    def forward(self, mel):
        h = self.front(mel.transpose(1, 2)).transpose(1, 2) + self.pos
        for b in self.blocks:
            q = b["ln1"](h)
            h = h + b["attn"](q, q, q, need_weights=False)[0]
            h = h + b["ff"](b["ln2"](h))
        return self.out_ln(h)


def build_embedder(encoder, reduce, compile=True):
    def embed(mel):
        frames = encoder(mel)
        clip = reduce(frames, dim=1)
        return F.normalize(clip, dim=-1)

    return torch.compile(embed) if compile else embed


def train_encoder(encoder, x, y, steps=40):
    head = nn.Linear(D_MODEL, N_CLASSES)
    opt = torch.optim.AdamW(list(encoder.parameters()) + list(head.parameters()), lr=2e-3)
    encoder.train()
    for step in range(steps):
        idx = torch.randint(0, len(y), (BATCH,))
        frames = encoder(x[idx])
        logits = head(frames.mean(dim=1))
        loss = F.cross_entropy(logits, y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 10 == 0 or step == steps - 1:
            print(f"  train step {step:3d}  loss {loss.item():.4f}")
    encoder.eval()


@torch.no_grad()
def embed_all(fn, x):
    out = []
    for i in range(0, len(x), BATCH):
        out.append(fn(x[i:i + BATCH]))
    return torch.cat(out)


def retrieval_acc(gallery, g_labels, queries, q_labels):
    centroids = torch.stack([gallery[g_labels == c].mean(0) for c in range(N_CLASSES)])
    centroids = F.normalize(centroids, dim=-1)
    pred = (queries @ centroids.T).argmax(-1)
    return (pred == q_labels).float().mean().item()


def main():
    t0 = time.time()
    x_train, y_train = make_fixture(64, seed=1)
    x_gal, y_gal = make_fixture(32, seed=2)
    x_q, y_q = make_fixture(32, seed=3)

    encoder = FrameEncoder()
    print("training encoder")
    train_encoder(encoder, x_train, y_train)

    failures = []
    report = []
    for name, reduce in POOLING.items():
        ref_fn = build_embedder(encoder, reduce, compile=False)
        srv_fn = build_embedder(encoder, reduce, compile=True)

        ref_g, ref_q = embed_all(ref_fn, x_gal), embed_all(ref_fn, x_q)
        srv_g, srv_q = embed_all(srv_fn, x_gal), embed_all(srv_fn, x_q)

        diff = max((srv_g - ref_g).abs().max().item(), (srv_q - ref_q).abs().max().item())
        acc_ref = retrieval_acc(ref_g, y_gal, ref_q, y_q)
        acc_srv = retrieval_acc(srv_g, y_gal, srv_q, y_q)
        report.append((name, acc_ref, acc_srv, diff))
        if diff > ATOL or not math.isclose(acc_ref, acc_srv, abs_tol=1e-6):
            failures.append(name)

    print()
    print(f"{'pooling':8s} {'acc(eager)':>11s} {'acc(compiled)':>14s} {'max|diff|':>11s}")
    for name, a_ref, a_srv, d in report:
        print(f"{name:8s} {a_ref:11.4f} {a_srv:14.4f} {d:11.3e}")
    print(f"\nwall time {time.time() - t0:.1f}s")

    if failures:
        print(f"GATE FAILED: compiled/eager mismatch for pooling={failures} (atol={ATOL})")
        sys.exit(1)
    print("GATE PASSED")


if __name__ == "__main__":
    main()
