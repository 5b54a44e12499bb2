"""A loss that samples Dirichlet(alpha).rsample() under fullgraph=True (blind A/B batch 55's dz): the short last
batch makes Dynamo recompile with a dynamic batch size, and PyTorch's own aten._sample_dirichlet has no fake kernel,
so that recompile fails where the static first compile worked. FIXED=1: dynamic=False."""
import os

import torch
import torch.nn.functional as F
from torch.distributions import Dirichlet


def loss(x):
    alpha = F.softplus(x) + 0.1
    theta = Dirichlet(alpha).rsample()
    return (theta * x).sum()


step = torch.compile(loss, fullgraph=True, backend="eager",
                     dynamic=False if os.environ.get("FIXED") == "1" else None)
torch.manual_seed(0)
for n in (8, 8, 3):
    x = torch.randn(n, 5, requires_grad=True)
    step(x).backward()
    print(f"batch {n} grad {x.grad.abs().sum().item():.3f}")
