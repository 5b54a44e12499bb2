"""Train the churn survival model on a synthetic subscriber snapshot.

  python train_churn.py                 # eager training
  python train_churn.py --compile       # compiled model
  python train_churn.py --bench         # time eager vs compiled train step in one process
"""
import argparse
import copy
import math
import statistics
import time

import torch

from survival_model import ChurnSurvivalNet

HORIZON = 730                      # days
N_NUMERIC = 24
CARDINALITIES = [6, 40, 12]        # plan, region, acquisition channel


def make_cohort(n, seed):
    g = torch.Generator().manual_seed(seed)
    num = torch.randn(n, N_NUMERIC, generator=g)
    cats = torch.stack([torch.randint(0, c, (n,), generator=g) for c in CARDINALITIES], dim=1)
    # ground-truth: exponential-ish churn time driven by a few features and the plan
    plan_effect = torch.linspace(-0.6, 0.6, CARDINALITIES[0])[cats[:, 0]]
    risk = 0.8 * num[:, 0] - 0.5 * num[:, 1] + 0.3 * num[:, 2] * num[:, 3] + plan_effect
    scale = 400.0 * torch.exp(-risk)
    u = torch.rand(n, generator=g).clamp_min(1e-6)
    churn_day = (-scale * torch.log(u)).long()
    # administrative censoring: customers joined at different dates
    observed_for = torch.randint(30, HORIZON, (n,), generator=g)
    event = (churn_day < observed_for).float()
    duration = torch.minimum(churn_day, observed_for).clamp(max=HORIZON - 1)
    return num, cats, duration, event


def batches(data, batch_size, seed):
    n = data[0].shape[0]
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    for i in range(0, n - batch_size + 1, batch_size):
        idx = perm[i:i + batch_size]
        yield tuple(t[idx] for t in data)


def make_train_step(model, opt):
    def train_step(num, cats, duration, event):
        opt.zero_grad(set_to_none=True)
        loss = model(num, cats, duration, event)
        loss.backward()
        opt.step()
        return loss.detach()
    return train_step


@torch.no_grad()
def evaluate(model, data, horizons=(90, 365)):
    model.eval()
    num, cats, duration, event = data
    _, surv = model.survival(num, cats)
    out = {}
    for hz in horizons:
        # Brier score at horizon (ignoring censored-before-horizon rows for simplicity)
        known = (duration >= hz) | (event > 0)
        alive = (duration >= hz).float()
        out[f"brier@{hz}"] = ((surv[:, hz - 1] - alive)[known] ** 2).mean().item()
    # concordance of 1-year risk with observed churn order (sampled pairs)
    risk = 1.0 - surv[:, 364]
    g = torch.Generator().manual_seed(0)
    i = torch.randint(0, num.shape[0], (20000,), generator=g)
    j = torch.randint(0, num.shape[0], (20000,), generator=g)
    comparable = (duration[i] < duration[j]) & (event[i] > 0)
    conc = (risk[i] > risk[j]).float()[comparable].mean().item()
    out["c_index"] = conc
    model.train()
    return out


def build(seed):
    torch.manual_seed(seed)
    model = ChurnSurvivalNet(N_NUMERIC, CARDINALITIES, HORIZON)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    return model, opt


def bench(args, train):
    """Time eager and compiled model train steps side by side on the same batches."""
    model_e, opt_e = build(args.seed)
    model_c = copy.deepcopy(model_e)
    opt_c = torch.optim.AdamW(model_c.parameters(), lr=2e-3, weight_decay=1e-4)
    step_e = make_train_step(model_e, opt_e)
    step_c = make_train_step(torch.compile(model_c), opt_c)
    batch_list = list(batches(train, args.batch_size, args.seed))
    t0 = time.perf_counter()
    step_c(*batch_list[0])
    print(f"compiled warm-up (compile) {time.perf_counter() - t0:.1f}s", flush=True)
    for b in batch_list[1:3]:
        step_e(*b)
        step_c(*b)
    te, tc = [], []
    for r in range(args.bench_rounds):
        b = batch_list[(3 + r) % len(batch_list)]
        t0 = time.perf_counter(); step_e(*b); te.append(time.perf_counter() - t0)
        t0 = time.perf_counter(); step_c(*b); tc.append(time.perf_counter() - t0)
    me, mc = statistics.median(te) * 1e3, statistics.median(tc) * 1e3
    print(f"train step median over {args.bench_rounds} rounds: eager {me:.1f} ms | "
          f"compiled {mc:.1f} ms | speedup {me / mc:.2f}x")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--compile", action="store_true")
    p.add_argument("--bench", action="store_true")
    p.add_argument("--bench-rounds", type=int, default=15)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=2048)
    p.add_argument("--n-train", type=int, default=24576)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    train = make_cohort(args.n_train, seed=1)
    valid = make_cohort(8192, seed=2)
    print(f"train customers {args.n_train}, churn rate {train[3].mean():.2f}, horizon {HORIZON} days")

    if args.bench:
        bench(args, train)
        return

    model, opt = build(args.seed)
    step = make_train_step(torch.compile(model) if args.compile else model, opt)

    for epoch in range(args.epochs):
        times, losses = [], []
        for b in batches(train, args.batch_size, args.seed + epoch):
            t0 = time.perf_counter()
            loss = step(*b)
            times.append(time.perf_counter() - t0)
            losses.append(loss.item())
        steady = times[1:] if epoch == 0 else times
        metrics = evaluate(model, valid)
        print(f"epoch {epoch} loss {sum(losses) / len(losses):.4f} "
              f"step {statistics.median(steady) * 1e3:.1f} ms (first {times[0]:.2f}s) "
              + " ".join(f"{k} {v:.4f}" for k, v in metrics.items()), flush=True)


if __name__ == "__main__":
    main()
