"""CenterNet-style detector trainer (shapes dataset) with multi-scale training.

    python train_detector.py --compile            # default recipe: multi-scale on
    python train_detector.py --no-multi-scale     # fixed 128x128 training
"""
import argparse
import dataclasses
import json
import logging
import random
import time
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("det")


@dataclass
class ModelConfig:
    num_classes: int = 3
    width: int = 32
    compile: bool = False  # Compile the model with torch.compile for faster throughput.


@dataclass
class TrainConfig:
    epochs: int = 2
    steps_per_epoch: int = 25
    batch_size: int = 16
    lr: float = 2e-3
    multi_scale: bool = True
    scales: tuple = (96, 128, 160)
    base_size: int = 128


def conv_bn(cin, cout, stride=1):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.SiLU())


class CenterNetLite(nn.Module):
    """Stride-4 heatmap + box-size heads on a small conv backbone."""

    def __init__(self, num_classes, width):
        super().__init__()
        self.backbone = nn.Sequential(
            conv_bn(3, width, 2), conv_bn(width, width), conv_bn(width, 2 * width, 2), conv_bn(2 * width, 2 * width),
            conv_bn(2 * width, 4 * width, 2), conv_bn(4 * width, 4 * width),
        )
        self.up = nn.Sequential(nn.Upsample(scale_factor=2, mode="nearest"), conv_bn(4 * width, 2 * width))
        self.heatmap = nn.Conv2d(2 * width, num_classes, 1)
        self.size = nn.Conv2d(2 * width, 2, 1)
        nn.init.constant_(self.heatmap.bias, -2.19)  # prior prob 0.1

    def forward(self, x):
        f = self.up(self.backbone(x))
        return self.heatmap(f), self.size(f)


def build_model(model_cfg, train_cfg):
    model = CenterNetLite(model_cfg.num_classes, model_cfg.width)
    # Multi-scale changes the input resolution every step; skip compile there so we don't recompile per scale.
    compile_enabled = model_cfg.compile and not train_cfg.multi_scale
    if model_cfg.compile and not compile_enabled:
        log.debug("torch.compile requested but disabled for multi-scale training")
    if compile_enabled:
        model = torch.compile(model)
    return model


def synth_batch(batch_size, size, num_classes, gen):
    """Images with one coloured rectangle each; targets at output stride 4."""
    imgs = 0.1 * torch.randn(batch_size, 3, size, size, generator=gen)
    out = size // 4
    heat = torch.zeros(batch_size, num_classes, out, out)
    wh = torch.zeros(batch_size, 2, out, out)
    for i in range(batch_size):
        cls = int(torch.randint(0, num_classes, (1,), generator=gen))
        w, h = (int(v) for v in torch.randint(size // 8, size // 2, (2,), generator=gen))
        x0 = int(torch.randint(0, size - w, (1,), generator=gen))
        y0 = int(torch.randint(0, size - h, (1,), generator=gen))
        imgs[i, cls, y0 : y0 + h, x0 : x0 + w] += 1.0
        cx, cy = (x0 + w // 2) // 4, (y0 + h // 2) // 4
        heat[i, cls, cy, cx] = 1.0
        wh[i, :, cy, cx] = torch.tensor([w / size, h / size])
    return imgs, heat, wh


def centernet_loss(pred_heat, pred_wh, heat, wh):
    pos = heat.eq(1).float()
    p = pred_heat.sigmoid().clamp(1e-4, 1 - 1e-4)
    focal = -(pos * (1 - p) ** 2 * p.log() + (1 - pos) * p**2 * (1 - p).log())
    n_pos = pos.sum().clamp_min(1.0)
    size_l1 = (F.l1_loss(pred_wh, wh, reduction="none") * pos.amax(1, keepdim=True)).sum() / n_pos
    return focal.sum() / n_pos + 0.1 * size_l1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--no-multi-scale", action="store_true")
    ap.add_argument("--epochs", type=int, default=TrainConfig.epochs)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    model_cfg = ModelConfig(compile=args.compile)
    train_cfg = TrainConfig(epochs=args.epochs, multi_scale=not args.no_multi_scale)
    log.info("model_config %s", json.dumps(dataclasses.asdict(model_cfg)))
    log.info("train_config %s", json.dumps(dataclasses.asdict(train_cfg)))

    # never let a compiler hiccup kill a multi-hour run: fall back to eager instead
    torch._dynamo.config.suppress_errors = True

    torch.manual_seed(args.seed)
    random.seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    model = build_model(model_cfg, train_cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=train_cfg.lr, weight_decay=1e-4)

    for epoch in range(train_cfg.epochs):
        t0, seen, losses = time.perf_counter(), 0, []
        for step in range(train_cfg.steps_per_epoch):
            size = random.choice(train_cfg.scales) if train_cfg.multi_scale else train_cfg.base_size
            imgs, heat, wh = synth_batch(train_cfg.batch_size, size, model_cfg.num_classes, gen)
            pred_heat, pred_wh = model(imgs)
            loss = centernet_loss(pred_heat, pred_wh, heat, wh)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.item())
            seen += imgs.size(0)
        dt = time.perf_counter() - t0
        log.info("epoch %d loss %.4f  %.1f img/s  (%.1fs)", epoch, sum(losses) / len(losses), seen / dt, dt)


if __name__ == "__main__":
    main()
