"""A GP-style loss (cdist kernel + a diagonal of torch.eye(384), then cholesky) whose output check always
fails. torch's accuracy check (TORCHDYNAMO_REPRO_LEVEL=4) cannot run this graph eagerly on 2.15 CPU:
NotImplementedError "arange_cpu" not implemented for 'UInt16' (blind A/B batch 21, a deep-kernel GP): the
report must say the check raised, not that the program failed."""
import sys

import torch


def loss(w, x):
    k = torch.cdist(x @ w, x @ w).pow(2).neg().exp() + 1e-3 * torch.eye(len(x))
    return torch.linalg.cholesky(k).diagonal().log().sum()


torch.manual_seed(0)
x, w = torch.randn(384, 3), torch.randn(3, 2, requires_grad=True)
out = torch.compile(loss)(w, x)
out.backward()
print("loss", round(out.item(), 3))
sys.exit(1)     # the program's own check, failing on every run
