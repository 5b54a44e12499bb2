"""A two-stage model whose forward branches on which stage object (of the program's own class) it holds (blind A/B
batch 55, pytorch#196173): torch 2.15 guards only that attribute's type, so after the switch the compiled forward
keeps running the first stage's graph. Its dropout puts random ops in the graph, so compiled random numbers look
like a cause until a run with fallback_random fails the same way. FIXED=1: the stage is an enum.Enum (guarded by
value): the switch recompiles."""
import enum
import os
import sys

import torch
import torch.nn as nn


class Stage:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


class StageEnum(enum.Enum):
    pretrain = "pretrain"
    finetune = "finetune"


if os.environ.get("FIXED") == "1":
    PRETRAIN, FINETUNE = StageEnum.pretrain, StageEnum.finetune
else:
    PRETRAIN, FINETUNE = Stage("pretrain"), Stage("finetune")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(8, 16)
        self.drop = nn.Dropout(0.1)
        self.dec = nn.Linear(16, 8)
        self.head = nn.Linear(16, 3)
        self.stage = PRETRAIN

    def forward(self, x):
        h = self.drop(torch.relu(self.enc(x)))
        if self.stage is PRETRAIN:
            return self.dec(h)
        return self.head(h)


torch.manual_seed(0)
model = Net()
step = torch.compile(model)
x = torch.randn(4, 8)
print("pretrain out", tuple(step(x).shape))
model.stage = FINETUNE
out = step(x)
print("finetune out", tuple(out.shape))
if out.shape[-1] != 3:
    sys.exit(f"FAIL: the finetune head gives {out.shape[-1]} outputs, expected 3")
print("ok")
