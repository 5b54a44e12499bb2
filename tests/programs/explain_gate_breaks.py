"""A CI gate that counts graph breaks with torch._dynamo.explain and fails when the loss splits the graph: a masked
mean taken by boolean indexing (`x[mask]`, a data-dependent size). torch._dynamo.explain traces with Dynamo under any
compile stance, so the gate fails the same way in triage's run without torch.compile (blind A/B batch 39: ELECTRA's
built-in loss; the verdict said "a bug in your program; torch.compile is not the cause"). --fixed: the masked mean
without indexing (one graph); the gate's numbers then differ from what explain printed in triage's eager run, which
was Dynamo's count too (blind A/B batch 66: compare held "graphs=0 graph_breaks=-1" up to the fix)."""
import sys

import torch

torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))


def loss_fn(x, y, mask):
    err = (net(x).squeeze(-1) - y) ** 2
    if "--fixed" in sys.argv:
        return (err * mask).sum() / mask.sum()
    return err[mask].mean()


x, y, mask = torch.randn(32, 8), torch.randn(32), torch.rand(32) > 0.3
ex = torch._dynamo.explain(loss_fn)(x, y, mask)
print(f"graphs={ex.graph_count} graph_breaks={ex.graph_break_count}")
if ex.graph_count != 1:
    sys.exit(f"loss is split into {ex.graph_count} graphs (expected 1)")
