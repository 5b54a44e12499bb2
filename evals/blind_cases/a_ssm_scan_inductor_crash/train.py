import argparse
import math
import time

import torch

from ssm import Forecaster, forecast_loss

N_SENSORS, CONTEXT, HORIZON, PERIOD = 6, 96, 12, 48


def make_series(n_steps, seed):
    """Plant telemetry stand-in: daily cycle + slow drift + coupled sensors + noise."""
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(n_steps, dtype=torch.float32)
    phase = torch.rand(N_SENSORS, generator=g) * 2 * math.pi
    amp = 0.5 + torch.rand(N_SENSORS, generator=g)
    base = amp * torch.sin(2 * math.pi * t[:, None] / PERIOD + phase)
    drift = torch.cumsum(torch.randn(n_steps, 1, generator=g) * 0.02, 0)
    mix = torch.eye(N_SENSORS) + 0.3 * torch.randn(N_SENSORS, N_SENSORS, generator=g)
    x = (base + drift) @ mix.T + 0.1 * torch.randn(n_steps, N_SENSORS, generator=g)
    tod = 2 * math.pi * (t % PERIOD) / PERIOD
    return x, torch.stack([tod.sin(), tod.cos()], -1)


def windows(x, tf, n, seed):
    g = torch.Generator().manual_seed(seed)
    starts = torch.randint(0, len(x) - CONTEXT - HORIZON, (n,), generator=g)
    idx = starts[:, None] + torch.arange(CONTEXT + HORIZON)
    seq, feats = x[idx], tf[idx]
    mu = seq[:, :CONTEXT].mean(1, keepdim=True)
    sd = seq[:, :CONTEXT].std(1, keepdim=True) + 1e-3
    seq = (seq - mu) / sd
    return seq[:, :CONTEXT], feats[:, :CONTEXT], seq[:, CONTEXT:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--bs", type=int, default=32)
    args = ap.parse_args()

    torch.manual_seed(0)
    x, tf = make_series(20_000, seed=3)
    split = 16_000
    tr = windows(x[:split], tf[:split], 4096, seed=1)
    va = windows(x[split:], tf[split:], 512, seed=2)

    model = Forecaster(N_SENSORS, HORIZON)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.01)
    fwd = torch.compile(model) if args.compile else model
    print(f"torch {torch.__version__} | compile={args.compile} | "
          f"{sum(p.numel() for p in model.parameters())} params")

    t0 = time.time()
    g = torch.Generator().manual_seed(0)
    for step in range(args.steps):
        idx = torch.randint(0, len(tr[0]), (args.bs,), generator=g)
        ctx, feats, tgt = (t[idx] for t in tr)
        loss = forecast_loss(fwd(ctx, feats), tgt)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0 or step == args.steps - 1:
            print(f"step {step:4d} loss {loss.item():.4f} ({time.time() - t0:.1f}s)", flush=True)

    model.eval()
    with torch.no_grad():
        pred = model(va[0], va[1])
        mae = (pred - va[2]).abs().mean().item()
        naive = (va[0][:, -1:] - va[2]).abs().mean().item()
    print(f"val MAE {mae:.4f} (last-value baseline {naive:.4f}) | {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
