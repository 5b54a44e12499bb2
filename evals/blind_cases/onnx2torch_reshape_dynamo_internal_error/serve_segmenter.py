"""CPU serving benchmark for the document-layout segmenter.

The model was exported to ONNX by the research team and converted back to a
torch.nn.Module (see converted_ops.py) so we can run it under torch.compile
in the serving container.
"""
import argparse
import logging
import statistics
import time

import torch
import torch.nn as nn

from converted_ops import OnnxConcat, OnnxReshape, OnnxResizeBilinear, OnnxSoftmaxV13

log = logging.getLogger("serve")


class ConvBNReLU(nn.Sequential):
    def __init__(self, cin, cout, k=3, s=1, d=1):
        super().__init__(nn.Conv2d(cin, cout, k, s, padding=d * (k // 2), dilation=d, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class LayoutSegmenter(nn.Module):
    """Mirrors the converted ONNX graph: stem -> ASPP -> spatial attention -> head."""

    def __init__(self, num_classes=6, width=32, in_hw=(256, 256)):
        super().__init__()
        h, w = in_hw[0] // 8, in_hw[1] // 8
        self.stem = nn.Sequential(ConvBNReLU(3, 16, s=2), ConvBNReLU(16, 24, s=2), ConvBNReLU(24, width, s=2),
                                  ConvBNReLU(width, width))
        self.aspp = nn.ModuleList([ConvBNReLU(width, width, k=1)] +
                                  [ConvBNReLU(width, width, d=d) for d in (2, 4, 6)])
        self.concat = OnnxConcat(axis=1)
        self.project = ConvBNReLU(4 * width, width, k=1)
        self.query = nn.Conv2d(width, 1, 1)
        self.softmax = OnnxSoftmaxV13(axis=-1)
        self.reshape = OnnxReshape()
        self.resize = OnnxResizeBilinear()
        self.classifier = nn.Conv2d(2 * width, num_classes, 1)
        # ONNX initializers carried over by the converter
        self.register_buffer("shape_flat", torch.tensor([1, width, -1], dtype=torch.int64))
        self.register_buffer("shape_attn", torch.tensor([1, 1, -1], dtype=torch.int64))
        self.register_buffer("shape_ctx", torch.tensor([0, 0, 1, 1], dtype=torch.int64))
        self.register_buffer("out_sizes", torch.tensor([1, num_classes, in_hw[0], in_hw[1]], dtype=torch.int64))

    def forward(self, x):
        f = self.stem(x)
        a = self.project(self.concat(*[b(f) for b in self.aspp]))
        flat = self.reshape(a, self.shape_flat)                       # [1, C, HW]
        attn = self.softmax(self.reshape(self.query(a), self.shape_attn))  # [1, 1, HW]
        ctx = torch.bmm(flat, attn.transpose(1, 2))                   # [1, C, 1]
        ctx = self.reshape(ctx, self.shape_ctx).expand_as(a)          # [1, C, H, W]
        logits = self.classifier(torch.cat([a, ctx], dim=1))
        return self.resize(logits, self.out_sizes)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--requests", type=int, default=30)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--size", type=int, default=256)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    model = LayoutSegmenter(in_hw=(args.size, args.size)).eval()
    runner = torch.compile(model) if args.compile else model

    pages = [torch.rand(1, 3, args.size, args.size) for _ in range(args.requests)]
    agree = []
    lat = []
    with torch.no_grad():
        for i in range(args.warmup):
            runner(pages[i])
        for page in pages:
            t0 = time.perf_counter()
            out = runner(page)
            lat.append((time.perf_counter() - t0) * 1e3)
            if args.compile:
                agree.append((out.argmax(1) == model(page).argmax(1)).float().mean().item())
    lat.sort()
    log.info("requests=%d p50=%.2fms p95=%.2fms mean=%.2fms", len(lat), statistics.median(lat),
             lat[int(0.95 * (len(lat) - 1))], statistics.mean(lat))
    if agree:
        log.info("pixel agreement compiled vs eager: min %.4f", min(agree))


if __name__ == "__main__":
    main()
