import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from fused_heads import TwoHeadProjection

N_NUM, N_CAT, CAT_CARD = 24, 6, 50
N_CLASSES, N_TARGETS = 5, 2


def make_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x_num = torch.randn(n, N_NUM, generator=g)
    x_cat = torch.randint(0, CAT_CARD, (n, N_CAT), generator=g)
    proj = torch.randn(N_NUM, 8, generator=torch.Generator().manual_seed(1234))
    cat_w = torch.randn(N_CAT, CAT_CARD, generator=torch.Generator().manual_seed(4321))
    z = torch.tanh(x_num @ proj) + 0.5 * cat_w.gather(1, x_cat.t()).t().mean(1, keepdim=True)
    y_cls = (z[:, :N_CLASSES] + 0.3 * torch.randn(n, N_CLASSES, generator=g)).argmax(1)
    y_reg = torch.stack([z[:, 5] * 2.0 + z[:, 6], z[:, 7] - z[:, 0]], 1) + 0.05 * torch.randn(n, 2, generator=g)
    # each example is labelled for one task or for both (separate annotation campaigns)
    task = torch.randint(0, 3, (n,), generator=g)  # 0: cls only, 1: reg only, 2: both
    return x_num, x_cat, y_cls, y_reg, task


def task_batches(data, batch_size, seed):
    """Group examples by which labels they carry, then interleave the groups."""
    x_num, x_cat, y_cls, y_reg, task = data
    g = torch.Generator().manual_seed(seed)
    batches = []
    for t in range(3):
        idx = (task == t).nonzero().squeeze(1)
        idx = idx[torch.randperm(len(idx), generator=g)]
        for s in range(0, len(idx) - batch_size + 1, batch_size):
            b = idx[s:s + batch_size]
            batches.append((t, x_num[b], x_cat[b], y_cls[b], y_reg[b]))
    order = torch.randperm(len(batches), generator=g).tolist()
    return [batches[i] for i in order]


class Trunk(nn.Module):
    def __init__(self, d_model=128):
        super().__init__()
        self.cat_emb = nn.ModuleList([nn.Embedding(CAT_CARD, 16) for _ in range(N_CAT)])
        self.inp = nn.Linear(N_NUM + 16 * N_CAT, d_model)
        self.blocks = nn.ModuleList([
            nn.Sequential(nn.LayerNorm(d_model), nn.Linear(d_model, 2 * d_model), nn.GELU(),
                          nn.Linear(2 * d_model, d_model))
            for _ in range(3)
        ])
        self.out_norm = nn.LayerNorm(d_model)

    def forward(self, x_num, x_cat):
        embs = [emb(x_cat[:, i]) for i, emb in enumerate(self.cat_emb)]
        h = self.inp(torch.cat([x_num] + embs, dim=1))
        for blk in self.blocks:
            h = h + blk(h)
        return self.out_norm(h)


class MultiTaskModel(nn.Module):
    def __init__(self, d_model=128):
        super().__init__()
        self.trunk = Trunk(d_model)
        self.heads = TwoHeadProjection(d_model, N_CLASSES, N_TARGETS)

    def forward(self, x_num, x_cat):
        return self.heads(self.trunk(x_num, x_cat))


def batch_loss(t, logits, reg, y_cls, y_reg):
    if t == 0:
        return F.cross_entropy(logits, y_cls)
    if t == 1:
        return F.mse_loss(reg, y_reg)
    return F.cross_entropy(logits, y_cls) + F.mse_loss(reg, y_reg)


@torch.no_grad()
def evaluate(model, data):
    x_num, x_cat, y_cls, y_reg, _ = data
    logits, reg = model(x_num, x_cat)
    acc = (logits.argmax(1) == y_cls).float().mean().item()
    rmse = F.mse_loss(reg, y_reg).sqrt().item()
    return acc, rmse


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--batch-size", type=int, default=64)
    args = ap.parse_args()

    torch.manual_seed(0)
    train = make_data(6000, seed=1)
    val = make_data(2000, seed=2)
    model = MultiTaskModel()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.05)
    fwd = model if args.no_compile else torch.compile(model)

    for epoch in range(args.epochs):
        model.train()
        t0, tot, n = time.time(), 0.0, 0
        for step, (t, x_num, x_cat, y_cls, y_reg) in enumerate(task_batches(train, args.batch_size, seed=10 + epoch)):
            logits, reg = fwd(x_num, x_cat)
            loss = batch_loss(t, logits, reg, y_cls, y_reg)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            tot += loss.item()
            n += 1
            if epoch == 0 and step < 4:
                print(f"  step {step} task {t} loss {loss.item():.5f}")
        model.eval()
        acc, rmse = evaluate(fwd, val)
        print(f"epoch {epoch}: train loss {tot / n:.4f}  val acc {acc:.3f}  val rmse {rmse:.4f}  ({time.time() - t0:.1f}s)")


if __name__ == "__main__":
    main()
