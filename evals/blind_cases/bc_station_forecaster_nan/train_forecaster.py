"""Next-hour temperature forecaster for our weather-station network.

Raw station channels arrive as logged by the loggers: hour counters are
cumulative, wind direction is unwrapped by the vane firmware, etc.  The model
folds every channel into its natural range before standardisation, so the
same checkpoint works on raw logger dumps and on cleaned exports.
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

log = logging.getLogger("forecaster")

# channel name -> period of the channel (math.inf: the channel is not cyclic)
CHANNELS = {
    "hour_of_day": 24.0,
    "day_of_year": 365.25,
    "wind_dir_deg": 360.0,
    "temperature_k": math.inf,
    "pressure_hpa": math.inf,
    "rel_humidity": math.inf,
    "wind_speed_ms": math.inf,
}


def make_station_data(n_series, seq_len, seed):
    g = torch.Generator().manual_seed(seed)
    t0 = torch.randint(0, 20000, (n_series, 1), generator=g).float()
    hours = t0 + torch.arange(seq_len + 1).float()               # cumulative hour counter
    doy = hours / 24.0 + torch.randint(0, 365, (n_series, 1), generator=g)
    wind = torch.cumsum(torch.randn(n_series, seq_len + 1, generator=g) * 25.0, 1) + 180.0
    temp = (12 + 8 * torch.sin(2 * math.pi * (hours - 9) / 24)
            + 6 * torch.sin(2 * math.pi * doy / 365.25)
            + torch.randn(n_series, seq_len + 1, generator=g))
    pres = 1013 + torch.cumsum(torch.randn(n_series, seq_len + 1, generator=g) * 0.3, 1)
    hum = (60 - 1.5 * (temp - 12) + torch.randn(n_series, seq_len + 1, generator=g) * 3).clamp(5, 100)
    ws = (torch.randn(n_series, seq_len + 1, generator=g) * 1.5 + 4).abs()
    x = torch.stack([hours, doy, wind, temp + 273.15, pres, hum, ws], dim=-1)  # loggers export Kelvin
    return x[:, :-1], temp[:, 1:]                                 # inputs, next-hour temperature (C)


class ChannelCanonicalizer(nn.Module):
    def __init__(self, periods):
        super().__init__()
        self.register_buffer("period", torch.tensor(periods, dtype=torch.float32))
        self.register_buffer("mean", torch.zeros(len(periods)))
        self.register_buffer("std", torch.ones(len(periods)))

    def fold(self, x):
        return torch.remainder(x, self.period)

    @torch.no_grad()
    def fit(self, x):
        z = self.fold(x).reshape(-1, x.shape[-1])
        self.mean.copy_(z.mean(0))
        self.std.copy_(z.std(0).clamp_min(1e-3))

    def forward(self, x):
        return (self.fold(x) - self.mean) / self.std


class Forecaster(nn.Module):
    def __init__(self, periods, d_model=64, n_heads=4, n_layers=2, max_len=256):
        super().__init__()
        self.canon = ChannelCanonicalizer(periods)
        self.inp = nn.Linear(len(periods), d_model)
        self.pos = nn.Parameter(torch.randn(max_len, d_model) * 0.02)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, 4 * d_model, dropout=0.1,
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.head = nn.Sequential(nn.LayerNorm(d_model), nn.Linear(d_model, 1))
        mask = torch.triu(torch.full((max_len, max_len), float("-inf")), diagonal=1)
        self.register_buffer("causal", mask, persistent=False)

    def forward(self, x):
        T = x.shape[1]
        h = self.inp(self.canon(x)) + self.pos[:T]
        h = self.encoder(h, mask=self.causal[:T, :T])
        return self.head(h).squeeze(-1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--compile", action="store_true")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--seq-len", type=int, default=48)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--log-every", type=int, default=5)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)

    x_tr, y_tr = make_station_data(512, args.seq_len, seed=args.seed)
    x_va, y_va = make_station_data(128, args.seq_len, seed=args.seed + 1)
    model = Forecaster(list(CHANNELS.values()))
    model.canon.fit(x_tr)
    log.info("channel mean %s", [round(v, 2) for v in model.canon.mean.tolist()])
    log.info("channel std  %s", [round(v, 2) for v in model.canon.std.tolist()])

    step_fn = torch.compile(model) if args.compile else model
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-2)
    dl = DataLoader(TensorDataset(x_tr, y_tr), batch_size=args.batch_size, shuffle=True,
                    generator=torch.Generator().manual_seed(args.seed))

    step = 0
    for epoch in range(args.epochs):
        model.train()
        t_ep = time.perf_counter()
        for xb, yb in dl:
            pred = step_fn(xb)
            loss = F.mse_loss(pred, yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            if step % args.log_every == 0:
                log.info("epoch %d step %4d loss %.4f grad_norm %.3f", epoch, step, loss.item(), gnorm.item())
            step += 1
        model.eval()
        with torch.no_grad():
            va = F.mse_loss(step_fn(x_va), y_va).item()
        log.info("epoch %d done in %.1fs  val_mse %.4f  val_rmse %.3f C",
                 epoch, time.perf_counter() - t_ep, va, math.sqrt(va) if va == va else float("nan"))


if __name__ == "__main__":
    main()
