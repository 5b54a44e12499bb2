"""CI gate: the compiled anomaly scorer must match eager before we ship
torch.compile in the monitoring service.

    python gate_compile.py
"""
import argparse
import sys
import time

import torch

from pressure_model import PressureAutoencoder, synth_windows


def auroc(scores, labels):
    order = torch.argsort(scores, descending=True)
    l = labels[order].float()
    tp = torch.cumsum(l, 0)
    fp = torch.cumsum(1 - l, 0)
    tpr = tp / l.sum()
    fpr = fp / (1 - l).sum()
    return float(torch.trapz(tpr, fpr))


def build_model(seed):
    torch.manual_seed(seed)
    model = PressureAutoencoder()
    # short self-supervised fit on clean traffic so the scores mean something
    x, y = synth_windows(512, anomaly_rate=0.0, seed=seed + 100)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
    model.train()
    for step in range(60):
        idx = torch.randint(0, x.shape[0], (32,))
        score, _ = model(x[idx])
        loss = score.mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return model.eval()


@torch.no_grad()
def score_all(fn, x, bs):
    out = []
    for i in range(0, x.shape[0], bs):
        s, _ = fn(x[i:i + bs])
        out.append(s)
    return torch.cat(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--bs", type=int, default=128)
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-4)
    args = ap.parse_args()

    model = build_model(args.seed)
    x, labels = synth_windows(args.n, seed=args.seed + 1)

    eager = score_all(model, x, args.bs)
    compiled_model = torch.compile(model)
    t0 = time.time()
    compiled = score_all(compiled_model, x, args.bs)
    print(f"compile+run: {time.time() - t0:.1f}s")

    print(f"AUROC eager={auroc(eager, labels):.4f} compiled={auroc(compiled, labels):.4f}")
    diff = (eager - compiled).abs()
    print(f"score max abs diff={diff.max().item():.4e}  mean abs diff={diff.mean().item():.4e}")
    try:
        torch.testing.assert_close(compiled, eager, rtol=args.rtol, atol=args.atol)
    except AssertionError as e:
        print("GATE FAILED: compiled scores differ from eager")
        print(e)
        sys.exit(1)
    print("GATE PASSED")


if __name__ == "__main__":
    main()
