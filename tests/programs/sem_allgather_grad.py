"""A contrastive loss over features gathered from every rank with dist.all_gather, as CLIP-style training does
(blind A/B batch 23). Eagerly dist.all_gather has no autograd: the gathered copies are constants. Compiled, Dynamo
traces it as a functional all_gather whose backward is a reduce_scatter, so gradients also flow through the
gathered copies: other numbers. One process (gloo, world size 1) shows it."""
import os
import sys
import tempfile

import torch
import torch.distributed as dist
from torch import nn

with tempfile.TemporaryDirectory() as tmp:
    dist.init_process_group("gloo", init_method=f"file://{os.path.join(tmp, 'store')}", rank=0, world_size=1)
    torch.manual_seed(0)
    enc = nn.Linear(16, 8)
    x = torch.randn(6, 16)

    def loss_fn(x):
        feats = enc(x)
        gathered = [torch.zeros_like(feats) for _ in range(dist.get_world_size())]
        dist.all_gather(gathered, feats)
        allf = torch.cat(gathered)
        return (feats @ allf.T).logsumexp(-1).mean()

    if "--eager" not in sys.argv:
        loss_fn = torch.compile(loss_fn)
    loss = loss_fn(x)
    loss.backward()
    print(f"loss {loss.item():.6f} grad_norm {enc.weight.grad.norm().item():.6f}")
    dist.destroy_process_group()
