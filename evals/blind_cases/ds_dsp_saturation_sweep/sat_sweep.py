"""Gain sweep for the vibration classifier before it goes to the DSP target.

The DSP runs the network with 16-bit fixed-point accumulators that saturate.
We emulate that in PyTorch with a tensor subclass that clamps the result of
every accumulating op (conv / linear / add / mul) to the accumulator range,
then sweep the front-end gain to see where accuracy falls off.

The sweep over all gains and all validation shards is slow in eager mode, so
the nightly job runs it through torch.compile; --check compares against eager
on a couple of gains first.
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# accumulator range of the target, in units of the float model (Q6.9 -> +-64)
ACC_LIMIT = 64.0

_ACCUMULATING = {
    F.conv1d, torch.conv1d, F.linear,
    torch.add, torch.Tensor.add, torch.Tensor.__add__, torch.Tensor.__radd__,
    torch.mul, torch.Tensor.mul, torch.Tensor.__mul__, torch.Tensor.__rmul__,
}


class SaturatingTensor(torch.Tensor):
    """Activation tensor whose accumulating ops saturate like the DSP."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        out = super().__torch_function__(func, types, args, kwargs or {})
        if func in _ACCUMULATING and isinstance(out, torch.Tensor):
            out = out.clamp(-ACC_LIMIT, ACC_LIMIT)
        return out


def saturating(x):
    return x.as_subclass(SaturatingTensor)


class ResBlock(nn.Module):
    def __init__(self, ch, k=5):
        super().__init__()
        self.c1 = nn.Conv1d(ch, ch, k, padding=k // 2)
        self.c2 = nn.Conv1d(ch, ch, k, padding=k // 2)

    def forward(self, x):
        h = F.relu(self.c1(x))
        h = self.c2(h)
        return F.relu(h + x)


class VibNet(nn.Module):
    def __init__(self, in_ch=3, ch=32, n_cls=6, n_blocks=3):
        super().__init__()
        self.stem = nn.Conv1d(in_ch, ch, 7, padding=3)
        self.blocks = nn.Sequential(*[ResBlock(ch) for _ in range(n_blocks)])
        self.head = nn.Linear(ch, n_cls)

    def forward(self, x):
        h = F.relu(self.stem(x))
        h = self.blocks(h)
        h = h.mean(dim=-1)
        return self.head(h)


def make_data(n, t=256, n_cls=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, n_cls, (n,), generator=g)
    tt = torch.arange(t).float() / t
    freqs = 3.0 + 4.0 * y.float()
    x = torch.stack([
        torch.sin(2 * math.pi * freqs[:, None] * tt + ph)
        for ph in (0.0, 1.0, 2.0)
    ], dim=1)
    amp = 1.0 + 2.0 * torch.rand(n, 1, 1, generator=g)
    x = amp * x + 0.3 * torch.randn(n, 3, t, generator=g)
    return x, y


def train_float(model, x, y, steps=120, bs=64):
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    g = torch.Generator().manual_seed(1)
    model.train()
    for step in range(steps):
        idx = torch.randint(0, x.shape[0], (bs,), generator=g)
        loss = F.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    model.eval()
    return loss.item()


@torch.no_grad()
def evaluate(fwd, x, y, gain, bs=128, sat=True):
    correct, logit_abs = 0, 0.0
    for i in range(0, x.shape[0], bs):
        xb = x[i:i + bs] * gain
        if sat:
            xb = saturating(xb)
        out = fwd(xb).as_subclass(torch.Tensor)
        correct += (out.argmax(-1) == y[i:i + bs]).sum().item()
        logit_abs += out.abs().mean().item() * xb.shape[0]
    return correct / x.shape[0], logit_abs / x.shape[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gains", type=float, nargs="+", default=[0.5, 1, 2, 4, 8, 16])
    ap.add_argument("--no-check", dest="check", action="store_false")
    args = ap.parse_args()

    torch.manual_seed(0)
    x_tr, y_tr = make_data(2048, seed=0)
    x_va, y_va = make_data(1024, seed=1)

    model = VibNet()
    t0 = time.time()
    last = train_float(model, x_tr, y_tr)
    print(f"float training done in {time.time() - t0:.1f}s, last loss {last:.3f}")
    acc, _ = evaluate(model, x_va, y_va, 1.0, sat=False)
    print(f"float model val acc {acc:.3f}")

    compiled = torch.compile(model)

    if args.check:
        bad = 0
        for gain in (1.0, 8.0):
            acc_e, mag_e = evaluate(model, x_va, y_va, gain)
            acc_c, mag_c = evaluate(compiled, x_va, y_va, gain)
            ok = abs(acc_e - acc_c) < 0.01 and abs(mag_e - mag_c) < 1e-3 * max(1.0, mag_e)
            bad += not ok
            print(f"check gain={gain:<4} eager acc={acc_e:.3f} |logit|={mag_e:.4f}  "
                  f"compiled acc={acc_c:.3f} |logit|={mag_c:.4f}  {'OK' if ok else 'MISMATCH'}")
        if bad:
            print("compiled saturation sweep disagrees with eager; not publishing")

    print("gain   acc(sat, compiled)  |logit|")
    t0 = time.time()
    for gain in args.gains:
        acc, mag = evaluate(compiled, x_va, y_va, gain)
        print(f"{gain:<6} {acc:.3f}               {mag:.3f}")
    print(f"sweep took {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
