import argparse
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from transformers import EfficientNetConfig, EfficientNetForImageClassification

from data import SurfaceDefects


def build_model(num_labels):
    # EfficientNet-B0 layout cut down to three stages for the 64x64 crops
    cfg = EfficientNetConfig(
        image_size=64,
        width_coefficient=0.1,
        depth_coefficient=1.0,
        kernel_sizes=(3, 3, 5),
        in_channels=(32, 16, 24),
        out_channels=(16, 24, 40),
        strides=(1, 2, 2),
        num_block_repeats=(1, 1, 1),
        expand_ratios=(1, 6, 6),
        hidden_dim=128,
        dropout_rate=0.1,
        drop_connect_rate=0.0,
        num_labels=num_labels,
    )
    model = EfficientNetForImageClassification(cfg)
    # training from scratch: the config init is meant for fine-tuning, reset to the usual CNN init
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out")
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=0.01)
            nn.init.zeros_(m.bias)
    return model


def grad_norm(params):
    gs = [p.grad.detach().flatten() for p in params if p.grad is not None]
    return torch.cat(gs).norm().item() if gs else 0.0


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    correct = total = 0
    loss_sum = 0.0
    for x, y in loader:
        out = model(pixel_values=x, labels=y)
        loss_sum += out.loss.item() * len(y)
        correct += (out.logits.argmax(-1) == y).sum().item()
        total += len(y)
    model.train()
    return loss_sum / total, correct / total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--bs", type=int, default=32)
    ap.add_argument("--lr", type=float, default=0.05)
    args = ap.parse_args()

    torch.manual_seed(0)
    train_ds = SurfaceDefects(1024, seed=1)
    val_ds = SurfaceDefects(256, seed=2)
    train_dl = DataLoader(train_ds, batch_size=args.bs, shuffle=True, drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=128)

    model = build_model(len(SurfaceDefects.CLASSES))
    backbone = list(model.efficientnet.parameters())
    head = list(model.classifier.parameters())
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=args.steps, pct_start=0.2)

    step_fn = torch.compile(model) if args.compile else model
    print(f"torch {torch.__version__} | compile={args.compile} | "
          f"{sum(p.numel() for p in model.parameters())/1e3:.1f}k params")

    step, t0 = 0, time.time()
    while step < args.steps:
        for x, y in train_dl:
            out = step_fn(pixel_values=x, labels=y)
            out.loss.backward()
            if step % 10 == 0 or step == args.steps - 1:
                print(f"step {step:3d} loss {out.loss.item():.4f} "
                      f"|g| backbone {grad_norm(backbone):.3e} head {grad_norm(head):.3e} "
                      f"({time.time() - t0:.0f}s)", flush=True)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
            step += 1
            if step >= args.steps:
                break

    val_loss, val_acc = evaluate(model, val_dl)
    print(f"val loss {val_loss:.4f} acc {val_acc:.3f} | total {time.time() - t0:.0f}s")


if __name__ == "__main__":
    main()
