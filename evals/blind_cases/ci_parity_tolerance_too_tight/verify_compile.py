"""CI gate: the torch.compile'd keyword-spotting model must reproduce eager outputs.

Runs a batch of synthetic log-mel spectrograms through the eager model and the compiled
model and fails the pipeline if they disagree.

    python verify_compile.py --batch 16
"""
import argparse
import logging
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("verify")


class ResBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(x + self.bn2(self.conv2(y)))


class KWSNet(nn.Module):
    """Small ResNet over (1, n_mels, frames) spectrograms -> keyword logits."""
    def __init__(self, n_keywords=12, c=32, n_blocks=3):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU())
        self.blocks = nn.Sequential(*[ResBlock(c) for _ in range(n_blocks)])
        self.norm = nn.LayerNorm(c)
        self.fc = nn.Linear(c, n_keywords)

    def forward(self, spec):
        h = self.blocks(self.stem(spec))
        h = h.mean(dim=(2, 3))
        return F.log_softmax(self.fc(self.norm(h)), dim=-1)


def synthetic_logmel(batch, n_mels=40, frames=49, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, 1, n_mels, frames, generator=g).cumsum(-1) * 0.1
    return torch.log1p(x.abs())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--atol", type=float, default=1e-7)   # same math -> should be (near) identical
    p.add_argument("--rtol", type=float, default=0.0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    torch.manual_seed(0)
    model = KWSNet().eval()
    # pretend-trained BN statistics
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 2.0)
    x = synthetic_logmel(args.batch)

    with torch.no_grad():
        ref = model(x)
        out = torch.compile(model)(x)

    diff = (out - ref).abs()
    log.info("max|diff|=%.3e  mean|diff|=%.3e  argmax agree=%.3f", diff.max().item(),
             diff.mean().item(), (out.argmax(-1) == ref.argmax(-1)).float().mean().item())
    try:
        torch.testing.assert_close(out, ref, atol=args.atol, rtol=args.rtol)
    except AssertionError as e:
        log.error("COMPILED MODEL DOES NOT MATCH EAGER:\n%s", e)
        sys.exit(1)
    log.info("OK")


if __name__ == "__main__":
    main()
