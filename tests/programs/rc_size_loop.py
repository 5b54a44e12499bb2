"""Recompiles although compiled with dynamic=True: a late-interaction scorer loops over the batch in Python
(`for i in range(q.size(0))`), so Dynamo makes the batch size a constant (symbolic_shape_specialization,
range_refined_to_singleton) and every new batch size is a new graph (blind A/B batch 11). `norms`, compiled
with dynamic=False, recompiles on the same argument name for its own reason: not the loop's."""
import torch


def maxsim(q, d):
    scores = []
    for i in range(q.size(0)):
        sim = q[i] @ d[i].T
        scores.append(sim.max(dim=-1).values.sum())
    return torch.stack(scores)


def norms(q):
    return q.pow(2).sum(-1).sqrt()


scorer = torch.compile(maxsim, dynamic=True, backend="eager")
normer = torch.compile(norms, dynamic=False, backend="eager")
torch.manual_seed(0)
for i, b in enumerate((4, 3, 5, 2, 6)):
    q, d = torch.randn(b, 6, 8), torch.randn(b, 10, 8)
    assert torch.allclose(scorer(q, d), maxsim(q, d), atol=1e-5)
    if i < 3:
        normer(q)
print("scored 5 batches")
