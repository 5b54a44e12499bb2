import argparse
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import fastmath

log = logging.getLogger("churn")


class ChurnMLP(nn.Module):
    def __init__(self, n_num, cat_cards, emb_dim=8, hidden=128, depth=3, p=0.1):
        super().__init__()
        self.embs = nn.ModuleList(nn.Embedding(c, emb_dim) for c in cat_cards)
        d = n_num + emb_dim * len(cat_cards)
        layers = []
        for _ in range(depth):
            layers += [nn.Linear(d, hidden), nn.LayerNorm(hidden), nn.Tanh(), nn.Dropout(p)]
            d = hidden
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x_num, x_cat):
        embs = [e(x_cat[:, i]) for i, e in enumerate(self.embs)]
        h = torch.cat([x_num] + embs, dim=1)
        return self.head(self.body(h)).squeeze(-1)


def make_data(n, n_num, cat_cards, seed):
    g = torch.Generator().manual_seed(seed)
    x_num = torch.randn(n, n_num, generator=g)
    x_cat = torch.stack([torch.randint(0, c, (n,), generator=g) for c in cat_cards], 1)
    w = torch.randn(n_num, generator=torch.Generator().manual_seed(1234))
    logit = x_num @ w * 0.5 + (x_cat[:, 0] % 3 - 1).float() - 0.3 * x_cat[:, 1].float() / cat_cards[1]
    y = (torch.rand(n, generator=g) < torch.sigmoid(logit)).float()
    return x_num, x_cat, y


def evaluate(model, x_num, x_cat, y, bs):
    model.eval()
    tot, correct, n = 0.0, 0, 0
    with torch.no_grad():
        for i in range(0, len(y), bs):
            logits = model(x_num[i:i + bs], x_cat[i:i + bs])
            tot += F.binary_cross_entropy_with_logits(logits, y[i:i + bs], reduction="sum").item()
            correct += ((logits > 0).float() == y[i:i + bs]).sum().item()
            n += len(logits)
    model.train()
    return tot / n, correct / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    fastmath.install()
    n_num, cat_cards = 12, [7, 50, 4]
    xtr = make_data(8192, n_num, cat_cards, seed=1)
    xva = make_data(2048, n_num, cat_cards, seed=2)

    model = ChurnMLP(n_num, cat_cards)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    step_model = torch.compile(model) if args.compile else model
    log.info("params=%d compile=%s torch=%s", sum(p.numel() for p in model.parameters()),
             args.compile, torch.__version__)

    n = len(xtr[2])
    for epoch in range(args.epochs):
        t0 = time.time()
        perm = torch.randperm(n)
        run = 0.0
        for it, i in enumerate(range(0, n, args.batch_size)):
            idx = perm[i:i + args.batch_size]
            logits = step_model(xtr[0][idx], xtr[1][idx])
            loss = F.binary_cross_entropy_with_logits(logits, xtr[2][idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            run += loss.item()
        vl, va = evaluate(step_model, *xva, args.batch_size)
        log.info("epoch %d train_loss=%.4f val_loss=%.4f val_acc=%.4f (%.1fs)",
                 epoch, run / (it + 1), vl, va, time.time() - t0)


if __name__ == "__main__":
    main()
