"""A label-smoothed soft-target loss compiled with fullgraph=True: F.one_hot(targets) without num_classes sizes its
output from targets.max(), a data-dependent shape Dynamo refuses (GB0246; blind A/B batch 43, a mixup loss).
  --fixed   num_classes from the logits"""
import sys

import torch
import torch.nn.functional as F


@torch.compile(fullgraph=True, backend="eager")
def soft_ce(logits, targets, smoothing=0.1):
    if "--fixed" in sys.argv:
        onehot = F.one_hot(targets, num_classes=logits.shape[-1]).float()
    else:
        onehot = F.one_hot(targets).float()
    soft = onehot * (1 - smoothing) + smoothing / logits.shape[-1]
    return -(soft * logits.log_softmax(-1)).sum(-1).mean()


torch.manual_seed(0)
logits, targets = torch.randn(16, 6), torch.randint(0, 6, (16,))
targets[0] = 5
print(f"loss {soft_ce(logits, targets).item():.4f}")
