"""Loss helpers shared by our audio classifiers."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def mix_targets(targets: torch.Tensor, perm: torch.Tensor, lam: torch.Tensor,
                smoothing: float) -> torch.Tensor:
    """Dense soft targets for a mixup batch, with label smoothing."""
    dense_a = F.one_hot(targets).float()
    dense_b = F.one_hot(targets[perm]).float()
    num_classes = dense_a.shape[-1]
    dense = lam * dense_a + (1.0 - lam) * dense_b
    return dense * (1.0 - smoothing) + smoothing / num_classes


class SoftTargetCrossEntropy(nn.Module):
    def __init__(self, smoothing: float = 0.1):
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits, targets, perm, lam):
        soft = mix_targets(targets, perm, lam, self.smoothing)
        return torch.sum(-soft * F.log_softmax(logits, dim=-1), dim=-1).mean()
