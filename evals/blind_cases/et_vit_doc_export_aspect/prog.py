"""Document-photo classifier: fine-tune a small ViT, export it with torch.export
for the serving box (variable-resolution scans), then run the release smoke test
against the reloaded .pt2 artifact.
"""
import os
import sys
import time
import tempfile

import torch
import torch.nn.functional as F
from torch.export import Dim
from transformers import ViTConfig, ViTForImageClassification

LABELS = ["invoice", "receipt", "id_card", "letter", "form"]
PATCH = 16
BASE_RES = 224
MIN_SIDE, MAX_SIDE = 128, 512
ATOL = 1e-4


def build_model(seed=0):
    torch.manual_seed(seed)
    cfg = ViTConfig(
        image_size=BASE_RES,
        patch_size=PATCH,
        num_channels=3,
        hidden_size=96,
        num_hidden_layers=3,
        num_attention_heads=4,
        intermediate_size=192,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        num_labels=len(LABELS),
        id2label={i: l for i, l in enumerate(LABELS)},
        label2id={l: i for i, l in enumerate(LABELS)},
    )
    return ViTForImageClassification(cfg)


class ScanClassifier(torch.nn.Module):
    """What the serving box runs: normalized pixels in, class probabilities out."""

    def __init__(self, vit):
        super().__init__()
        self.vit = vit
        self.register_buffer("mean", torch.tensor([0.5, 0.5, 0.5]).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor([0.5, 0.5, 0.5]).view(1, 3, 1, 1))

    def forward(self, pixels):
        x = (pixels - self.mean) / self.std
        out = self.vit(pixel_values=x, interpolate_pos_encoding=True)
        return out.logits.softmax(dim=-1)


def synthetic_batch(n, h, w, gen):
    """Fake scans: a bright page with a few dark 'text' stripes; label = stripe count."""
    labels = torch.randint(0, len(LABELS), (n,), generator=gen)
    imgs = torch.full((n, 3, h, w), 0.9)
    for i in range(n):
        k = int(labels[i]) + 1
        rows = torch.linspace(0.15, 0.85, k)
        for r in rows:
            y = int(r * h)
            imgs[i, :, y : y + max(2, h // 40), w // 10 : w - w // 10] = 0.1
    imgs += 0.05 * torch.randn(imgs.shape, generator=gen)
    return imgs.clamp(0, 1), labels


def fine_tune(model, steps=12, bs=8):
    gen = torch.Generator().manual_seed(1)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    model.train()
    for step in range(steps):
        x, y = synthetic_batch(bs, BASE_RES, BASE_RES, gen)
        probs = model(x)
        loss = F.nll_loss(torch.log(probs + 1e-9), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 4 == 0 or step == steps - 1:
            print(f"  step {step:2d} loss {loss.item():.4f}")
    model.eval()
    return model


def export_for_serving(model, path):
    example = torch.rand(2, 3, BASE_RES, BASE_RES)
    batch = Dim("batch", min=1, max=32)
    ph = Dim("patches_h", min=MIN_SIDE // PATCH, max=MAX_SIDE // PATCH)
    pw = Dim("patches_w", min=MIN_SIDE // PATCH, max=MAX_SIDE // PATCH)
    dynamic_shapes = {"pixels": {0: batch, 2: PATCH * ph, 3: PATCH * pw}}
    t0 = time.time()
    with torch.no_grad():
        ep = torch.export.export(model, (example,), dynamic_shapes=dynamic_shapes)
    torch.export.save(ep, path)
    print(f"exported in {time.time() - t0:.1f}s -> {os.path.basename(path)} "
          f"({os.path.getsize(path) / 1e6:.2f} MB)")
    return ep


# Smoke-test requests: the resolutions the scanner fleet actually sends.
SMOKE_REQUESTS = [
    ("square thumbnail", 1, 224, 224),
    ("A4 portrait, low dpi", 4, 320, 224),
    ("receipt strip", 2, 480, 160),
    ("landscape form", 3, 256, 384),
    ("id card", 8, 192, 304),
]


def smoke_test(eager_model, served):
    gen = torch.Generator().manual_seed(7)
    failures = 0
    for name, n, h, w in SMOKE_REQUESTS:
        x, _ = synthetic_batch(n, h, w, gen)
        with torch.no_grad():
            ref = eager_model(x)
        try:
            with torch.no_grad():
                got = served(x)
        except Exception as e:  # report and keep going, the gate prints a summary
            failures += 1
            msg = str(e).strip().splitlines()[0]
            print(f"  [FAIL] {name:22s} {n}x3x{h}x{w}: {type(e).__name__}: {msg}")
            continue
        err = (got - ref).abs().max().item()
        ok = err <= ATOL
        failures += 0 if ok else 1
        print(f"  [{'ok' if ok else 'FAIL'}] {name:22s} {n}x3x{h}x{w}: max|diff| {err:.2e} "
              f"top1 {[LABELS[i] for i in got.argmax(-1).tolist()][:3]}")
    return failures


def main():
    t_start = time.time()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    model = ScanClassifier(build_model())
    print("fine-tuning on 224x224 crops")
    fine_tune(model)

    workdir = tempfile.mkdtemp(prefix="scanclf_")
    path = os.path.join(workdir, "scan_classifier.pt2")
    export_for_serving(model, path)

    served = torch.export.load(path).module()
    print("release smoke test (reloaded .pt2 vs eager):")
    failures = smoke_test(model, served)
    print(f"total {time.time() - t_start:.1f}s")
    if failures:
        print(f"RELEASE GATE: {failures}/{len(SMOKE_REQUESTS)} request shapes failed")
        sys.exit(1)
    print("RELEASE GATE: passed")


if __name__ == "__main__":
    main()
