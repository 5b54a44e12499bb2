"""Release gate for the podcast clean-up pipeline.

Every release we check that the torch.compile'd serving path matches the eager
path on a batch of synthetic long-form episodes before shipping the model.
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("loudness_gate")

SAMPLE_RATE = 16000


class DenoiseNet(nn.Module):
    """Small causal conv denoiser that runs after loudness normalization."""

    def __init__(self, channels=16, kernel=9, layers=3):
        super().__init__()
        self.inp = nn.Conv1d(1, channels, kernel, padding=kernel // 2)
        self.body = nn.ModuleList(
            nn.Conv1d(channels, channels, kernel, padding=kernel // 2, groups=channels)
            for _ in range(layers)
        )
        self.mix = nn.ModuleList(nn.Conv1d(channels, channels, 1) for _ in range(layers))
        self.out = nn.Conv1d(channels, 1, 1)

    def forward(self, x):
        h = F.gelu(self.inp(x))
        for dw, pw in zip(self.body, self.mix):
            h = h + pw(F.gelu(dw(h)))
        return x + 0.1 * torch.tanh(self.out(h))


class EpisodeCleaner(nn.Module):
    def __init__(self, target_dbfs=-20.0):
        super().__init__()
        self.target_rms = 10 ** (target_dbfs / 20.0)
        self.net = DenoiseNet()

    def loudness_gain(self, wave):
        # RMS over the whole episode -> gain that brings it to the target level
        n = wave.shape[-1]
        rms = torch.linalg.vector_norm(wave, dim=-1, keepdim=True) / math.sqrt(n)
        return self.target_rms / rms.clamp_min(1e-8)

    def forward(self, wave):
        gain = self.loudness_gain(wave)
        y = self.net((wave * gain).unsqueeze(1)).squeeze(1)
        return y, gain


def synth_episodes(batch, seconds, seed):
    g = torch.Generator().manual_seed(seed)
    n = seconds * SAMPLE_RATE
    t = torch.arange(n, dtype=torch.float32) / SAMPLE_RATE
    voices = []
    for b in range(batch):
        f0 = 110 + 40 * b
        speech = 0.3 * torch.sin(2 * math.pi * f0 * t) * (0.6 + 0.4 * torch.sin(2 * math.pi * 0.5 * t))
        hum = 0.05 * torch.sin(2 * math.pi * 60 * t)
        noise = 0.02 * torch.randn(n, generator=g)
        level = 0.5 + 0.5 * b / max(batch - 1, 1)
        voices.append(level * (speech + hum + noise))
    return torch.stack(voices)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--seconds", type=int, default=60)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rtol", type=float, default=1e-5)
    p.add_argument("--atol", type=float, default=1e-6)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    model = EpisodeCleaner().eval()
    waves = synth_episodes(args.batch, args.seconds, args.seed)
    log.info("episodes: %s (%.0f s each at %d Hz)", tuple(waves.shape), args.seconds, SAMPLE_RATE)

    with torch.no_grad():
        t0 = time.perf_counter()
        y_eager, g_eager = model(waves)
        log.info("eager forward: %.2f s", time.perf_counter() - t0)

        compiled = torch.compile(model)
        t0 = time.perf_counter()
        y_comp, g_comp = compiled(waves)
        log.info("compiled forward (incl. compile): %.2f s", time.perf_counter() - t0)

    gain_rel = ((g_comp - g_eager).abs() / g_eager.abs()).squeeze(-1)
    out_diff = (y_comp - y_eager).abs().amax(dim=-1)
    for b in range(args.batch):
        log.info("episode %d: gain eager=%.7f compiled=%.7f rel.diff=%.2e  max|dy|=%.2e",
                 b, g_eager[b].item(), g_comp[b].item(), gain_rel[b].item(), out_diff[b].item())
    try:
        torch.testing.assert_close(y_comp, y_eager, rtol=args.rtol, atol=args.atol)
        torch.testing.assert_close(g_comp, g_eager, rtol=args.rtol, atol=args.atol)
    except AssertionError as e:
        log.error("PARITY GATE FAILED: compiled output does not match eager\n%s", e)
        raise SystemExit(1)
    log.info("parity gate passed")


if __name__ == "__main__":
    main()
