"""Offline evaluation of our defect-classifier (MobileNet-style, 64x64 crops).

Same network as training, but the blocks use in-place activations so that the
inference box (small CPU VM) keeps peak memory down. Compiled with torch.compile
because the nightly eval job runs over ~2M crops.
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand=4):
        super().__init__()
        hid = cin * expand
        self.use_res = stride == 1 and cin == cout
        self.pw = nn.Conv2d(cin, hid, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(hid)
        self.dw = nn.Conv2d(hid, hid, 3, stride, 1, groups=hid, bias=False)
        self.bn2 = nn.BatchNorm2d(hid)
        self.pwl = nn.Conv2d(hid, cout, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(cout)

    def forward(self, x):
        out = F.relu(self.bn1(self.pw(x)))
        out.clamp_(max=6.0)  # relu6, in place (memory)
        out = F.relu(self.bn2(self.dw(out)))
        out.clamp_(max=6.0)
        out = self.bn3(self.pwl(out))
        if self.use_res:
            out += x
        return out


class DefectNet(nn.Module):
    def __init__(self, num_classes=8):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU6(inplace=True))
        cfg = [(16, 24, 2), (24, 24, 1), (24, 32, 2), (32, 32, 1), (32, 64, 2), (64, 64, 1)]
        self.blocks = nn.Sequential(*[InvertedResidual(a, b, s) for a, b, s in cfg])
        self.head = nn.Sequential(nn.Conv2d(64, 128, 1, bias=False), nn.BatchNorm2d(128), nn.ReLU6(inplace=True))
        self.fc = nn.Linear(128, num_classes)

    def forward(self, x):
        x = self.head(self.blocks(self.stem(x)))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def val_batches(n_batches=20, bs=64):
    g = torch.Generator().manual_seed(123)
    for _ in range(n_batches):
        x = torch.randn(bs, 3, 64, 64, generator=g)
        y = torch.randint(0, 8, (bs,), generator=g)
        yield x, y


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--no-compile", action="store_true")
    args = p.parse_args()

    torch.manual_seed(0)
    model = DefectNet()
    # (in production: model.load_state_dict(torch.load("defectnet_v7.pt")))
    model.eval()
    runner = model if args.no_compile else torch.compile(model)

    correct = total = 0
    loss_sum = 0.0
    t0 = time.time()
    for i, (x, y) in enumerate(val_batches()):
        logits = runner(x)
        loss_sum += F.cross_entropy(logits, y, reduction="sum").item()
        correct += (logits.argmax(1) == y).sum().item()
        total += y.numel()
        if i == 0:
            print(f"first batch done in {time.time() - t0:.1f}s")
    print(f"val_loss={loss_sum / total:.4f} acc={correct / total:.4f} ({total} crops, {time.time() - t0:.1f}s)")


if __name__ == "__main__":
    main()
