"""Package the keyword-spotting model for the on-device inference service.

Exports the model with a dynamic waveform length (utterances are 0.5 s .. 4 s at
16 kHz), compiles it with AOTInductor into a .pt2 package, then smoke-tests the
package against the eager model on a few utterance lengths.
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.export import Dim

log = logging.getLogger("export_kws")

KEYWORDS = ["_silence_", "_unknown_", "yes", "no", "up", "down", "left", "right", "stop", "go"]


def mel_filterbank(n_fft, n_mels, sr, fmin=20.0, fmax=None):
    fmax = fmax or sr / 2
    def hz2mel(f): return 2595.0 * math.log10(1.0 + f / 700.0)
    def mel2hz(m): return 700.0 * (10 ** (m / 2595.0) - 1.0)
    mels = torch.linspace(hz2mel(fmin), hz2mel(fmax), n_mels + 2)
    hz = torch.tensor([mel2hz(m.item()) for m in mels])
    bins = torch.linspace(0, sr / 2, n_fft // 2 + 1)
    fb = torch.zeros(n_mels, n_fft // 2 + 1)
    for i in range(n_mels):
        lo, c, hi = hz[i], hz[i + 1], hz[i + 2]
        up = (bins - lo) / (c - lo)
        down = (hi - bins) / (hi - c)
        fb[i] = torch.clamp(torch.minimum(up, down), min=0.0)
    return fb


class LogMel(nn.Module):
    def __init__(self, sr=16000, n_fft=512, hop=160, n_mels=40):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft), persistent=False)
        self.register_buffer("fb", mel_filterbank(n_fft, n_mels, sr), persistent=False)

    def forward(self, wav):
        spec = torch.stft(wav, self.n_fft, self.hop, window=self.window,
                          center=True, pad_mode="reflect", return_complex=True)
        power = spec.real ** 2 + spec.imag ** 2             # (B, F, frames)
        mel = torch.matmul(self.fb, power)                 # (B, n_mels, frames)
        return torch.log(mel + 1e-6)


class DSBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.dw = nn.Conv1d(cin, cin, 5, stride=stride, padding=2, groups=cin, bias=False)
        self.pw = nn.Conv1d(cin, cout, 1, bias=False)
        self.bn = nn.BatchNorm1d(cout)

    def forward(self, x):
        return F.relu(self.bn(self.pw(self.dw(x))))


class KWSNet(nn.Module):
    def __init__(self, n_mels=40, width=64, n_classes=len(KEYWORDS)):
        super().__init__()
        self.frontend = LogMel(n_mels=n_mels)
        self.norm = nn.InstanceNorm1d(n_mels)
        self.blocks = nn.Sequential(
            DSBlock(n_mels, width, 1), DSBlock(width, width, 2),
            DSBlock(width, width, 1), DSBlock(width, width, 2),
        )
        self.head = nn.Linear(width, n_classes)

    def forward(self, wav):
        x = self.norm(self.frontend(wav))
        x = self.blocks(x)
        return self.head(x.mean(dim=-1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="kws_aoti.pt2")
    ap.add_argument("--sr", type=int, default=16000)
    ap.add_argument("--min-sec", type=float, default=0.5)
    ap.add_argument("--max-sec", type=float, default=4.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    model = KWSNet().eval()   # stands in for torch.load of the trained checkpoint
    log.info("torch %s, params %.1fk", torch.__version__,
             sum(p.numel() for p in model.parameters()) / 1e3)

    # the service sends one utterance per request
    example = torch.randn(1, args.sr)
    samples = Dim("samples", min=int(args.min_sec * args.sr), max=int(args.max_sec * args.sr))
    t0 = time.time()
    with torch.no_grad():
        ep = torch.export.export(model, (example,), dynamic_shapes={"wav": {1: samples}})
    log.info("exported in %.1fs; range constraints: %s", time.time() - t0, ep.range_constraints)

    t0 = time.time()
    path = torch._inductor.aoti_compile_and_package(ep, package_path=args.out)
    log.info("AOTInductor package written to %s in %.1fs", path, time.time() - t0)

    runner = torch._inductor.aoti_load_package(path)
    worst = 0.0
    for sec in (0.5, 1.0, 1.37, 2.5, 4.0):
        wav = torch.randn(1, int(sec * args.sr))
        with torch.no_grad():
            ref = model(wav)
        out = runner(wav)
        err = (out - ref).abs().max().item()
        worst = max(worst, err)
        log.info("len %.2fs (%6d samples): max|pkg - eager| = %.2e  top1 %s/%s", sec, wav.shape[1],
                 err, KEYWORDS[out.argmax().item()], KEYWORDS[ref.argmax().item()])
    if worst > 1e-4:
        raise SystemExit(f"smoke test FAILED: worst abs diff {worst:.2e}")
    log.info("smoke test passed (worst abs diff %.2e)", worst)


if __name__ == "__main__":
    main()
