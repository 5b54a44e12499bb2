"""A CI gate for an image preprocessing step: bilinear resize of uint8 images, then scale to [0, 1], compared
compiled vs eager with a tight tolerance. Compiled, the resize is decomposed (float math, then a round back to
uint8) and lands one grey level away from eager's uint8 kernel on some pixels: the gate fails only compiled."""
import sys

import torch
import torch.nn.functional as F


def preprocess(img):
    small = F.interpolate(img, size=(24, 40), mode="bilinear", antialias=False, align_corners=False)
    return small.to(torch.float32) / 255.0


torch.manual_seed(0)
img = torch.randint(0, 256, (2, 3, 61, 97), dtype=torch.uint8)
eager, compiled = preprocess(img), torch.compile(preprocess)(img)
diff = (eager - compiled).abs()
print(f"resize gate: max_abs={diff.max().item():.3e} mismatched={int((diff > 1e-4).sum())}/{diff.numel()}")
sys.exit(0 if diff.max().item() <= 1e-4 else 1)
