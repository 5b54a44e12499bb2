"""Serving worker: pulls decoded camera frames, batches them, runs the AOTI package.

Runs in shadow mode against the eager checkpoint while we roll the package out.

    python serve_frames.py --artifacts artifacts
"""
import argparse
import os
import sys

import torch

from model import FrameClassifier, product_frames


def decode_frames(n, seed):
    """Stand-in for the camera SDK: uint8 RGB frames, HWC, like cv2/PIL give us."""
    frames, _ = product_frames(n, seed)
    return frames


def preprocess(frames_hwc):
    x = torch.from_numpy(frames_hwc)                 # (B, H, W, 3) uint8
    x = x.permute(0, 3, 1, 2).float().div_(255.0)    # (B, 3, H, W) float in [0, 1]
    return x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--artifacts", default="artifacts")
    ap.add_argument("--batches", type=int, default=32)
    ap.add_argument("--bs", type=int, default=8)
    args = ap.parse_args()

    runner = torch._inductor.aoti_load_package(os.path.join(args.artifacts, "frame_classifier.pt2"))
    shadow = FrameClassifier()
    shadow.load_state_dict(torch.load(os.path.join(args.artifacts, "frame_classifier.pth")))
    shadow.eval()

    agree = total = 0
    worst = 0.0
    with torch.inference_mode():
        for b in range(args.batches):
            x = preprocess(decode_frames(args.bs, seed=100 + b))
            logits = runner(x)
            ref = shadow(x)
            agree += (logits.argmax(1) == ref.argmax(1)).sum().item()
            total += x.shape[0]
            worst = max(worst, (logits - ref).abs().max().item())
    rate = agree / total
    print(f"frames served: {total}   top-1 agreement with eager shadow: {rate:.3f}   max |logit diff|: {worst:.3f}")
    if rate < 0.99:
        print("shadow check FAILED: package disagrees with the eager checkpoint")
        sys.exit(1)
    print("shadow check passed")


if __name__ == "__main__":
    main()
