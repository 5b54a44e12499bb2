"""Package the tile change-detection model (before/after pair) with AOTInductor
and run the release gate against the eager model before upload."""
import os
import sys
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.export import Dim

TILE = 48
SEED = 7
GATE_ATOL = 1e-3
GATE_AGREEMENT = 0.99
ARTIFACT_DIR = os.path.join(tempfile.gettempdir(), "changenet_release")


class ConvBNReLU(nn.Sequential):
    def __init__(self, cin, cout, stride=1):
        super().__init__(
            nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
        )


class TileEncoder(nn.Module):
    def __init__(self, width=16):
        super().__init__()
        self.stem = ConvBNReLU(3, width)
        self.down1 = nn.Sequential(ConvBNReLU(width, 2 * width, 2), ConvBNReLU(2 * width, 2 * width))
        self.down2 = nn.Sequential(ConvBNReLU(2 * width, 4 * width, 2), ConvBNReLU(4 * width, 4 * width))

    def forward(self, x):
        return self.down2(self.down1(self.stem(x)))


class ChangeNet(nn.Module):
    """Siamese encoder; fuses [f_before, f_after, |f_before - f_after|]."""

    def __init__(self, width=16):
        super().__init__()
        self.encoder = TileEncoder(width)
        c = 4 * width
        self.fuse = nn.Sequential(nn.Conv2d(3 * c, c, 1, bias=False), nn.BatchNorm2d(c), nn.ReLU(inplace=True))
        self.mask_head = nn.Conv2d(c, 1, 1)
        self.register_buffer("pixel_mean", torch.tensor([0.45, 0.45, 0.45]).view(1, 3, 1, 1))
        self.register_buffer("pixel_std", torch.tensor([0.25, 0.25, 0.25]).view(1, 3, 1, 1))

    def forward(self, before, after):
        fb = self.encoder((before - self.pixel_mean) / self.pixel_std)
        fa = self.encoder((after - self.pixel_mean) / self.pixel_std)
        h = self.fuse(torch.cat([fb, fa, (fb - fa).abs()], dim=1))
        mask_logits = F.interpolate(self.mask_head(h), size=before.shape[-2:], mode="bilinear", align_corners=False)
        score = torch.logsumexp(mask_logits.flatten(1), dim=1) - 4.0
        return score, mask_logits


def make_pairs(n, gen):
    """Synthetic before/after tiles; about half get a new structure pasted in."""
    base = torch.rand(n, 3, TILE // 4, TILE // 4, generator=gen)
    before = F.interpolate(base, size=(TILE, TILE), mode="bilinear", align_corners=False)
    gain = 1.0 + 0.1 * (torch.rand(n, 1, 1, 1, generator=gen) - 0.5)
    after = (before * gain + 0.03 * torch.randn(before.shape, generator=gen)).clamp(0, 1)
    mask = torch.zeros(n, 1, TILE, TILE)
    changed = torch.rand(n, generator=gen) < 0.5
    for i in torch.nonzero(changed).flatten().tolist():
        s = int(torch.randint(8, 18, (1,), generator=gen))
        y, x = (int(v) for v in torch.randint(0, TILE - s, (2,), generator=gen))
        after[i, :, y:y + s, x:x + s] = torch.rand(3, 1, 1, generator=gen)
        mask[i, :, y:y + s, x:x + s] = 1.0
    return before, after, mask, changed.float()


def train(model, steps=60, batch=16):
    gen = torch.Generator().manual_seed(SEED)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    model.train()
    for step in range(steps):
        before, after, mask, changed = make_pairs(batch, gen)
        score, mask_logits = model(before, after)
        loss = F.binary_cross_entropy_with_logits(mask_logits, mask, pos_weight=torch.tensor(4.0))
        loss = loss + 0.5 * F.binary_cross_entropy_with_logits(score, changed)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 20 == 0 or step == steps - 1:
            print(f"  step {step:3d}  loss {loss.item():.4f}")
    model.eval()
    return model


def example_inputs(batch=4):
    probe = torch.rand(batch, 3, TILE, TILE)
    return {"before": probe, "after": probe}


def package(model):
    os.makedirs(ARTIFACT_DIR, exist_ok=True)
    kwargs = example_inputs()
    batch = Dim("batch", min=1, max=64)
    dynamic_shapes = {"before": {0: batch}, "after": {0: batch}}
    with torch.no_grad():
        ep = torch.export.export(model, (), kwargs, dynamic_shapes=dynamic_shapes)
    path = torch._inductor.aoti_compile_and_package(
        ep, package_path=os.path.join(ARTIFACT_DIR, "changenet.pt2")
    )
    return path, kwargs


def release_gate(model, runner, example_kwargs):
    ok = True
    with torch.no_grad():
        ref_score, _ = model(**example_kwargs)
        pkg_score, _ = runner(**example_kwargs)
    print(f"export-example parity: max|eager - package| = {(ref_score - pkg_score).abs().max().item():.2e}")

    gen = torch.Generator().manual_seed(SEED + 1000)
    before, after, mask, changed = make_pairs(64, gen)
    worst, agree, pkg_hits, eager_hits = 0.0, 0, 0, 0
    for i in range(0, 64, 16):
        b, a = before[i:i + 16].contiguous(), after[i:i + 16].contiguous()
        with torch.no_grad():
            ref_score, ref_mask = model(before=b, after=a)
            pkg_score, pkg_mask = runner(before=b, after=a)
        worst = max(worst, (ref_score - pkg_score).abs().max().item(), (ref_mask - pkg_mask).abs().max().item())
        ref_dec, pkg_dec = ref_score > 0, pkg_score > 0
        agree += (ref_dec == pkg_dec).sum().item()
        eager_hits += (ref_dec.float() == changed[i:i + 16]).sum().item()
        pkg_hits += (pkg_dec.float() == changed[i:i + 16]).sum().item()
    agreement = agree / 64
    print(f"validation pairs: 64  eager acc {eager_hits / 64:.3f}  package acc {pkg_hits / 64:.3f}")
    print(f"max|eager - package| = {worst:.3e}   decision agreement = {agreement:.3f}")
    if worst > GATE_ATOL:
        print(f"GATE FAIL: output difference {worst:.3e} > {GATE_ATOL:g}")
        ok = False
    if agreement < GATE_AGREEMENT:
        print(f"GATE FAIL: decision agreement {agreement:.3f} < {GATE_AGREEMENT}")
        ok = False
    return ok


def main():
    torch.manual_seed(SEED)
    t0 = time.time()
    print(f"torch {torch.__version__}")
    model = ChangeNet()
    print("fine-tuning change head on synthetic pairs")
    train(model)
    print("exporting + AOTInductor packaging ...")
    path, kwargs = package(model)
    print(f"package written: {path}  ({time.time() - t0:.1f}s)")
    runner = torch._inductor.aoti_load_package(path)
    ok = release_gate(model, runner, kwargs)
    print(f"total {time.time() - t0:.1f}s")
    if not ok:
        print("release gate FAILED - package not uploaded")
        sys.exit(1)
    print("release gate passed")


if __name__ == "__main__":
    main()
