"""Flow-guided temporal smoothing for video semantic segmentation.

The per-frame segmenter runs upstream (on another box); this stage gets its
class logits plus the optical flow from the previous frame and produces
temporally consistent label maps.  Previous-frame probabilities are
backward-warped with the flow and blended into the current frame, weighted by
how unsure the current prediction is and by whether the warped sample lands
inside the image.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TemporalFuser(nn.Module):
    def __init__(self, num_classes, height, width, max_blend=0.6, ema=0.9):
        super().__init__()
        self.num_classes = num_classes
        self.max_blend = max_blend
        self.ema = ema
        ys = torch.linspace(-1.0, 1.0, height)
        xs = torch.linspace(-1.0, 1.0, width)
        gy, gx = torch.meshgrid(ys, xs, indexing="ij")
        self.register_buffer("base_grid", torch.stack([gx, gy], -1).unsqueeze(0), persistent=False)
        # pixel -> normalised coordinate scale for (x, y) flow components
        self.register_buffer(
            "flow_scale", torch.tensor([2.0 / (width - 1), 2.0 / (height - 1)]), persistent=False
        )
        # per-class prior learned offline (log-space), kept as a parameter so it ships with the ckpt
        self.class_bias = nn.Parameter(torch.zeros(num_classes))

    def warp(self, prob_prev, flow):
        grid = self.base_grid + flow.permute(0, 2, 3, 1) * self.flow_scale
        warped = F.grid_sample(prob_prev, grid, mode="bilinear",
                               padding_mode="border", align_corners=True)
        inside = (grid.abs() <= 1.0).all(-1, keepdim=True).permute(0, 3, 1, 2)
        return warped, inside.to(warped.dtype)

    def forward(self, logits, prob_prev, flow):
        prob_cur = torch.softmax(logits + self.class_bias.view(1, -1, 1, 1), dim=1)
        warped, inside = self.warp(prob_prev, flow)
        conf = prob_cur.amax(dim=1, keepdim=True)
        alpha = self.max_blend * inside * (1.0 - conf)
        fused = alpha * warped + (1.0 - alpha) * prob_cur
        fused = fused / fused.sum(dim=1, keepdim=True)
        labels = fused.argmax(dim=1)
        # running estimate of per-pixel stability, used by the QA dashboard
        flips = (labels != prob_prev.argmax(dim=1)).float().mean(dim=(1, 2))
        return fused, labels, flips
