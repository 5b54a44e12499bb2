"""Nightly retail-energy offer pricing batch.

Scores every household with the elasticity model, turns the multipliers into
per-band unit prices (peak / shoulder / off-peak, $/kWh, whole cents), and
validates each offer against the regulator-approved price ladder before the
offers are published. Any offer that is not on the ladder blocks the publish.

    python prog.py                # compiled (production path)
    python prog.py --no-compile   # eager
"""
import argparse
import sys
import time

import torch
import torch.nn as nn

N_HOUSEHOLDS = 61_440
N_FEATURES = 16
BANDS = ("peak", "shoulder", "offpeak")
CHUNK = 4096
DAYS_IN_CYCLE = 30

# $/kWh list tariffs for the current quarter
BASE_TARIFF = (0.3125, 0.2240, 0.1365)
# daily supply charge, $/day
SUPPLY_CHARGE = 1.0450

# approved unit prices: 5c .. 95c in whole cents
LADDER_MIN_CENTS = 5
LADDER_MAX_CENTS = 95


def approved_ladder() -> torch.Tensor:
    # the published schedule is a list of dollar amounts
    return torch.tensor([c / 100 for c in range(LADDER_MIN_CENTS, LADDER_MAX_CENTS + 1)],
                        dtype=torch.float32)


class ElasticityNet(nn.Module):
    def __init__(self, n_features: int, hidden: int = 128):
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(n_features, hidden), nn.GELU(),
            nn.Linear(hidden, hidden), nn.GELU(),
            nn.Linear(hidden, hidden), nn.GELU(),
        )
        self.mult_head = nn.Linear(hidden, len(BANDS))
        self.discount_head = nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.body(x)
        # price multipliers in [0.6, 1.6], loyalty discount in [0, 15%]
        mult = 0.6 + torch.sigmoid(self.mult_head(h))
        discount = 0.15 * torch.sigmoid(self.discount_head(h)).squeeze(-1)
        return mult, discount


class OfferPricer(nn.Module):
    def __init__(self, net: ElasticityNet):
        super().__init__()
        self.net = net
        self.register_buffer("base_tariff", torch.tensor(BASE_TARIFF))
        self.floor = LADDER_MIN_CENTS / 100
        self.cap = LADDER_MAX_CENTS / 100

    def forward(self, feats, usage_kwh):
        mult, discount = self.net(feats)
        raw = self.base_tariff * mult * (1.0 - discount).unsqueeze(-1)
        unit_price = torch.round(raw.clamp(self.floor, self.cap), decimals=2)
        energy = (unit_price * usage_kwh).sum(-1)
        bill = torch.round(energy + SUPPLY_CHARGE * DAYS_IN_CYCLE, decimals=2)
        return unit_price, bill


def make_households(n: int, seed: int = 2024):
    g = torch.Generator().manual_seed(seed)
    feats = torch.randn(n, N_FEATURES, generator=g)
    # monthly kWh per band, lognormal-ish
    base = torch.tensor([180.0, 220.0, 260.0])
    usage = base * torch.exp(0.45 * torch.randn(n, len(BANDS), generator=g))
    return feats, usage


def load_model() -> ElasticityNet:
    # stand-in for the quarterly checkpoint (fixed seed = same weights every night)
    torch.manual_seed(7)
    net = ElasticityNet(N_FEATURES)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, nn.Linear):
                m.weight.mul_(1.5)
    return net.eval()


def price_all(pricer, feats, usage):
    prices, bills = [], []
    with torch.inference_mode():
        for s in range(0, feats.shape[0], CHUNK):
            p, b = pricer(feats[s:s + CHUNK], usage[s:s + CHUNK])
            prices.append(p)
            bills.append(b)
    return torch.cat(prices), torch.cat(bills)


def validate_against_ladder(prices: torch.Tensor, ladder: torch.Tensor):
    flat = prices.reshape(-1)
    idx = torch.searchsorted(ladder, flat).clamp(max=ladder.numel() - 1)
    on_ladder = (ladder[idx] == flat).reshape(prices.shape)
    offer_ok = on_ladder.all(-1)
    return offer_ok, on_ladder


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()

    torch.set_num_threads(1)
    feats, usage = make_households(N_HOUSEHOLDS)
    pricer = OfferPricer(load_model()).eval()
    runner = pricer if args.no_compile else torch.compile(pricer, dynamic=False)
    mode = "eager" if args.no_compile else "compiled"

    # warm-up on one chunk so compile time does not show up in the batch timing
    t0 = time.perf_counter()
    price_all(runner, feats[:CHUNK], usage[:CHUNK])
    t_warm = time.perf_counter() - t0

    t0 = time.perf_counter()
    prices, bills = price_all(runner, feats, usage)
    t_batch = time.perf_counter() - t0

    ladder = approved_ladder()
    offer_ok, on_ladder = validate_against_ladder(prices, ladder)
    n_bad = int((~offer_ok).sum())

    print(f"[{mode}] priced {N_HOUSEHOLDS} households in {t_batch:.2f}s (warm-up {t_warm:.1f}s)")
    for j, band in enumerate(BANDS):
        col = prices[:, j]
        print(f"  {band:9s} mean ${col.mean():.4f}/kWh  range ${col.min():.2f}-${col.max():.2f}"
              f"  off-ladder {int((~on_ladder[:, j]).sum())}")
    print(f"  projected billing: ${bills.sum().item():,.2f}  (mean bill ${bills.mean():.2f})")

    if n_bad:
        bad = torch.nonzero(~offer_ok).flatten()[:5]
        print(f"LADDER CHECK FAILED: {n_bad} / {N_HOUSEHOLDS} offers "
              f"({100.0 * n_bad / N_HOUSEHOLDS:.2f}%) use unapproved unit prices")
        for i in bad.tolist():
            shown = ", ".join(f"{v:.2f}" for v in prices[i].tolist())
            print(f"    household {i}: [{shown}]")
        print("publish blocked")
        sys.exit(1)
    print("ladder check passed - offers published")


if __name__ == "__main__":
    main()
