"""Custom ops used by the detector post-processing (kept as ops so export/compile see one node)."""
import torch


@torch.library.custom_op("detpost::score_filter", mutates_args=())
def score_filter(scores: torch.Tensor, threshold: float) -> torch.Tensor:
    """Indices of anchors whose best class score is above `threshold` (sorted by score, descending)."""
    best = scores.amax(dim=-1)
    keep = torch.nonzero(best > threshold).squeeze(1)
    order = best[keep].argsort(descending=True)
    return keep[order]


@score_filter.register_fake
def _(scores, threshold):
    # one index per anchor
    return scores.new_empty(scores.shape[:1], dtype=torch.long)


def decode_boxes(deltas: torch.Tensor, anchors: torch.Tensor) -> torch.Tensor:
    """Standard (dx, dy, dw, dh) box decoding, boxes as (x1, y1, x2, y2)."""
    wa = anchors[:, 2] - anchors[:, 0]
    ha = anchors[:, 3] - anchors[:, 1]
    cxa = anchors[:, 0] + 0.5 * wa
    cya = anchors[:, 1] + 0.5 * ha
    cx = deltas[:, 0] * wa + cxa
    cy = deltas[:, 1] * ha + cya
    w = deltas[:, 2].clamp(max=4.0).exp() * wa
    h = deltas[:, 3].clamp(max=4.0).exp() * ha
    return torch.stack([cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h], dim=-1)
