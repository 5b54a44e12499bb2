import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--compile", action="store_true")
    p.add_argument("--batches", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--n-mels", type=int, default=40)
    p.add_argument("--frames", type=int, default=100)
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


class ConvBNAct(nn.Module):
    def __init__(self, cin, cout, k=3, stride=1, groups=1):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, stride=stride, padding=k // 2, groups=groups, bias=False)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return F.gelu(self.bn(self.conv(x)))


class DSBlock(nn.Module):
    """Depthwise-separable residual block (keeps the mel/time resolution)."""

    def __init__(self, ch):
        super().__init__()
        self.dw = ConvBNAct(ch, ch, k=3, groups=ch)
        self.pw = nn.Conv2d(ch, ch, 1, bias=False)
        self.bn = nn.BatchNorm2d(ch)

    def forward(self, x):
        return F.gelu(x + self.bn(self.pw(self.dw(x))))


class TemporalProfilePool(nn.Module):
    """Pools the time axis with K learned temporal weighting profiles.

    Each profile is a softmax over frames; profile k gives an onset-, middle- or
    offset-weighted summary of every (channel, mel) cell.
    """

    def __init__(self, frames, profiles=4):
        super().__init__()
        self.logits = nn.Parameter(torch.zeros(profiles, frames))
        with torch.no_grad():
            centers = torch.linspace(0, frames - 1, profiles)
            t = torch.arange(frames, dtype=torch.float32)
            self.logits.copy_(-((t[None, :] - centers[:, None]) / (0.3 * frames)) ** 2)

    def forward(self, h):
        # h: (B, C, F, T) -> (K, B, C, F)
        w = self.logits.softmax(dim=-1)[:, None, None, :, None]
        return torch.matmul(h.unsqueeze(0), w).squeeze(-1)


class SoundEventTagger(nn.Module):
    def __init__(self, n_mels, frames, classes, width=40, profiles=4):
        super().__init__()
        self.stem = ConvBNAct(1, width, k=5)
        self.blocks = nn.Sequential(DSBlock(width), DSBlock(width), DSBlock(width))
        self.pool = TemporalProfilePool(frames, profiles)
        self.mel_proj = nn.Linear(n_mels, 1)
        self.head = nn.Sequential(
            nn.Linear(profiles * width, 128),
            nn.GELU(),
            nn.Dropout(0.1),
            nn.Linear(128, classes),
        )

    def forward(self, mel):
        h = self.blocks(self.stem(mel))
        pooled = self.pool(h)                      # (K, B, C, F)
        pooled = self.mel_proj(pooled).squeeze(-1)  # (K, B, C)
        feats = pooled.permute(1, 0, 2).flatten(1)  # (B, K*C)
        return self.head(feats)


def make_eval_set(args):
    g = torch.Generator().manual_seed(args.seed + 1)
    batches = []
    for _ in range(args.batches):
        mel = torch.randn(args.batch_size, 1, args.n_mels, args.frames, generator=g)
        onset = torch.randint(0, args.frames // 2, (args.batch_size,), generator=g)
        for i, o in enumerate(onset.tolist()):
            mel[i, 0, 5:15, o:o + 20] += 3.0
        labels = (torch.rand(args.batch_size, args.classes, generator=g) < 0.2).float()
        batches.append((mel.contiguous(memory_format=torch.channels_last), labels))
    return batches


@torch.no_grad()
def evaluate(model, batches):
    total_loss, n = 0.0, 0
    probs = []
    for mel, labels in batches:
        logits = model(mel)
        total_loss += F.binary_cross_entropy_with_logits(logits, labels, reduction="sum").item()
        n += labels.numel()
        probs.append(torch.sigmoid(logits))
    return total_loss / n, torch.cat(probs)


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    model = SoundEventTagger(args.n_mels, args.frames, args.classes).eval()
    model = model.to(memory_format=torch.channels_last)
    batches = make_eval_set(args)

    t0 = time.time()
    ref_loss, ref_probs = evaluate(model, batches)
    print(f"eager    bce {ref_loss:.6f}  ({time.time() - t0:.2f}s)", flush=True)

    if args.compile:
        cmodel = torch.compile(model)
        t0 = time.time()
        loss, probs = evaluate(cmodel, batches)
        print(f"compiled bce {loss:.6f}  ({time.time() - t0:.2f}s)", flush=True)
        print(f"max |p_eager - p_compiled| = {(ref_probs - probs).abs().max().item():.3e}", flush=True)


if __name__ == "__main__":
    main()
