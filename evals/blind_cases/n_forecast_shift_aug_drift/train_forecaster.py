import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

SEQ_LEN = 96
HORIZON = 24
N_CHANNELS = 4

_MULT = 6364136223846793005
_INC = 1442695040888963407


def make_series(n_series, length, seed=0):
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(length, dtype=torch.float32)
    periods = torch.tensor([24.0, 168.0, 12.0, 48.0])
    phase = torch.rand(n_series, N_CHANNELS, 1, generator=g) * 2 * math.pi
    amp = 0.5 + torch.rand(n_series, N_CHANNELS, 1, generator=g)
    base = amp * torch.sin(2 * math.pi * t / periods[None, :, None] + phase)
    trend = torch.linspace(0, 1, length)[None, None, :] * torch.randn(n_series, N_CHANNELS, 1, generator=g) * 0.3
    noise = 0.1 * torch.randn(n_series, N_CHANNELS, length, generator=g)
    return base + trend + noise


class SeriesWindows(torch.utils.data.Dataset):
    def __init__(self, series, seq_len, horizon, stride=8):
        self.series = series
        self.seq_len = seq_len
        self.horizon = horizon
        self.index = []
        total = series.shape[-1]
        for s in range(series.shape[0]):
            for start in range(0, total - seq_len - horizon, stride):
                self.index.append((s, start))

    def __len__(self):
        return len(self.index)

    def __getitem__(self, i):
        s, start = self.index[i]
        w = self.series[s, :, start:start + self.seq_len + self.horizon]
        return w[:, :self.seq_len], w[:, self.seq_len:]


class RevIN(nn.Module):
    def __init__(self, channels, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.gamma = nn.Parameter(torch.ones(1, channels, 1))
        self.beta = nn.Parameter(torch.zeros(1, channels, 1))

    def norm(self, x):
        self.mu = x.mean(-1, keepdim=True).detach()
        self.sd = (x.var(-1, keepdim=True, unbiased=False) + self.eps).sqrt().detach()
        return (x - self.mu) / self.sd * self.gamma + self.beta

    def denorm(self, y):
        return (y - self.beta) / (self.gamma + self.eps) * self.sd + self.mu


class PatchForecaster(nn.Module):
    def __init__(self, channels=N_CHANNELS, seq_len=SEQ_LEN, horizon=HORIZON, patch=8, d=64, layers=2):
        super().__init__()
        self.patch = patch
        self.revin = RevIN(channels)
        n_patches = seq_len // patch
        self.embed = nn.Linear(patch, d)
        self.pos = nn.Parameter(torch.randn(1, n_patches, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.0, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(n_patches * d, horizon)

    def forward(self, x):
        b, c, L = x.shape
        x = self.revin.norm(x)
        p = x.reshape(b * c, L // self.patch, self.patch)
        h = self.embed(p) + self.pos
        h = self.encoder(h)
        y = self.head(h.flatten(1)).reshape(b, c, -1)
        return self.revin.denorm(y)


def step_shift(step, period):
    h = step * _MULT + _INC
    return (h >> 33) % period


def shift_augment(x, y, step):
    k = step_shift(step, SEQ_LEN)
    full = torch.cat([x, y], dim=-1)
    full = torch.roll(full, shifts=k, dims=-1)
    return full[..., :SEQ_LEN], full[..., SEQ_LEN:]


def train_step(model, x, y, step):
    xa, ya = shift_augment(x, y, step)
    pred = model(xa)
    return F.mse_loss(pred, ya)


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    tot, n = 0.0, 0
    for x, y in loader:
        tot += F.l1_loss(model(x), y, reduction="sum").item()
        n += y.numel()
    model.train()
    return tot / n


def run(compile_step, epochs, steps_per_epoch, seed=0):
    torch.manual_seed(seed)
    series = make_series(16, 600, seed=1)
    train_ds = SeriesWindows(series[:, :, :480], SEQ_LEN, HORIZON)
    val_ds = SeriesWindows(series[:, :, 360:], SEQ_LEN, HORIZON, stride=24)
    g = torch.Generator().manual_seed(seed)
    train_loader = torch.utils.data.DataLoader(train_ds, batch_size=32, shuffle=True, generator=g, drop_last=True)
    val_loader = torch.utils.data.DataLoader(val_ds, batch_size=64)

    model = PatchForecaster()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-2)
    step_fn = torch.compile(train_step) if compile_step else train_step

    losses = []
    t0 = time.time()
    global_step = 0
    for epoch in range(epochs):
        for i, (x, y) in enumerate(train_loader):
            if i >= steps_per_epoch:
                break
            loss = step_fn(model, x, y, global_step)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.item())
            global_step += 1
        print(f"[{'compiled' if compile_step else 'eager':8s}] epoch {epoch} "
              f"train_mse={sum(losses[-steps_per_epoch:]) / steps_per_epoch:.5f} "
              f"val_mae={evaluate(model, val_loader):.5f}")
    return losses, evaluate(model, val_loader), time.time() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--steps", type=int, default=12)
    args = ap.parse_args()

    torch.use_deterministic_algorithms(True)
    ref, ref_val, t_ref = run(False, args.epochs, args.steps)
    cmp, cmp_val, t_cmp = run(True, args.epochs, args.steps)

    print("step  eager_loss  compiled_loss  abs_diff")
    for i, (a, b) in enumerate(zip(ref, cmp)):
        if i < 6 or abs(a - b) > 1e-4:
            print(f"{i:4d}  {a:.6f}    {b:.6f}      {abs(a - b):.2e}")
        if i >= 6 and abs(a - b) > 1e-4:
            break
    print(f"final val_mae eager={ref_val:.5f} compiled={cmp_val:.5f}")
    print(f"time eager={t_ref:.1f}s compiled={t_cmp:.1f}s")
    ok = abs(ref_val - cmp_val) < 1e-3 and max(abs(a - b) for a, b in zip(ref, cmp)) < 1e-3
    print("PARITY", "OK" if ok else "FAILED")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
