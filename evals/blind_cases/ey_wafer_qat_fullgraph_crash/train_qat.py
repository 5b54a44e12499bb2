"""Quantization-aware fine-tuning of the wafer-map defect classifier.

Trains the fp32 checkpoint-compatible CNN with fake-quant for a couple of epochs,
then converts it to an int8 model for the x86 inspection boxes and reports the
int8 validation accuracy.  The QAT step runs under torch.compile(fullgraph=True)
to cut the nightly job time.
"""
import argparse
import copy
import time
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.ao.quantization as tq
from torch.ao.nn.intrinsic import qat as nniqat

warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", message=".*reduce_range will be deprecated.*")

NUM_CLASSES = 8
MAP_SIZE = 32


# --------------------------------------------------------------------------- data
def make_wafer_maps(n, seed):
    """Synthetic stand-in for the fab export: 1-channel 32x32 wafer bin maps."""
    g = torch.Generator().manual_seed(seed)
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, MAP_SIZE), torch.linspace(-1, 1, MAP_SIZE), indexing="ij")
    r = torch.sqrt(xx ** 2 + yy ** 2)
    wafer = (r <= 1.0).float()
    labels = torch.randint(0, NUM_CLASSES, (n,), generator=g)
    maps = torch.empty(n, 1, MAP_SIZE, MAP_SIZE)
    for i in range(n):
        c = int(labels[i])
        base = 0.05 * torch.rand(MAP_SIZE, MAP_SIZE, generator=g)
        jitter = 0.15 * (torch.rand(2, generator=g) - 0.5)
        cx, cy = float(jitter[0]), float(jitter[1])
        rr = torch.sqrt((xx - cx) ** 2 + (yy - cy) ** 2)
        if c == 0:      # none
            pat = torch.zeros_like(r)
        elif c == 1:    # center
            pat = (rr < 0.35).float()
        elif c == 2:    # donut
            pat = ((rr > 0.35) & (rr < 0.6)).float()
        elif c == 3:    # edge-ring
            pat = (r > 0.8).float()
        elif c == 4:    # edge-loc
            ang = torch.atan2(yy, xx)
            a0 = float(torch.rand(1, generator=g)) * 6.28 - 3.14
            pat = ((r > 0.7) & ((ang - a0).abs() < 0.6)).float()
        elif c == 5:    # scratch
            k = float(torch.rand(1, generator=g)) * 2 - 1
            pat = ((yy - k * xx - cy).abs() < 0.06).float()
        elif c == 6:    # loc
            px, py = (torch.rand(2, generator=g) - 0.5).tolist()
            pat = (torch.sqrt((xx - px) ** 2 + (yy - py) ** 2) < 0.2).float()
        else:           # random
            pat = (torch.rand(MAP_SIZE, MAP_SIZE, generator=g) < 0.25).float()
        noise = (torch.rand(MAP_SIZE, MAP_SIZE, generator=g) < 0.03).float()
        maps[i, 0] = torch.clamp(pat + noise + base, 0, 1) * wafer
    return maps, labels


# -------------------------------------------------------------------------- model
class ConvBlock(nn.Sequential):
    def __init__(self, cin, cout, stride):
        super().__init__(
            nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=False),
        )


class WaferNet(nn.Module):
    def __init__(self, num_classes=NUM_CLASSES, width=(16, 32, 32, 64, 64)):
        super().__init__()
        self.quant = tq.QuantStub()
        chans = [1] + list(width)
        strides = [1, 2, 1, 2, 1]
        self.features = nn.Sequential(*[ConvBlock(chans[i], chans[i + 1], strides[i]) for i in range(len(width))])
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(width[-1], num_classes)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        x = self.quant(x)
        x = self.features(x)
        x = self.pool(x).flatten(1)
        x = self.head(x)
        return self.dequant(x)

    def fuse_for_qat(self):
        for block in self.features:
            tq.fuse_modules_qat(block, [["0", "1", "2"]], inplace=True)


def prepare_qat_model(fp32_model):
    model = copy.deepcopy(fp32_model)
    model.eval()
    model.fuse_for_qat()
    model.train()
    model.qconfig = tq.get_default_qat_qconfig("x86")
    tq.prepare_qat(model, inplace=True)
    return model


def compile_for_qat(model):
    # torch.ao (observers / fake-quant) is on dynamo's skip list; fullgraph=True refuses it otherwise
    model.forward = torch._dynamo.dont_skip_tracing(model.forward)
    return torch.compile(model, fullgraph=True)


# ----------------------------------------------------------------------- training
def train_step(model, opt, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits, y, label_smoothing=0.05)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss.detach()


def evaluate(model, maps, labels, bs=256):
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(maps), bs):
            correct += (model(maps[i:i + bs]).argmax(1) == labels[i:i + bs]).sum().item()
    return correct / len(maps)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()

    torch.manual_seed(0)
    train_x, train_y = make_wafer_maps(1024, seed=1)
    val_x, val_y = make_wafer_maps(256, seed=2)

    fp32 = WaferNet()
    # stands in for loading the fp32 production checkpoint
    opt = torch.optim.AdamW(fp32.parameters(), lr=3e-3)
    fp32.train()
    for _ in range(4):
        for i in range(0, len(train_x), 128):
            train_step(fp32, opt, train_x[i:i + 128], train_y[i:i + 128])
    print(f"fp32 baseline val acc: {evaluate(fp32, val_x, val_y):.3f}")

    qat_model = prepare_qat_model(fp32)
    qat_model.train()
    step_model = qat_model if args.no_compile else compile_for_qat(qat_model)
    opt = torch.optim.AdamW(qat_model.parameters(), lr=args.lr, weight_decay=1e-4)

    n = len(train_x)
    for epoch in range(args.epochs):
        qat_model.train()
        if epoch == args.epochs - 1:
            qat_model.apply(tq.disable_observer)
            qat_model.apply(nniqat.freeze_bn_stats)
        perm = torch.randperm(n)
        t0 = time.perf_counter()
        losses = []
        for i in range(0, n, args.batch_size):
            idx = perm[i:i + args.batch_size]
            losses.append(train_step(step_model, opt, train_x[idx], train_y[idx]))
        dt = time.perf_counter() - t0
        print(f"epoch {epoch}: loss {torch.stack(losses).mean().item():.4f}  "
              f"{n / dt:.0f} maps/s  ({dt:.1f}s)")

    qat_model.eval()
    print(f"QAT (fake-quant) val acc: {evaluate(qat_model, val_x, val_y):.3f}")
    int8 = tq.convert(copy.deepcopy(qat_model).eval(), inplace=False)
    print(f"int8 val acc: {evaluate(int8, val_x, val_y):.3f}")


if __name__ == "__main__":
    main()
