"""Benchmark the temporal fuser on a synthetic clip (Cityscapes-like: 19 classes).

  python run_clip.py --compile          # compiled fuser
  python run_clip.py                    # eager fuser
  python run_clip.py --compile --frames 24 --height 256 --width 512
"""
import argparse
import logging
import time

import torch

from fuser import TemporalFuser

log = logging.getLogger("vseg")


def synthetic_clip(frames, batch, classes, h, w, seed):
    g = torch.Generator().manual_seed(seed)
    # blocky "scene" logits that drift a little every frame, plus a smooth flow field
    coarse = torch.randn(batch, classes, h // 32, w // 32, generator=g) * 3
    clip = []
    for t in range(frames):
        coarse = coarse + 0.3 * torch.randn(coarse.shape, generator=g)
        logits = torch.nn.functional.interpolate(coarse, size=(h, w), mode="bilinear", align_corners=False)
        logits = logits + 0.5 * torch.randn(batch, classes, h, w, generator=g)
        flow = torch.nn.functional.interpolate(
            torch.randn(batch, 2, 8, 16, generator=g) * 4.0, size=(h, w), mode="bilinear", align_corners=False)
        clip.append((logits.contiguous(), flow.contiguous()))
    return clip


@torch.inference_mode()
def process(fuser, clip):
    logits0, _ = clip[0]
    prob_prev = torch.softmax(logits0, 1)
    stats = []
    frame_ms = []
    for t, (logits, flow) in enumerate(clip[1:], start=1):
        t0 = time.perf_counter()
        prob_prev, labels, flips = fuser(logits, prob_prev, flow)
        frame_ms.append((time.perf_counter() - t0) * 1e3)
        stats.append(flips.mean().item())
        if t == 1:
            log.info("frame 1 took %.0f ms (includes compile if any)", frame_ms[-1])
    return frame_ms, stats, labels


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--frames", type=int, default=16)
    ap.add_argument("--batch", type=int, default=2, help="streams processed together")
    ap.add_argument("--classes", type=int, default=19)
    ap.add_argument("--height", type=int, default=256)
    ap.add_argument("--width", type=int, default=512)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)

    fuser = TemporalFuser(args.classes, args.height, args.width).eval()
    if args.compile:
        fuser = torch.compile(fuser)
    clip = synthetic_clip(args.frames, args.batch, args.classes, args.height, args.width, args.seed)
    log.info("torch %s | threads %d | %s | clip %d frames x %d streams @ %dx%d",
             torch.__version__, torch.get_num_threads(), "compiled" if args.compile else "eager",
             args.frames, args.batch, args.height, args.width)

    # warm-up pass over the clip, then the timed pass
    process(fuser, clip)
    frame_ms, stats, labels = process(fuser, clip)
    frame_ms.sort()
    log.info("steady state: median %.1f ms/frame, p90 %.1f ms/frame",
             frame_ms[len(frame_ms) // 2], frame_ms[int(len(frame_ms) * 0.9)])
    log.info("mean label flip rate %.4f | label histogram head %s",
             sum(stats) / len(stats), torch.bincount(labels.flatten(), minlength=args.classes)[:5].tolist())


if __name__ == "__main__":
    main()
