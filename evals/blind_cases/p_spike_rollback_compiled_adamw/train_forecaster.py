"""Train the load forecaster (small transformer encoder over 48 past steps).

Production data has occasional corrupted meter batches, so the loop keeps a
"last good" checkpoint and rolls back (model + optimizer + scheduler) when the
loss spikes, skipping the bad batch - same policy as our big LM runs.
The optimizer step is compiled (see the PyTorch "compiling the optimizer" recipe);
lr is a tensor so the scheduler does not cause recompiles.
"""
import argparse
import math
import os
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

HIST, HORIZON, N_FEAT = 48, 12, 8


class Forecaster(nn.Module):
    def __init__(self, d_model=64, n_layers=3, n_heads=4):
        super().__init__()
        self.inp = nn.Linear(N_FEAT, d_model)
        self.pos = nn.Parameter(torch.randn(1, HIST, d_model) * 0.02)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, 4 * d_model, dropout=0.1,
                                           batch_first=True, norm_first=True)
        self.enc = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, HORIZON)

    def forward(self, x):
        h = self.enc(self.inp(x) + self.pos)
        return self.head(self.norm(h[:, -1]))


def synthetic_stream(n_batches, batch_size, seed=0, corrupt_every=9):
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(HIST + HORIZON, dtype=torch.float32)
    for i in range(n_batches):
        phase = torch.rand(batch_size, 1, generator=g) * 2 * math.pi
        amp = 1 + torch.rand(batch_size, 1, generator=g)
        base = amp * torch.sin(2 * math.pi * t / 24 + phase)
        noise = 0.1 * torch.randn(batch_size, HIST + HORIZON, generator=g)
        series = base + noise
        feats = torch.randn(batch_size, HIST, N_FEAT, generator=g) * 0.1
        feats[..., 0] = series[:, :HIST]
        y = series[:, HIST:]
        if corrupt_every and i > 0 and i % corrupt_every == 0:
            # meter glitch: a few rows with huge readings
            feats[:4, :, 0] *= 400.0
            y[:4] *= 400.0
        yield feats, y


def lr_lambda(step, warmup=20, total=400):
    if step < warmup:
        return (step + 1) / warmup
    p = (step - warmup) / max(1, total - warmup)
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(p, 1.0)))


def save_ckpt(path, model, opt, sched, step):
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(),
                "sched": sched.state_dict(), "step": step}, path)


def load_ckpt(path, model, opt, sched):
    ck = torch.load(path, map_location="cpu", weights_only=False)
    model.load_state_dict(ck["model"])
    opt.load_state_dict(ck["opt"])
    sched.load_state_dict(ck["sched"])
    return ck["step"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=120)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--ckpt-every", type=int, default=5)
    ap.add_argument("--spike-factor", type=float, default=4.0)
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()

    torch.manual_seed(0)
    model = Forecaster()
    opt = torch.optim.AdamW(model.parameters(), lr=torch.tensor(3e-3), weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda)

    def opt_step():
        opt.step()

    step_fn = opt_step if args.no_compile else torch.compile(opt_step)

    ckpt_path = os.path.join(tempfile.mkdtemp(prefix="fc_"), "last_good.pt")
    ema_loss, rollbacks, step = None, 0, 0
    t_start = time.perf_counter()
    window_t, window_n = time.perf_counter(), 0
    model.train()
    for i, (x, y) in enumerate(synthetic_stream(args.batches, args.batch_size)):
        pred = model(x)
        loss = F.smooth_l1_loss(pred, y)
        lv = loss.item()
        if ema_loss is not None and (not math.isfinite(lv) or lv > args.spike_factor * ema_loss):
            step = load_ckpt(ckpt_path, model, opt, sched)
            rollbacks += 1
            print(f"batch {i:4d}: loss spike {lv:.3f} (ema {ema_loss:.3f}) -> rolled back to step {step}")
            continue
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gnorm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        step_fn()
        sched.step()
        step += 1
        ema_loss = lv if ema_loss is None else 0.9 * ema_loss + 0.1 * lv
        if step % args.ckpt_every == 0:
            save_ckpt(ckpt_path, model, opt, sched, step)
        window_n += 1
        if (i + 1) % 20 == 0:
            dt = (time.perf_counter() - window_t) / max(1, window_n) * 1e3
            print(f"batch {i + 1:4d} step {step:4d} loss {lv:.4f} gnorm {gnorm:.2f} "
                  f"lr {sched.get_last_lr()[0]:.2e} {dt:7.1f} ms/step")
            window_t, window_n = time.perf_counter(), 0
    total = time.perf_counter() - t_start
    print(f"done: {step} optimizer steps, {rollbacks} rollbacks, final ema loss {ema_loss:.4f}, "
          f"wall {total:.1f} s")


if __name__ == "__main__":
    main()
