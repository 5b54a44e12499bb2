"""Graph break: MoE token counts with torch.bincount (its length depends on the data)."""
import torch


@torch.compile(backend="eager")
def dispatch(idx, x):
    counts = torch.bincount(idx, minlength=4).tolist()
    return torch.cat([p * (i + 1) for i, p in enumerate(x.split(counts))])


dispatch(torch.randint(0, 4, (32,)).sort().values, torch.randn(32, 3))
