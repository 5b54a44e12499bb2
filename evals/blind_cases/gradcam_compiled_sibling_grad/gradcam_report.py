"""Batch Grad-CAM report for the chest-xray triage classifier.

For every validation image we record the predicted class and a Grad-CAM heatmap
of the last conv stage; the heatmaps go to the radiologists' review tool.
The model is compiled because the report runs over the whole archive.
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(cout)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(cout)
        self.short = None
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.b1(self.c1(x)))
        out = self.b2(self.c2(out))
        return F.relu(out + (x if self.short is None else self.short(x)))


class TriageNet(nn.Module):
    """ResNet-ish; forward returns (logits, last_stage_features) so we can do Grad-CAM."""

    def __init__(self, num_classes=4):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        self.stages = nn.Sequential(BasicBlock(16, 32, 2), BasicBlock(32, 32, 1),
                                    BasicBlock(32, 64, 2), BasicBlock(64, 64, 1))
        self.fc = nn.Linear(64, num_classes)

    def forward(self, x):
        feats = self.stages(self.stem(x))
        logits = self.fc(F.adaptive_avg_pool2d(feats, 1).flatten(1))
        return logits, feats


def grad_cam(model, images):
    logits, feats = model(images)
    pred = logits.argmax(1)
    score = logits.gather(1, pred[:, None]).sum()
    (grads,) = torch.autograd.grad(score, feats)
    weights = grads.mean(dim=(2, 3), keepdim=True)
    cam = F.relu((weights * feats).sum(1, keepdim=True))
    cam = F.interpolate(cam, size=images.shape[-2:], mode="bilinear", align_corners=False)
    cam = cam / cam.amax(dim=(2, 3), keepdim=True).clamp(min=1e-8)
    return pred, cam.detach()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()

    torch.manual_seed(0)
    model = TriageNet().eval()
    # (real job: model.load_state_dict(torch.load("triage_resnet_v3.pt")))
    runner = model if args.no_compile else torch.compile(model)

    g = torch.Generator().manual_seed(7)
    t0 = time.time()
    summary = []
    for b in range(6):
        images = torch.randn(16, 1, 64, 64, generator=g)
        pred, cam = grad_cam(runner, images)
        summary.append((pred.bincount(minlength=4), cam.mean().item(), cam[:, :, :32].mean().item()))
        print(f"batch {b}: pred_hist={summary[-1][0].tolist()} cam_mean={summary[-1][1]:.4f} "
              f"cam_top_half={summary[-1][2]:.4f}")
    print(f"report done in {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
