"""A feature mixer whose order comes from iterating a Python set: eager CPython walks the set in its hash
order, Dynamo (torch 2.14, 2.15; not 2.9) in insertion order, so the compiled function stacks the parts in
another order (blind A/B batch 24: a churn model's set of column names, whose order also changed with each
process's string hash seed). Int keys keep this program's eager order the same in every process."""
import torch

WEIGHTS = {30: 1.0, 10: 2.0, 20: 3.0}


def mix(feats):
    present = set(feats) & set(WEIGHTS)
    return torch.stack([feats[k] * WEIGHTS[k] for k in present])


feats = {k: torch.full((2,), float(k)) for k in (30, 10, 20, 40)}
print("mixed", [round(v, 1) for v in torch.compile(mix)(feats)[:, 0].tolist()])
