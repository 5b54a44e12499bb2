"""A VAE loss's KL term through torch.distributions.kl_divergence in a compiled step (blind A/B batch 51): its first
call per pair of distribution types dispatches with min() over a generator, which Dynamo cannot trace (a graph
break; an error under fullgraph=True). CLOSED=1: the closed form against N(0, 1), one graph."""
import os

import torch
from torch.distributions import Normal, kl_divergence


@torch.compile(fullgraph=os.environ.get("FULLGRAPH") == "1", backend="eager")
def kl_term(mu, log_sigma):
    q = Normal(mu, log_sigma.exp())
    if os.environ.get("CLOSED") == "1":
        return (0.5 * (q.scale.pow(2) + q.loc.pow(2) - 1.0) - q.scale.log()).sum(-1)
    return kl_divergence(q, Normal(torch.zeros_like(mu), torch.ones_like(mu))).sum(-1)


torch.manual_seed(0)
print(f"kl {kl_term(torch.randn(4, 8), 0.1 * torch.randn(4, 8)).mean().item():.5f}")
