"""Export a tiny random-init Qwen2-VL vision encoder (transformers) for a document service, with the patch count
dynamic and the page's (t, h, w) grid passed as a tensor input. The encoder derives its attention segments from the
grid's values (a .tolist() inside), which export cannot know. PRECOMPUTED=1 passes cu_seqlens computed outside."""
import os

import torch
from torch.export import Dim
from transformers import Qwen2VLConfig
from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VisionTransformerPretrainedModel

torch.manual_seed(0)
PATCH, TEMPORAL, MERGE = 14, 2, 2


class PageEncoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        vcfg = Qwen2VLConfig().vision_config
        for k, v in dict(depth=1, embed_dim=32, hidden_size=64, num_heads=2, patch_size=PATCH,
                         temporal_patch_size=TEMPORAL, spatial_merge_size=MERGE, in_channels=3).items():
            setattr(vcfg, k, v)
        self.visual = Qwen2VisionTransformerPretrainedModel(vcfg).eval()

    def forward(self, pixel_values, grid_thw):
        if os.environ.get("PRECOMPUTED"):   # one page per call: a single attention segment
            n = pixel_values.shape[0]
            cu = torch.stack([torch.zeros((), dtype=torch.int32), torch.full((), n, dtype=torch.int32)])
            return self.visual(pixel_values, grid_thw, cu_seqlens=cu).last_hidden_state
        return self.visual(pixel_values, grid_thw).last_hidden_state


def page(h, w):
    n = h * w
    return torch.randn(n, 3 * TEMPORAL * PATCH * PATCH), torch.tensor([[1, h, w]])


def main():
    model = PageEncoder().eval()
    blocks = Dim("blocks", min=4, max=256)
    pv, grid = page(16, 12)
    with torch.no_grad():
        ep = torch.export.export(model, (pv, grid), dynamic_shapes=({0: MERGE * MERGE * blocks}, None))
        pv2, grid2 = page(8, 20)
        diff = (ep.module()(pv2, grid2) - model(pv2, grid2)).abs().max().item()
    print(f"export ok; other page max|diff| {diff:.2e}")


if __name__ == "__main__":
    main()
