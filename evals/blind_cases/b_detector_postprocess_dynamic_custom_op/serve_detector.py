"""Single-image detector serving loop: tiny conv head + score filtering + box decoding."""
import argparse
import logging
import time

import torch
import torch.nn as nn

import det_ops  # noqa: F401  (registers detpost ops)
from det_ops import decode_boxes

log = logging.getLogger("serve")


class TinyHead(nn.Module):
    def __init__(self, classes=20, anchors_per_cell=3, width=32):
        super().__init__()
        self.classes, self.a = classes, anchors_per_cell
        self.backbone = nn.Sequential(
            nn.Conv2d(3, width, 3, 2, 1), nn.ReLU(),
            nn.Conv2d(width, width, 3, 2, 1), nn.ReLU(),
            nn.Conv2d(width, width, 3, 2, 1), nn.ReLU(),
        )
        self.cls = nn.Conv2d(width, anchors_per_cell * classes, 1)
        self.box = nn.Conv2d(width, anchors_per_cell * 4, 1)

    def forward(self, img):
        f = self.backbone(img)
        cls = self.cls(f).permute(0, 2, 3, 1).reshape(-1, self.classes)
        box = self.box(f).permute(0, 2, 3, 1).reshape(-1, 4)
        return cls.sigmoid(), box


def make_anchors(h, w, stride=8, sizes=(16, 32, 64)):
    ys, xs = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
    c = torch.stack([xs, ys], -1).reshape(-1, 1, 2).float() * stride + stride / 2
    s = torch.tensor(sizes, dtype=torch.float).reshape(1, -1, 1) / 2
    return torch.cat([c - s, c + s], -1).reshape(-1, 4)


class Detector(nn.Module):
    def __init__(self, head, anchors, threshold, max_dets):
        super().__init__()
        self.head = head
        self.register_buffer("anchors", anchors)
        self.threshold, self.max_dets = threshold, max_dets

    def forward(self, img):
        scores, deltas = self.head(img)
        keep = torch.ops.detpost.score_filter(scores, self.threshold)[: self.max_dets]
        boxes = decode_boxes(deltas[keep], self.anchors[keep])
        conf, label = scores[keep].max(dim=-1)
        return boxes, conf, label


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--size", type=int, default=128)
    p.add_argument("--requests", type=int, default=12)
    p.add_argument("--threshold", type=float, default=0.55)
    p.add_argument("--max-dets", type=int, default=100)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)
    g = args.size // 8
    det = Detector(TinyHead(), make_anchors(g, g), args.threshold, args.max_dets).eval()
    run = torch.compile(det) if args.compile else det

    lat = []
    with torch.no_grad():
        for i in range(args.requests):
            img = torch.rand(1, 3, args.size, args.size) * (0.5 + i / args.requests)
            t0 = time.perf_counter()
            boxes, conf, label = run(img)
            lat.append(time.perf_counter() - t0)
            ref = det(img)
            ok = boxes.shape == ref[0].shape and torch.allclose(boxes, ref[0], atol=1e-4)
            log.info("req %02d dets=%d top_conf=%.3f match_eager=%s %.1f ms", i, boxes.shape[0],
                     conf.max().item() if conf.numel() else 0.0, ok, 1000 * lat[-1])
    log.info("p50 latency %.1f ms over %d requests", 1000 * sorted(lat)[len(lat) // 2], len(lat))


if __name__ == "__main__":
    main()
