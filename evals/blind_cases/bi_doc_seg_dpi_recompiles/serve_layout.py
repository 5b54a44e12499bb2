"""Layout-segmentation service (document scans -> text / table / figure / background masks).

Requests come from different scanners, so each page carries its scan resolution. The model was trained at
TRAIN_DPI, so the page is resampled to that resolution inside the model, segmented, and the mask is
brought back to the original page size.
"""
import argparse
import logging
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("layout")
TRAIN_DPI = 150.0
CLASSES = ["background", "text", "table", "figure"]


def conv_bn(cin, cout, stride=1):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class LayoutNet(nn.Module):
    def __init__(self, width=16, n_classes=len(CLASSES)):
        super().__init__()
        self.enc1 = nn.Sequential(conv_bn(1, width), conv_bn(width, width))
        self.enc2 = nn.Sequential(conv_bn(width, 2 * width, 2), conv_bn(2 * width, 2 * width))
        self.enc3 = nn.Sequential(conv_bn(2 * width, 4 * width, 2), conv_bn(4 * width, 4 * width))
        self.dec2 = conv_bn(6 * width, 2 * width)
        self.dec1 = conv_bn(3 * width, width)
        self.head = nn.Conv2d(width, n_classes, 1)

    def forward(self, page, resample):
        h, w = page.shape[-2:]
        x = F.interpolate(page, scale_factor=resample, mode="bilinear", align_corners=False)
        e1 = self.enc1(x)
        e2 = self.enc2(e1)
        e3 = self.enc3(e2)
        d2 = self.dec2(torch.cat([F.interpolate(e3, size=e2.shape[-2:], mode="nearest"), e2], 1))
        d1 = self.dec1(torch.cat([F.interpolate(d2, size=e1.shape[-2:], mode="nearest"), e1], 1))
        logits = self.head(d1)
        return F.interpolate(logits, size=(h, w), mode="bilinear", align_corners=False)


def make_requests(n, seed):
    """Synthetic request stream: (page tensor, dpi). Page sizes are A4-ish thumbnails at the scan dpi."""
    g = torch.Generator().manual_seed(seed)
    scanner_dpis = [100, 120, 150, 180, 200, 240, 300]
    reqs = []
    for i in range(n):
        dpi = scanner_dpis[int(torch.randint(len(scanner_dpis), (1,), generator=g))]
        h = int(round(dpi * 0.55))  # a strip of the page, 0.55 x 0.40 inch per request
        w = int(round(dpi * 0.40))
        page = torch.rand(1, 1, h, w, generator=g)
        reqs.append((page, dpi))
    return reqs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=12)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    model = LayoutNet().eval()
    runner = model if args.no_compile else torch.compile(model, dynamic=True)
    reqs = make_requests(args.requests, args.seed)
    log.info("serving %d requests (%s), dpis seen: %s", len(reqs), "eager" if args.no_compile else "compiled",
             sorted({d for _, d in reqs}))

    lat = []
    t_all = time.perf_counter()
    with torch.inference_mode():
        for i, (page, dpi) in enumerate(reqs):
            t0 = time.perf_counter()
            logits = runner(page, TRAIN_DPI / dpi)
            mask = logits.argmax(1)
            dt = (time.perf_counter() - t0) * 1000
            lat.append(dt)
            frac = torch.bincount(mask.flatten(), minlength=len(CLASSES)).float() / mask.numel()
            if dt > 500:
                log.warning("req %d dpi=%d page=%s slow: %.0f ms", i, dpi, tuple(page.shape[-2:]), dt)
            elif i % 10 == 0:
                log.info("req %d dpi=%d page=%s %.1f ms text=%.2f", i, dpi, tuple(page.shape[-2:]), dt, frac[1].item())
    total = time.perf_counter() - t_all
    steady = lat[args.warmup:]
    log.info("total %.1fs; after warm-up (%d reqs): median %.1f ms, max %.1f ms, %d requests over 500 ms",
             total, args.warmup, statistics.median(steady), max(steady), sum(d > 500 for d in steady))


if __name__ == "__main__":
    main()
