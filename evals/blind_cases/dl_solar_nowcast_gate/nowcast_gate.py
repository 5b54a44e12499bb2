"""Solar irradiance nowcaster: train (compiled) and run the compile-vs-eager release gate.

Stage "train": fits the nowcaster on synthetic satellite/pyranometer windows with
torch.compile and writes a checkpoint.  Stage "gate": rebuilds the serving variant
of the model (no deep-supervision head), loads the checkpoint into an eager
instance and a compiled instance, and checks that both agree on the fixture set
before the compiled model is allowed into the serving image.
"""
import argparse
import logging
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("nowcast")

N_CHANNELS = 6      # GHI, DNI, DHI, cloud index, solar zenith, clear-sky GHI
WINDOW = 48         # 5-minute steps (4 hours of history)
HORIZONS = 6        # predict the next 30 minutes


class ConvBlock(nn.Module):
    def __init__(self, c_in, c_out, dilation):
        super().__init__()
        self.conv = nn.Conv1d(c_in, c_out, kernel_size=3, padding=dilation, dilation=dilation)
        self.norm = nn.GroupNorm(4, c_out)
        self.skip = nn.Conv1d(c_in, c_out, 1) if c_in != c_out else nn.Identity()

    def forward(self, x):
        return F.gelu(self.norm(self.conv(x))) + self.skip(x)


class Nowcaster(nn.Module):
    def __init__(self, width=48, with_aux=True):
        super().__init__()
        self.inp = nn.Conv1d(N_CHANNELS, width, 1)
        self.blocks = nn.ModuleList([ConvBlock(width, width, d) for d in (1, 2, 4, 8)])
        self.head = nn.Sequential(nn.Linear(2 * width, 64), nn.GELU(), nn.Linear(64, HORIZONS))
        # deep-supervision head, only used while training
        self.aux_head = nn.Linear(width, HORIZONS) if with_aux else None

    def forward(self, x):
        h = self.inp(x.transpose(1, 2))
        mid = None
        for i, blk in enumerate(self.blocks):
            h = blk(h)
            if i == 1:
                mid = h
        pooled = torch.cat([h.mean(-1), h[..., -1]], dim=-1)
        out = self.head(pooled)
        if self.aux_head is not None and self.training:
            return out, self.aux_head(mid.mean(-1))
        return out


def make_windows(n, seed):
    g = torch.Generator().manual_seed(seed)
    t0 = torch.rand(n, 1, generator=g) * 6.0 + 8.0                      # start hour
    steps = torch.arange(WINDOW + HORIZONS).float() * (5.0 / 60.0)
    hours = t0 + steps                                                  # (n, W+H)
    zenith = (hours - 12.5).abs() / 7.0 * (math.pi / 2)
    clear = 1000.0 * torch.cos(zenith.clamp(max=1.5)).clamp(min=0)
    cloud = torch.sigmoid(torch.cumsum(torch.randn(n, WINDOW + HORIZONS, generator=g) * 0.3, 1))
    ghi = clear * (1.0 - 0.75 * cloud)
    dni = ghi * (1.0 - cloud) * 0.9
    dhi = ghi - dni * torch.cos(zenith.clamp(max=1.5))
    feats = torch.stack([ghi, dni, dhi, cloud, zenith, clear], -1) / torch.tensor(
        [1000.0, 1000.0, 500.0, 1.0, 1.6, 1000.0])
    x = feats[:, :WINDOW]
    kt = (ghi / clear.clamp(min=1.0))[:, WINDOW:]                       # clear-sky index target
    return x.contiguous(), kt.contiguous()


def train(args):
    torch.manual_seed(args.seed)
    model = Nowcaster(width=args.width, with_aux=True)
    compiled = torch.compile(model, backend=args.backend)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    x, y = make_windows(args.train_size, seed=1)
    xv, yv = make_windows(256, seed=2)
    t_start = time.time()
    for step in range(1, args.steps + 1):
        idx = torch.randint(0, x.shape[0], (args.batch_size,))
        compiled.train()
        out, aux = compiled(x[idx])
        loss = F.smooth_l1_loss(out, y[idx]) + 0.3 * F.smooth_l1_loss(aux, y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % args.log_every == 0 or step == args.steps:
            compiled.eval()
            with torch.no_grad():
                mae = (compiled(xv) - yv).abs().mean().item()
            log.info("step %d loss %.4f val_mae %.4f (%.1fs)", step, loss.item(), mae, time.time() - t_start)
    torch.save({"model": compiled.state_dict(), "width": args.width, "steps": args.steps}, args.ckpt)
    log.info("saved checkpoint to %s", args.ckpt)


def build_serving_model(ckpt, compile_it, backend):
    torch.manual_seed(0)
    model = Nowcaster(width=ckpt["width"], with_aux=False)
    if compile_it:
        model = torch.compile(model, backend=backend)
    # the training checkpoint still carries the aux head; the serving variant has none
    model.load_state_dict(ckpt["model"], strict=False)
    model.eval()
    return model


def gate(args):
    ckpt = torch.load(args.ckpt, weights_only=True)
    eager = build_serving_model(ckpt, compile_it=False, backend=args.backend)
    compiled = build_serving_model(ckpt, compile_it=True, backend=args.backend)
    xf, yf = make_windows(args.fixture_size, seed=3)
    with torch.no_grad():
        ref = eager(xf)
        out = compiled(xf)
    diff = (out - ref).abs()
    log.info("fixture windows: %d  horizons: %d", xf.shape[0], HORIZONS)
    log.info("eager    mae vs truth: %.4f", (ref - yf).abs().mean().item())
    log.info("compiled mae vs truth: %.4f", (out - yf).abs().mean().item())
    log.info("max |compiled - eager| = %.3e   mean = %.3e", diff.max().item(), diff.mean().item())
    ok = torch.allclose(out, ref, rtol=args.rtol, atol=args.atol)
    if ok:
        log.info("GATE PASSED (rtol=%g atol=%g)", args.rtol, args.atol)
        return 0
    worst = diff.flatten().argmax().item()
    r, c = divmod(worst, HORIZONS)
    log.error("GATE FAILED (rtol=%g atol=%g): worst window %d horizon %d eager=%.5f compiled=%.5f",
              args.rtol, args.atol, r, c, ref[r, c].item(), out[r, c].item())
    return 1


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--stage", choices=["train", "gate", "all"], default="all")
    p.add_argument("--ckpt", default="nowcaster.pt")
    p.add_argument("--backend", default="inductor")
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--train-size", type=int, default=2048)
    p.add_argument("--fixture-size", type=int, default=128)
    p.add_argument("--width", type=int, default=48)
    p.add_argument("--log-every", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--atol", type=float, default=1e-4)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    rc = 0
    if args.stage in ("train", "all"):
        train(args)
    if args.stage in ("gate", "all"):
        rc = gate(args)
    raise SystemExit(rc)


if __name__ == "__main__":
    main()
