"""Load forecasting: encoder-decoder GRU written out by hand (we need a custom gate for the
calendar features, so nn.GRU is not an option).

Usage: python train_forecaster.py [--no-compile] [--epochs N]
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class CalendarGRUCell(nn.Module):
    """GRU cell whose update gate is additionally modulated by calendar features."""

    def __init__(self, in_dim, cal_dim, hidden):
        super().__init__()
        self.x2h = nn.Linear(in_dim, 3 * hidden)
        self.h2h = nn.Linear(hidden, 3 * hidden, bias=False)
        self.cal = nn.Linear(cal_dim, hidden)

    def forward(self, x, cal, h):
        gx = self.x2h(x)
        gh = self.h2h(h)
        rx, zx, nx = gx.chunk(3, -1)
        rh, zh, nh = gh.chunk(3, -1)
        r = torch.sigmoid(rx + rh)
        z = torch.sigmoid(zx + zh + self.cal(cal))
        n = torch.tanh(nx + r * nh)
        return (1 - z) * n + z * h


class Seq2SeqForecaster(nn.Module):
    def __init__(self, n_series_feats=4, cal_dim=6, hidden=32):
        super().__init__()
        self.hidden = hidden
        self.enc = CalendarGRUCell(n_series_feats, cal_dim, hidden)
        self.dec = CalendarGRUCell(1, cal_dim, hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, hist, hist_cal, fut_cal):
        # hist: [B, T_in, F], hist_cal: [B, T_in, C], fut_cal: [B, T_out, C]
        B, T_in, _ = hist.shape
        T_out = fut_cal.size(1)
        h = hist.new_zeros(B, self.hidden)
        for t in range(T_in):
            h = self.enc(hist[:, t], hist_cal[:, t], h)
        y = hist[:, -1, :1]
        preds = []
        for t in range(T_out):
            h = self.dec(y, fut_cal[:, t], h)
            y = self.out(h)
            preds.append(y)
        return torch.cat(preds, dim=1)


def calendar(hours):
    hod = 2 * math.pi * (hours % 24) / 24
    dow = 2 * math.pi * ((hours // 24) % 7) / 7
    doy = 2 * math.pi * ((hours // 24) % 365) / 365
    return torch.stack([hod.sin(), hod.cos(), dow.sin(), dow.cos(), doy.sin(), doy.cos()], -1)


def make_windows(n, t_in, t_out, gen):
    start = torch.randint(0, 24 * 365, (n, 1), generator=gen).float()
    hours = start + torch.arange(t_in + t_out).float()
    cal = calendar(hours)
    base = 1.0 + 0.5 * cal[..., 0] + 0.2 * cal[..., 2]
    load = base + 0.05 * torch.randn(base.shape, generator=gen)
    temp = 0.3 * cal[..., 4:5] + 0.05 * torch.randn(n, t_in + t_out, 1, generator=gen)
    feats = torch.cat([load[..., None], temp, cal[..., :2]], -1)
    return feats[:, :t_in], cal[:, :t_in], cal[:, t_in:], load[:, t_in:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--epochs", type=int, default=3)
    args = ap.parse_args()
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)

    model = Seq2SeqForecaster()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    fwd = model if args.no_compile else torch.compile(model)

    T_IN, T_OUT = 24, 12          # 1 day of history -> next 12 hours
    train = make_windows(256, T_IN, T_OUT, gen)
    # validation uses a longer history window (2 days) and the 1-day horizon the ops team asked for
    val = make_windows(128, 48, 24, gen)

    t0 = time.time()
    for epoch in range(args.epochs):
        for i in range(0, 256, 32):
            hist, hcal, fcal, target = (t[i:i + 32] for t in train)
            ts = time.time()
            loss = F.mse_loss(fwd(hist, hcal, fcal), target)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            if epoch == 0 and i == 0:
                print(f"first train step: {time.time() - ts:.1f}s")
        with torch.no_grad():
            ts = time.time()
            vloss = F.mse_loss(fwd(*val[:3]), val[3]).item()
            vt = time.time() - ts
        print(f"epoch {epoch} train_loss {loss.item():.4f} val_loss {vloss:.4f} "
              f"(val pass {vt:.1f}s, elapsed {time.time() - t0:.1f}s)")


if __name__ == "__main__":
    main()
