import argparse
import time

import torch
import torch.nn as nn


class Denoiser(nn.Module):
    def __init__(self, dim=64, hidden=256, n_steps=16):
        super().__init__()
        self.t_embed = nn.Embedding(n_steps, hidden)
        self.inp = nn.Linear(dim, hidden)
        self.mid = nn.Sequential(nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU())
        self.out = nn.Linear(hidden, dim)

    def forward(self, x, t):
        h = self.inp(x) + self.t_embed(t)
        return self.out(self.mid(h))


def sampling_steps(model, x, n_steps, guidance):
    """Yields the intermediate sample after every step, returns the final one."""
    for i in reversed(range(n_steps)):
        t = torch.full((x.shape[0],), i, dtype=torch.long)
        eps = model(x, t)
        x = x - guidance * eps / n_steps
        x = x.clamp(-3.0, 3.0)
        yield x
    return x * 0.5 + 0.5


def run_sampler(model, x, n_steps, guidance):
    return sampling_steps(model, x, n_steps, guidance)


def consume(steps, preview_every):
    previews = []
    k = 0
    while True:
        try:
            x = next(steps)
        except StopIteration as stop:
            return previews, stop.value
        if k % preview_every == 0:
            previews.append(x.mean().item())
        k += 1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--steps", type=int, default=16)
    p.add_argument("--guidance", type=float, default=1.5)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--no-compile", action="store_true")
    args = p.parse_args()

    torch.manual_seed(0)
    model = Denoiser(args.dim, n_steps=args.steps).eval()
    sampler = run_sampler if args.no_compile else torch.compile(run_sampler)

    with torch.no_grad():
        for r in range(args.rounds):
            noise = torch.randn(args.batch, args.dim, generator=torch.Generator().manual_seed(r))
            t0 = time.perf_counter()
            previews, final = consume(sampler(model, noise, args.steps, args.guidance), preview_every=4)
            dt = time.perf_counter() - t0
            print(f"round {r}: {len(previews)} previews, final mean={final.mean().item():.4f} "
                  f"std={final.std().item():.4f} ({dt*1000:.1f} ms)")


if __name__ == "__main__":
    main()
