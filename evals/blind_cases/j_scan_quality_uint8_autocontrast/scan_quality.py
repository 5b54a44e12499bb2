"""Scan-quality classifier used by the document intake service.

Pages arrive from the scanner driver as uint8 RGB tensors (N, 3, H, W).  The
service stretches each page's per-channel range to the full 0..255 band
(auto-contrast, the same thing the old PIL pipeline did), normalizes, and runs a
small CNN that labels the page as ok / blurry / skewed / too_dark.

CI runs `python scan_quality.py --check` which scores a fixed synthetic batch in
eager mode and through torch.compile and fails when they disagree.
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

LABELS = ["ok", "blurry", "skewed", "too_dark"]
MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)


def autocontrast(pages: torch.Tensor, cutoff_floor: int = 8) -> torch.Tensor:
    """Per-page, per-channel min/max stretch of uint8 pages, returns float in [0, 1]."""
    lo = pages.amin(dim=(2, 3), keepdim=True)
    hi = pages.amax(dim=(2, 3), keepdim=True)
    span = (hi - lo).to(torch.float32)
    # flat channels (blank pages) are left as they are
    flat = span < cutoff_floor
    scale = torch.where(flat, torch.ones_like(span), 255.0 / span.clamp_min(1.0))
    offset = torch.where(flat, torch.zeros_like(span), lo.to(torch.float32))
    out = (pages.to(torch.float32) - offset) * scale
    return out.clamp(0.0, 255.0) / 255.0


def normalize(x: torch.Tensor) -> torch.Tensor:
    return (x - MEAN) / STD


class ConvBlock(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class ScanQualityNet(nn.Module):
    def __init__(self, width=24, n_classes=len(LABELS)):
        super().__init__()
        self.stem = ConvBlock(3, width, stride=2)
        self.stage1 = nn.Sequential(ConvBlock(width, width), ConvBlock(width, 2 * width, stride=2))
        self.stage2 = nn.Sequential(ConvBlock(2 * width, 2 * width), ConvBlock(2 * width, 4 * width, stride=2))
        self.head = nn.Linear(4 * width + 6, n_classes)

    def forward(self, pages_u8: torch.Tensor) -> torch.Tensor:
        x = autocontrast(pages_u8)
        # global brightness/contrast statistics go to the head next to the CNN features
        stats = torch.cat([x.mean(dim=(2, 3)), x.std(dim=(2, 3))], dim=1)
        x = normalize(x)
        x = self.stage2(self.stage1(self.stem(x)))
        feats = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.head(torch.cat([feats, stats], dim=1))


def synthetic_pages(n=8, h=96, w=72, seed=0) -> torch.Tensor:
    """Scanner-like pages: paper background in the 170-230 band, dark-ish text strokes,
    never true black or white (the scanner's dynamic range is compressed)."""
    g = torch.Generator().manual_seed(seed)
    pages = []
    for i in range(n):
        bg = 170 + 60 * torch.rand(3, 1, 1, generator=g)
        yy = torch.linspace(0, 1, h).view(1, h, 1)
        xx = torch.linspace(0, 1, w).view(1, 1, w)
        shading = 12 * torch.sin(math.pi * (yy + 0.3 * xx + 0.1 * i))
        page = bg + shading + 4 * torch.randn(3, h, w, generator=g)
        # text lines
        for line in range(6, h - 6, 10):
            mask = torch.rand(1, 3, w, generator=g) < 0.55
            ink = 95 + 45 * torch.rand(3, 1, 1, generator=g)
            page[:, line:line + 3, :] = torch.where(mask, ink, page[:, line:line + 3, :])
        if i % 4 == 3:  # an under-exposed page
            page = page * 0.6
        pages.append(page.clamp(40, 235))
    return torch.stack(pages).round().to(torch.uint8)


def build_model(seed=0) -> ScanQualityNet:
    torch.manual_seed(seed)
    model = ScanQualityNet()
    # pretend-trained BN statistics so eval mode is not a no-op
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 1.5)
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=0.5)
    return model.eval()


@torch.no_grad()
def score(model, pages):
    logits = model(pages)
    return logits.softmax(-1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--atol", type=float, default=1e-3)
    args = ap.parse_args()

    model = build_model()
    pages = synthetic_pages()
    print(f"batch {tuple(pages.shape)} {pages.dtype}, pixel range {pages.min().item()}..{pages.max().item()}")

    t0 = time.perf_counter()
    eager = score(model, pages)
    t1 = time.perf_counter()
    compiled_model = torch.compile(model)
    comp = score(compiled_model, pages)
    t2 = time.perf_counter()
    print(f"eager {1e3 * (t1 - t0):.1f} ms, compiled (incl. compile) {t2 - t1:.1f} s")

    diff = (eager - comp).abs().max().item()
    agree = (eager.argmax(-1) == comp.argmax(-1)).float().mean().item()
    print("eager labels:   ", [LABELS[i] for i in eager.argmax(-1).tolist()])
    print("compiled labels:", [LABELS[i] for i in comp.argmax(-1).tolist()])
    print(f"max |p_eager - p_compiled| = {diff:.4g}, label agreement = {agree:.2f}")
    if args.check:
        if diff > args.atol:
            raise SystemExit(f"PARITY GATE FAILED: {diff:.4g} > atol {args.atol}")
        print("PARITY GATE OK")


if __name__ == "__main__":
    main()
