"""One-process DDP (gloo) over blocks compiled one by one, each with its own float scale read in forward: after
the value changes Dynamo makes the float dynamic, the DDP optimizer splits the graph at bucket boundaries, and
the float crossing the split crashes the compile ("'float' object has no attribute 'meta'", torch 2.15; blind
A/B batch 24's DINO drop path, pytorch#196227). Runs with optimize_ddp=False (--no-split)."""
import os
import socket
import sys

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

if "--no-split" in sys.argv:
    torch._dynamo.config.optimize_ddp = False


class Scaled(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):   # stochastic depth: keep a row with probability 1 - scale
        keep = 1.0 - self.scale
        mask = (torch.rand(x.shape[0], 1) + keep).floor()
        return x / keep * mask


class Block(nn.Module):
    def __init__(self, scale, width=512):
        super().__init__()
        self.up, self.down, self.gate = nn.Linear(width, width), nn.Linear(width, width), Scaled(scale)

    def forward(self, x):
        x = x + self.gate(self.up(x))
        return x + self.gate(self.down(x))


with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(s.getsockname()[1]))
dist.init_process_group("gloo", rank=0, world_size=1)
blocks = nn.Sequential(*[Block(0.02 * (i + 1)) for i in range(4)])
for b in blocks:
    b.compile(backend="aot_eager")
model = DistributedDataParallel(blocks)
loss = model(torch.randn(8, 512)).pow(2).mean()
loss.backward()
print(f"loss {loss.item():.4f}")
dist.destroy_process_group()
