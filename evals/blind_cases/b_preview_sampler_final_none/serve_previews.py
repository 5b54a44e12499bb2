"""Preview-streaming render worker (offline harness).

Renders a batch of class-conditional latents, pushing low-res previews to the
client while sampling runs, then decodes the final latents.

    python serve_previews.py            # eager
    python serve_previews.py --compile  # what we deploy
"""
import argparse
import time

import torch

from sampler import PreviewSampler, TinyDenoiser


def decode(latents):
    # stand-in for the VAE decoder: map latents to [0, 255] uint8 "pixels"
    img = (latents.clamp(-3, 3) + 3) / 6
    return (img * 255).round().to(torch.uint8)


def render_stream(sampler, noise, labels):
    """Generator consumed by the HTTP layer: preview events, then the final image."""
    latents = yield from sampler.start(noise, labels)
    yield "final", decode(latents)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--size", type=int, default=32)
    args = ap.parse_args()

    torch.manual_seed(0)
    denoiser = TinyDenoiser().eval()
    sampler = PreviewSampler(denoiser)
    if args.compile:
        sampler.start = torch.compile(sampler.start)

    noise = torch.randn(args.batch, 4, args.size, args.size)
    labels = torch.tensor([3, 7][: args.batch])

    t0 = time.perf_counter()
    events = 0
    with torch.no_grad():
        for kind, payload in render_stream(sampler, noise, labels):
            events += 1
            if kind == "final":
                print(f"[{time.perf_counter() - t0:6.2f}s] final image {tuple(payload.shape)} "
                      f"mean pixel {payload.float().mean().item():.2f}")
            else:
                print(f"[{time.perf_counter() - t0:6.2f}s] preview after step {kind}: "
                      f"{tuple(payload.shape)} mean {payload.mean().item():+.4f}")
    print(f"done: {events} events")


if __name__ == "__main__":
    main()
