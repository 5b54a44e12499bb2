"""Package the Qwen2-VL vision tower of our document-QA service as a torch.export artifact.

The serving side receives one page image per request, resizes it so both sides are
multiples of 28 px, turns it into Qwen2-VL patches and runs the exported encoder.
This script builds the encoder, exports it with a dynamic patch count, checks the
exported program against eager on a few page sizes and writes the .pt2 + manifest.
"""
import json
import math
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch.export import Dim
from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLVisionConfig
from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VisionTransformerPretrainedModel

OUT_DIR = os.environ.get("PKG_OUT", "./artifacts")
PATCH = 14
TEMPORAL = 2
MERGE = 2
MIN_PIXELS = 56 * 56
MAX_PIXELS = 448 * 448
MEAN = torch.tensor([0.48145466, 0.4578275, 0.40821073]).view(3, 1, 1)
STD = torch.tensor([0.26862954, 0.26130258, 0.27577711]).view(3, 1, 1)


def build_encoder():
    # small config for the packaging CI job; production loads the same class
    cfg = Qwen2VLVisionConfig(
        depth=4,
        embed_dim=128,
        hidden_size=256,
        num_heads=4,
        mlp_ratio=2,
        patch_size=PATCH,
        temporal_patch_size=TEMPORAL,
        spatial_merge_size=MERGE,
        in_channels=3,
    )
    torch.manual_seed(1234)
    enc = Qwen2VisionTransformerPretrainedModel(cfg)
    return enc.eval()


def smart_resize(h, w, factor=PATCH * MERGE):
    hb = max(factor, round(h / factor) * factor)
    wb = max(factor, round(w / factor) * factor)
    if hb * wb > MAX_PIXELS:
        beta = math.sqrt(h * w / MAX_PIXELS)
        hb = math.floor(h / beta / factor) * factor
        wb = math.floor(w / beta / factor) * factor
    elif hb * wb < MIN_PIXELS:
        beta = math.sqrt(MIN_PIXELS / (h * w))
        hb = math.ceil(h * beta / factor) * factor
        wb = math.ceil(w * beta / factor) * factor
    return hb, wb


def preprocess(img):
    """img: uint8 tensor (3, H, W) -> (pixel_values (N, C*T*P*P), grid_thw (1, 3))."""
    _, h, w = img.shape
    rh, rw = smart_resize(h, w)
    x = img.float().div(255.0).unsqueeze(0)
    x = F.interpolate(x, size=(rh, rw), mode="bicubic", align_corners=False).clamp(0, 1)[0]
    x = (x - MEAN) / STD
    x = x.unsqueeze(0).repeat(TEMPORAL, 1, 1, 1)  # still image -> duplicate the frame
    gt, gh, gw = 1, rh // PATCH, rw // PATCH
    x = x.reshape(gt, TEMPORAL, 3, gh // MERGE, MERGE, PATCH, gw // MERGE, MERGE, PATCH)
    x = x.permute(0, 3, 6, 4, 7, 2, 1, 5, 8)
    pixel_values = x.reshape(gt * gh * gw, 3 * TEMPORAL * PATCH * PATCH).contiguous()
    grid_thw = torch.tensor([[gt, gh, gw]], dtype=torch.long)
    return pixel_values, grid_thw


class VisionServingModule(torch.nn.Module):
    """What the server calls: patches of one page -> merged visual tokens."""

    def __init__(self, visual):
        super().__init__()
        self.visual = visual

    def forward(self, pixel_values, grid_thw):
        out = self.visual(pixel_values, grid_thw)
        return out.pooler_output


def sample_pages():
    g = torch.Generator().manual_seed(7)
    sizes = [(1100, 850), (850, 1100), (640, 480), (300, 900), (1400, 1400)]
    return [torch.randint(0, 256, (3, h, w), generator=g, dtype=torch.uint8) for h, w in sizes]


def export_encoder(module, example):
    pixel_values, grid_thw = example
    # patch count is always a multiple of MERGE*MERGE (whole 28x28 blocks)
    blocks = Dim("blocks", min=4, max=MAX_PIXELS // (PATCH * MERGE) ** 2)
    dynamic_shapes = {
        "pixel_values": {0: MERGE * MERGE * blocks},
        "grid_thw": None,
    }
    return torch.export.export(module, (pixel_values, grid_thw), dynamic_shapes=dynamic_shapes)


def parity_check(ep_module, ref_module, pages, atol=1e-4):
    worst = 0.0
    rows = []
    for i, img in enumerate(pages):
        pv, grid = preprocess(img)
        with torch.no_grad():
            ref = ref_module(pv, grid)
            got = ep_module(pv, grid)
        diff = (ref - got).abs().max().item()
        worst = max(worst, diff)
        rows.append({"page": i, "grid": grid.tolist()[0], "tokens": ref.shape[0], "max_abs_diff": diff})
        print(f"  page {i}: grid={grid.tolist()[0]} tokens={ref.shape[0]} max|diff|={diff:.2e}")
    return worst <= atol, worst, rows


def main():
    t0 = time.time()
    print(f"torch {torch.__version__}")
    os.makedirs(OUT_DIR, exist_ok=True)
    encoder = build_encoder()
    serving = VisionServingModule(encoder).eval()
    pages = sample_pages()

    example = preprocess(pages[0])
    print(f"example: pixel_values={tuple(example[0].shape)} grid_thw={example[1].tolist()}")
    with torch.no_grad():
        eager_tokens = serving(*example)
    print(f"eager visual tokens: {tuple(eager_tokens.shape)}")

    print("exporting vision encoder ...")
    t1 = time.time()
    ep = export_encoder(serving, example)
    print(f"export done in {time.time() - t1:.1f}s")

    print("parity check (exported vs eager):")
    ok, worst, rows = parity_check(ep.module(), serving, pages)
    if not ok:
        print(f"FAIL: exported encoder differs from eager (worst {worst:.2e})")
        sys.exit(1)

    pt2 = os.path.join(OUT_DIR, "qwen2vl_vision.pt2")
    torch.export.save(ep, pt2)
    with open(os.path.join(OUT_DIR, "manifest.json"), "w") as f:
        json.dump({"artifact": pt2, "torch": torch.__version__, "parity": rows}, f, indent=2)
    print(f"wrote {pt2} ({os.path.getsize(pt2) / 1e6:.1f} MB) in {time.time() - t0:.1f}s total")


if __name__ == "__main__":
    main()
