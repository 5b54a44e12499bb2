"""Long-tail tabular classifier, trained in pure bf16 on CPU.

Uses logit adjustment (Menon et al. 2021): a learnable per-class prior, initialised
to log class frequencies, is added to the classifier logits during training.
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("train_longtail")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--num-classes", type=int, default=20)
    p.add_argument("--num-numeric", type=int, default=24)
    p.add_argument("--cat-cardinalities", type=str, default="12,7,31,5,100")
    p.add_argument("--d-model", type=int, default=128)
    p.add_argument("--depth", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--tau", type=float, default=1.0, help="logit adjustment temperature")
    p.add_argument("--dtype", choices=["bf16", "fp32"], default="bf16")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


class SyntheticLongTail:
    """Zipf-distributed labels, numeric + categorical features correlated with the label."""

    def __init__(self, num_classes, num_numeric, cards, seed):
        g = torch.Generator().manual_seed(seed)
        self.num_classes = num_classes
        self.cards = cards
        freq = 1.0 / torch.arange(1, num_classes + 1, dtype=torch.float64) ** 1.2
        self.class_freq = (freq / freq.sum()).float()
        self.centroids = torch.randn(num_classes, num_numeric, generator=g)
        self.cat_tables = [torch.randint(0, c, (num_classes,), generator=g) for c in cards]
        self.g = g

    def batch(self, n):
        y = torch.multinomial(self.class_freq, n, replacement=True, generator=self.g)
        x_num = self.centroids[y] + 1.5 * torch.randn(n, self.centroids.shape[1], generator=self.g)
        cats = []
        for table, card in zip(self.cat_tables, self.cards):
            noise = torch.randint(0, card, (n,), generator=self.g)
            keep = torch.rand(n, generator=self.g) < 0.6
            cats.append(torch.where(keep, table[y], noise))
        return x_num, torch.stack(cats, dim=1), y


class ResidualBlock(nn.Module):
    def __init__(self, d, hidden_mult=2, dropout=0.0):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, d * hidden_mult)
        self.fc2 = nn.Linear(d * hidden_mult, d)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        return x + self.drop(self.fc2(F.silu(self.fc1(self.norm(x)))))


class TabularClassifier(nn.Module):
    def __init__(self, num_numeric, cards, d_model, depth, num_classes, class_freq, tau):
        super().__init__()
        self.num_proj = nn.Linear(num_numeric, d_model)
        self.cat_embs = nn.ModuleList(nn.Embedding(c, d_model) for c in cards)
        self.blocks = nn.Sequential(*[ResidualBlock(d_model) for _ in range(depth)])
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, num_classes)
        self.log_prior = nn.Parameter(tau * torch.log(class_freq).unsqueeze(0))

    def forward(self, x_num, x_cat, adjust=True):
        h = self.num_proj(x_num)
        for i, emb in enumerate(self.cat_embs):
            h = h + emb(x_cat[:, i])
        h = self.norm(self.blocks(h))
        logits = self.head(h)
        if adjust:
            logits = logits + self.log_prior
        return logits


def train_step(model, opt, x_num, x_cat, y):
    logits = model(x_num, x_cat)
    loss = F.cross_entropy(logits.float(), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return loss.detach()


@torch.no_grad()
def evaluate(model, data, dtype, n_batches=4, bs=512):
    model.eval()
    per_class_correct = torch.zeros(data.num_classes)
    per_class_total = torch.zeros(data.num_classes)
    for _ in range(n_batches):
        x_num, x_cat, y = data.batch(bs)
        pred = model(x_num.to(dtype), x_cat, adjust=False).argmax(-1)
        per_class_total.index_add_(0, y, torch.ones_like(y, dtype=torch.float))
        per_class_correct.index_add_(0, y, (pred == y).float())
    model.train()
    seen = per_class_total > 0
    return (per_class_correct[seen] / per_class_total[seen]).mean().item()


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    cards = [int(c) for c in args.cat_cardinalities.split(",")]

    data = SyntheticLongTail(args.num_classes, args.num_numeric, cards, args.seed)
    model = TabularClassifier(args.num_numeric, cards, args.d_model, args.depth,
                              args.num_classes, data.class_freq, args.tau).to(dtype)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    log.info("params: %.2fM, dtype=%s, compile=%s",
             sum(p.numel() for p in model.parameters()) / 1e6, dtype, args.compile)

    step_fn = torch.compile(train_step) if args.compile else train_step

    t0 = time.perf_counter()
    running = 0.0
    for step in range(1, args.steps + 1):
        x_num, x_cat, y = data.batch(args.batch_size)
        loss = step_fn(model, opt, x_num.to(dtype), x_cat, y)
        running += loss.item()
        if step == 1:
            log.info("first step done in %.1fs", time.perf_counter() - t0)
        if step % 20 == 0:
            bal_acc = evaluate(model, data, dtype)
            log.info("step %d loss %.4f balanced_acc %.3f", step, running / 20, bal_acc)
            if not math.isfinite(running):
                raise RuntimeError("loss diverged")
            running = 0.0
    log.info("done in %.1fs", time.perf_counter() - t0)


if __name__ == "__main__":
    main()
