"""Train a small 2D Fourier Neural Operator surrogate for the heat equation.

The operator maps an initial temperature field u0(x, y) to the field u(x, y, T)
after diffusing for time T on a periodic domain. Targets are generated with an
exact spectral solver, so the data set is cheap to build on the fly.

We keep an exponential moving average (EMA) of the weights and evaluate with it;
the EMA update is compiled with torch.compile because in the profiler the
per-parameter Python loop was a noticeable part of each step.
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("fno")


# --------------------------------------------------------------------------- data
def smooth_random_fields(n, res, modes=6, generator=None):
    """Random band-limited periodic fields, normalised to unit std."""
    coeff = torch.zeros(n, res, res // 2 + 1, dtype=torch.complex64)
    re = torch.randn(n, 2 * modes, modes + 1, generator=generator)
    im = torch.randn(n, 2 * modes, modes + 1, generator=generator)
    block = torch.complex(re, im)
    coeff[:, :modes, : modes + 1] = block[:, :modes]
    coeff[:, -modes:, : modes + 1] = block[:, modes:]
    u0 = torch.fft.irfft2(coeff, s=(res, res))
    return u0 / u0.std(dim=(-2, -1), keepdim=True)


def heat_solution(u0, t_final, kappa):
    res = u0.shape[-1]
    k = torch.fft.fftfreq(res, d=1.0 / res)
    kr = torch.fft.rfftfreq(res, d=1.0 / res)
    k2 = (2 * math.pi) ** 2 * (k[:, None] ** 2 + kr[None, :] ** 2)
    decay = torch.exp(-kappa * k2 * t_final)
    return torch.fft.irfft2(torch.fft.rfft2(u0) * decay, s=(res, res))


class HeatDataset(torch.utils.data.Dataset):
    def __init__(self, n, res, t_final=0.01, kappa=0.5, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.u0 = smooth_random_fields(n, res, generator=g)
        self.u = heat_solution(self.u0, t_final, kappa)

    def __len__(self):
        return self.u0.shape[0]

    def __getitem__(self, i):
        return self.u0[i].unsqueeze(0), self.u[i].unsqueeze(0)


# -------------------------------------------------------------------------- model
class SpectralConv2d(nn.Module):
    def __init__(self, in_ch, out_ch, modes1, modes2):
        super().__init__()
        self.modes1, self.modes2 = modes1, modes2
        scale = 1.0 / (in_ch * out_ch)
        self.w_pos = nn.Parameter(scale * torch.rand(in_ch, out_ch, modes1, modes2, dtype=torch.cfloat))
        self.w_neg = nn.Parameter(scale * torch.rand(in_ch, out_ch, modes1, modes2, dtype=torch.cfloat))

    def forward(self, x):
        b, _, h, w = x.shape
        x_ft = torch.fft.rfft2(x)
        out_ft = torch.zeros(b, self.w_pos.shape[1], h, w // 2 + 1, dtype=torch.cfloat, device=x.device)
        m1, m2 = self.modes1, self.modes2
        out_ft[:, :, :m1, :m2] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, :m1, :m2], self.w_pos)
        out_ft[:, :, -m1:, :m2] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, -m1:, :m2], self.w_neg)
        return torch.fft.irfft2(out_ft, s=(h, w))


class FNO2d(nn.Module):
    def __init__(self, modes=8, width=24, depth=4):
        super().__init__()
        self.lift = nn.Conv2d(3, width, 1)
        self.spectral = nn.ModuleList(SpectralConv2d(width, width, modes, modes) for _ in range(depth))
        self.pointwise = nn.ModuleList(nn.Conv2d(width, width, 1) for _ in range(depth))
        self.proj1 = nn.Conv2d(width, 64, 1)
        self.proj2 = nn.Conv2d(64, 1, 1)

    def forward(self, u0):
        b, _, h, w = u0.shape
        gy = torch.linspace(0, 1, h, device=u0.device).view(1, 1, h, 1).expand(b, 1, h, w)
        gx = torch.linspace(0, 1, w, device=u0.device).view(1, 1, 1, w).expand(b, 1, h, w)
        x = self.lift(torch.cat([u0, gx, gy], dim=1))
        for i, (spec, pw) in enumerate(zip(self.spectral, self.pointwise)):
            x = spec(x) + pw(x)
            if i < len(self.spectral) - 1:
                x = F.gelu(x)
        return self.proj2(F.gelu(self.proj1(x)))


# ---------------------------------------------------------------------------- EMA
class WeightEMA:
    """EMA of model parameters, updated with multi-tensor (foreach) kernels.

    Parameters are bucketed by (device, dtype) the same way torch.optim does, so
    every bucket is a homogeneous tensor list for the foreach ops.
    """

    def __init__(self, model, decay=0.99, compile_update=True):
        self.decay = decay
        self.model_params = [p for p in model.parameters() if p.requires_grad]
        self.shadow = [p.detach().clone() for p in self.model_params]
        self.buckets = {}
        for i, p in enumerate(self.model_params):
            self.buckets.setdefault((p.device, p.dtype), []).append(i)
        self._update_fn = torch.compile(self._update) if compile_update else self._update

    def _update(self, shadow, params, weight):
        for idx in self.buckets.values():
            s = [shadow[i] for i in idx]
            p = [params[i] for i in idx]
            torch._foreach_lerp_(s, p, weight)

    @torch.no_grad()
    def update(self):
        self._update_fn(self.shadow, [p.detach() for p in self.model_params], 1.0 - self.decay)

    @torch.no_grad()
    def copy_to(self, model):
        for p, s in zip([p for p in model.parameters() if p.requires_grad], self.shadow):
            p.copy_(s)


# -------------------------------------------------------------------------- train
def relative_l2(pred, target):
    num = (pred - target).flatten(1).norm(dim=1)
    den = target.flatten(1).norm(dim=1)
    return (num / den).mean()


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    tot, n = 0.0, 0
    for u0, u in loader:
        tot += relative_l2(model(u0), u).item() * u0.shape[0]
        n += u0.shape[0]
    model.train()
    return tot / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--res", type=int, default=32)
    ap.add_argument("--n-train", type=int, default=256)
    ap.add_argument("--n-val", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--ema-decay", type=float, default=0.9)
    ap.add_argument("--no-compile-ema", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)

    train_ds = HeatDataset(args.n_train, args.res, seed=args.seed)
    val_ds = HeatDataset(args.n_val, args.res, seed=args.seed + 1)
    train_dl = torch.utils.data.DataLoader(train_ds, batch_size=args.batch_size, shuffle=True)
    val_dl = torch.utils.data.DataLoader(val_ds, batch_size=args.batch_size)

    model = FNO2d()
    n_params = sum(p.numel() for p in model.parameters())
    log.info("FNO2d with %d parameters (%d tensors)", n_params, len(list(model.parameters())))
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    ema = WeightEMA(model, decay=args.ema_decay, compile_update=not args.no_compile_ema)

    step = 0
    t0 = time.time()
    for epoch in range(args.epochs):
        for u0, u in train_dl:
            loss = relative_l2(model(u0), u)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            ema.update()
            step += 1
            if step % 8 == 0:
                log.info("epoch %d step %d loss %.4f", epoch, step, loss.item())
        val = evaluate(model, val_dl)
        log.info("epoch %d done: val rel-L2 (raw weights) %.4f", epoch, val)

    eval_model = FNO2d()
    eval_model.load_state_dict(model.state_dict())
    ema.copy_to(eval_model)
    log.info("final val rel-L2: raw %.4f | ema %.4f", evaluate(model, val_dl), evaluate(eval_model, val_dl))
    log.info("total time %.1fs", time.time() - t0)


if __name__ == "__main__":
    main()
