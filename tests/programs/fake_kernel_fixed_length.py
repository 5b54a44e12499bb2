"""A detector's post-processing op (torch.library) keeps the anchors above a threshold, a data-dependent
count, but its fake kernel declares one index per anchor: compiled code sized by the fake kernel reads past
the real, shorter result: with none above the threshold, a segfault only compiled (blind A/B batch 20)."""
import torch


@torch.library.custom_op("cdtest::keep_above", mutates_args=())
def keep_above(scores: torch.Tensor, threshold: float) -> torch.Tensor:
    return torch.nonzero(scores > threshold).flatten()


@keep_above.register_fake
def _(scores, threshold):
    return scores.new_empty(scores.shape[:1], dtype=torch.long)


@torch.compile
def postprocess(scores, boxes):
    keep = keep_above(scores, 1.5)
    return (boxes[keep] * 2.0).sum(0), keep.numel()


torch.manual_seed(0)
scores, boxes = torch.rand(200000), torch.randn(200000, 4)
print(postprocess(scores, boxes))
