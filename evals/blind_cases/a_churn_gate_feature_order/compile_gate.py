"""CI gate: the serving image runs the ranker under torch.compile, so before a model
version ships we train the fixture model and require compiled == eager on the holdout."""
import sys
import time

import torch
import torch.nn.functional as F

from features import batches, make_dataset
from model import ChurnRanker

RTOL, ATOL = 1e-4, 1e-5


def auc(scores, labels):
    order = scores.argsort()
    ranks = torch.empty_like(scores)
    ranks[order] = torch.arange(1, len(scores) + 1, dtype=scores.dtype)
    pos = labels.bool()
    n_pos, n_neg = pos.sum().item(), (~pos).sum().item()
    return ((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)).item()


def train_fixture(model, cols, label, epochs=3):
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for ep in range(epochs):
        tot = 0.0
        for batch, y in batches(cols, label, 256, shuffle=True, seed=ep):
            loss = F.binary_cross_entropy_with_logits(model(batch), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += loss.item() * len(y)
        print(f"epoch {ep} train logloss {tot / len(label):.4f}")


@torch.no_grad()
def predict(fn, cols, label):
    return torch.cat([fn(b) for b, _ in batches(cols, label, 1024, shuffle=False)])


def main():
    torch.manual_seed(0)
    tr_cols, tr_y = make_dataset(20_000, seed=1)
    va_cols, va_y = make_dataset(5_000, seed=2)

    model = ChurnRanker()
    train_fixture(model, tr_cols, tr_y)
    model.eval()

    eager = predict(model, va_cols, va_y)
    t0 = time.time()
    compiled_model = torch.compile(model)
    compiled = predict(compiled_model, va_cols, va_y)
    print(f"compile+predict {time.time() - t0:.1f}s")

    for tag, s in (("eager", eager), ("compiled", compiled)):
        ll = F.binary_cross_entropy_with_logits(s, va_y).item()
        print(f"{tag:9s} holdout AUC {auc(s, va_y):.4f}  logloss {ll:.4f}")
    diff = (eager - compiled).abs()
    print(f"max |eager - compiled| = {diff.max().item():.4e}  mean = {diff.mean().item():.4e}")
    ok = torch.allclose(eager, compiled, rtol=RTOL, atol=ATOL)
    print("GATE", "PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
