"""Option book risk job: fit a small pricing-correction net on top of Black-Scholes,
then compute per-contract delta / vega for the end-of-day risk report.

The implied-vol smile lookup is a numpy kernel wrapped as a torch custom op so the
pricing model can be compiled.
"""
import math
import time

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
np.random.seed(0)

# --------------------------------------------------------------------------
# vol smile lookup (calibrated grid from the morning snapshot)
# --------------------------------------------------------------------------
SMILE_LOGM = np.linspace(-0.6, 0.6, 25).astype(np.float32)            # log-moneyness knots
SMILE_VOL = (0.22 + 0.35 * SMILE_LOGM ** 2 - 0.08 * SMILE_LOGM).astype(np.float32)
SMILE_SLOPE = np.diff(SMILE_VOL) / np.diff(SMILE_LOGM)


@torch.library.custom_op("desk::smile_vol", mutates_args=())
def smile_vol(logm: torch.Tensor) -> torch.Tensor:
    x = logm.detach().cpu().numpy()
    out = np.interp(x, SMILE_LOGM, SMILE_VOL).astype(np.float32)
    return torch.from_numpy(out).to(logm.device)


@smile_vol.register_fake
def _(logm):
    return torch.empty_like(logm)


@torch.library.custom_op("desk::smile_slope", mutates_args=())
def smile_slope(logm: torch.Tensor) -> torch.Tensor:
    x = np.clip(logm.detach().cpu().numpy(), SMILE_LOGM[0], SMILE_LOGM[-1] - 1e-6)
    idx = np.clip(np.searchsorted(SMILE_LOGM, x, side="right") - 1, 0, len(SMILE_SLOPE) - 1)
    return torch.from_numpy(SMILE_SLOPE[idx].astype(np.float32)).to(logm.device)


@smile_slope.register_fake
def _(logm):
    return torch.empty_like(logm)


def _smile_setup(ctx, inputs, output):
    (logm,) = inputs
    ctx.save_for_backward(logm)


def _smile_backward(ctx, grad):
    (logm,) = ctx.saved_tensors
    return grad * smile_slope(logm)


smile_vol.register_autograd(_smile_backward, setup_context=_smile_setup)


# --------------------------------------------------------------------------
# pricing model
# --------------------------------------------------------------------------
def norm_cdf(x):
    return 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))


def bs_call(spot, strike, tau, rate, vol):
    sqrt_t = torch.sqrt(tau)
    d1 = (torch.log(spot / strike) + (rate + 0.5 * vol * vol) * tau) / (vol * sqrt_t)
    d2 = d1 - vol * sqrt_t
    return spot * norm_cdf(d1) - strike * torch.exp(-rate * tau) * norm_cdf(d2)


class PricingModel(nn.Module):
    """Black-Scholes with smile vol, plus a learned correction (in units of strike)."""

    def __init__(self, hidden=64):
        super().__init__()
        self.corr = nn.Sequential(
            nn.Linear(4, hidden), nn.SiLU(),
            nn.Linear(hidden, hidden), nn.SiLU(),
            nn.Linear(hidden, 1),
        )

    def forward(self, spot, strike, tau, rate, vol_shift):
        logm = torch.log(strike / spot)
        vol = smile_vol(logm) + vol_shift
        base = bs_call(spot, strike, tau, rate, vol)
        feats = torch.stack([logm, torch.sqrt(tau), vol, rate], dim=-1)
        return base + strike * 0.01 * torch.tanh(self.corr(feats).squeeze(-1))


# --------------------------------------------------------------------------
# data: synthetic "market" quotes
# --------------------------------------------------------------------------
def make_book(n):
    spot = torch.full((n,), 100.0)
    strike = 100.0 * torch.exp(torch.empty(n).uniform_(-0.45, 0.45))
    tau = torch.empty(n).uniform_(0.05, 1.5)
    rate = torch.full((n,), 0.03)
    return spot, strike, tau, rate


def market_quotes(spot, strike, tau, rate):
    logm = torch.log(strike / spot)
    vol = torch.from_numpy(np.interp(logm.numpy(), SMILE_LOGM, SMILE_VOL).astype(np.float32))
    px = bs_call(spot, strike, tau, rate, vol)
    # liquidity premium on the wings that plain BS does not capture
    return px + strike * 0.004 * logm.abs() * torch.sqrt(tau)


# --------------------------------------------------------------------------
# training (compiled)
# --------------------------------------------------------------------------
def train(model, steps=150, batch=512):
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    step_model = torch.compile(model)
    for step in range(steps):
        spot, strike, tau, rate = make_book(batch)
        target = market_quotes(spot, strike, tau, rate)
        pred = step_model(spot, strike, tau, rate, torch.zeros(batch))
        loss = torch.mean(((pred - target) / strike) ** 2) * 1e4
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 50 == 0 or step == steps - 1:
            print(f"train step {step:4d}  loss(bp^2) {loss.item():.4f}")
    return model


# --------------------------------------------------------------------------
# risk: per-contract greeks
# --------------------------------------------------------------------------
def make_greeks_fn(model):
    def book_value(spot, vol_shift, strike, tau, rate):
        return model(spot, strike, tau, rate, vol_shift).sum()

    # d(book)/d(spot_i) and d(book)/d(vol_shift_i) are the per-contract delta / vega
    greeks = torch.func.grad(book_value, argnums=(0, 1))
    return torch.compile(greeks)


def risk_report(model, n=2000):
    torch.manual_seed(123)
    spot, strike, tau, rate = make_book(n)
    vol_shift = torch.zeros(n)
    greeks_fn = make_greeks_fn(model)
    t0 = time.perf_counter()
    delta, vega = greeks_fn(spot, vol_shift, strike, tau, rate)
    dt = time.perf_counter() - t0
    print(f"greeks for {n} contracts in {dt:.2f}s")
    print(f"  book delta {delta.sum().item():10.3f}   book vega {vega.sum().item():10.3f}")
    print(f"  delta range [{delta.min().item():.3f}, {delta.max().item():.3f}]")
    return delta, vega


def main():
    t0 = time.perf_counter()
    print(f"torch {torch.__version__}")
    model = train(PricingModel())
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    risk_report(model)
    print(f"total {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
