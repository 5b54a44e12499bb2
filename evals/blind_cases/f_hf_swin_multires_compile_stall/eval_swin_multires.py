"""Multi-resolution evaluation of a Swin classifier (defect inspection crops).

Crops come from three camera heads with different native resolutions, so we
evaluate at 64 / 80 / 96 px without resizing (Swin pads to the window size).

    python eval_swin_multires.py --compile
"""
import argparse
import time

import torch
import torch.nn.functional as F
from transformers import SwinConfig, SwinForImageClassification

CLASSES = ["ok", "scratch", "dent", "stain", "crack"]
RESOLUTIONS = [64, 80, 96]


def build_model():
    cfg = SwinConfig(
        image_size=64, patch_size=4, num_channels=3, embed_dim=16,
        depths=[1, 1], num_heads=[2, 2], window_size=4, mlp_ratio=2.0,
        num_labels=len(CLASSES),
    )
    torch.manual_seed(0)
    return SwinForImageClassification(cfg).eval()


def make_loader(res, n_batches, bs, seed):
    g = torch.Generator().manual_seed(seed)
    for _ in range(n_batches):
        x = torch.rand(bs, 3, res, res, generator=g)
        x = (x - 0.45) / 0.25
        y = torch.randint(0, len(CLASSES), (bs,), generator=g)
        yield x, y


@torch.no_grad()
def evaluate(model, res, n_batches, bs):
    correct = total = 0
    loss_sum = 0.0
    t0 = time.time()
    for i, (x, y) in enumerate(make_loader(res, n_batches, bs, seed=res)):
        logits = model(pixel_values=x).logits
        loss_sum += F.cross_entropy(logits, y, reduction="sum").item()
        correct += (logits.argmax(-1) == y).sum().item()
        total += y.numel()
        if i == 0:
            print(f"  res={res}: first batch {time.time() - t0:.1f}s", flush=True)
    return loss_sum / total, correct / total, time.time() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--batches", type=int, default=4)
    ap.add_argument("--bs", type=int, default=8)
    args = ap.parse_args()
    torch.set_num_threads(1)

    model = build_model()
    runner = torch.compile(model) if args.compile else model
    for res in RESOLUTIONS:
        loss, acc, secs = evaluate(runner, res, args.batches, args.bs)
        print(f"res={res:3d}px  loss={loss:.4f}  acc={acc:.3f}  ({secs:.1f}s)", flush=True)


if __name__ == "__main__":
    main()
