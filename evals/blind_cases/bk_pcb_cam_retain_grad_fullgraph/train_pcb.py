"""PCB defect tile classifier with periodic Grad-CAM snapshots.

Every --cam-every steps we keep the gradient of the last conv feature map and turn it into a
Grad-CAM heatmap, so the QA team can check that the classifier looks at the solder joints and
not at the silkscreen. Training is compiled with fullgraph=True (our CI rule: compiled models
must capture in one graph).
"""
import argparse
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("pcb")
CLASSES = ["ok", "short", "open", "missing", "spur"]


class ConvBNAct(nn.Sequential):
    def __init__(self, cin, cout, stride=1):
        super().__init__(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class ResBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = ConvBNAct(cin, cout, stride)
        self.c2 = nn.Sequential(nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
        self.skip = nn.Identity() if stride == 1 and cin == cout else nn.Sequential(
            nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        return F.relu(self.c2(self.c1(x)) + self.skip(x))


class DefectNet(nn.Module):
    def __init__(self, n_classes=len(CLASSES), width=16):
        super().__init__()
        self.stem = ConvBNAct(3, width)
        self.stages = nn.Sequential(ResBlock(width, width, 1), ResBlock(width, 2 * width, 2),
                                    ResBlock(2 * width, 4 * width, 2))
        self.head = nn.Linear(4 * width, n_classes)
        self.keep_cam = False
        self.cam_fmap = None

    def forward(self, x):
        fmap = self.stages(self.stem(x))
        if self.keep_cam:
            fmap.retain_grad()
            self.cam_fmap = fmap
        return self.head(fmap.mean(dim=(2, 3)))


def grad_cam(fmap, grad):
    weights = grad.mean(dim=(2, 3), keepdim=True)
    cam = F.relu((weights * fmap).sum(dim=1))
    return cam / cam.amax(dim=(1, 2), keepdim=True).clamp_min(1e-8)


def synthetic_tiles(n, gen, size=32):
    """Tiles with a bright pad grid; defects are drawn as small blobs/bridges in a class-specific way."""
    y = torch.randint(0, len(CLASSES), (n,), generator=gen)
    x = 0.1 * torch.randn(n, 3, size, size, generator=gen)
    x[:, :, 8::8, :] += 0.3
    for i in range(n):
        r, c = torch.randint(4, size - 8, (2,), generator=gen).tolist()
        k = int(y[i])
        if k == 1:
            x[i, :, r:r + 2, c:c + 6] += 1.0
        elif k == 2:
            x[i, :, r:r + 4, c:c + 1] -= 1.0
        elif k == 3:
            x[i, 1, r:r + 4, c:c + 4] -= 0.8
        elif k == 4:
            x[i, 0, r:r + 1, c:c + 4] += 1.5
    return x, y


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--cam-every", type=int, default=4)
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    xs, ys = synthetic_tiles(args.batch_size * args.steps, gen)

    model = DefectNet()
    model.keep_cam = True  # CAM snapshots are part of the training report
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    fwd = model if args.no_compile else torch.compile(model, fullgraph=True)

    t_start = time.perf_counter()
    for step in range(args.steps):
        t0 = time.perf_counter()
        x = xs[step * args.batch_size:(step + 1) * args.batch_size]
        y = ys[step * args.batch_size:(step + 1) * args.batch_size]
        logits = fwd(x)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        msg = f"step {step} loss {loss.item():.4f} ({time.perf_counter() - t0:.2f}s)"
        if step % args.cam_every == 0:
            fmap = model.cam_fmap
            cam = grad_cam(fmap.detach(), fmap.grad)
            peak = cam[0].flatten().argmax().item()
            msg += f" | cam[0] peak at {divmod(peak, cam.shape[-1])}, mean {cam.mean().item():.3f}"
        log.info(msg)
    log.info("done in %.1fs", time.perf_counter() - t_start)


if __name__ == "__main__":
    main()
