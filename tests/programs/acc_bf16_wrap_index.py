"""Wind-sector encoder for a drone telemetry model served in bfloat16. The heading is wrapped to [0, 2*pi),
bucketed into 16 sectors whose embeddings feed a small MLP. A release gate compares the compiled bf16 model
with the eager bf16 model on a validation batch. FP32=1 runs the heading wrap in float32."""
import math
import os
import sys

import torch
import torch.nn as nn

torch.manual_seed(0)
SECTORS = 16


class SectorEncoder(nn.Module):
    def __init__(self, dim=32, wrap_fp32=False):
        super().__init__()
        self.wrap_fp32 = wrap_fp32
        self.sector = nn.Embedding(SECTORS, dim)
        self.speed = nn.Linear(1, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, 1))

    def forward(self, yaw, speed):
        out_dtype = self.speed.weight.dtype
        if self.wrap_fp32:
            yaw = yaw.float()
        turns = torch.fmod(yaw, 2 * math.pi) / (2 * math.pi) + 1.0     # in (0, 2): one turn added
        idx = (turns * SECTORS).long() % SECTORS
        h = self.sector(idx).to(out_dtype) + self.speed(speed[:, None])
        return torch.tanh(self.mlp(h)).squeeze(-1)


def main():
    model = SectorEncoder(wrap_fp32=bool(os.environ.get("FP32"))).to(torch.bfloat16).eval()
    yaw = (torch.rand(4096) * 180 - 90).to(torch.bfloat16)      # integrated yaw, several turns either way
    speed = torch.rand(4096).to(torch.bfloat16)
    compiled = torch.compile(model)
    with torch.no_grad():
        ref, got = model(yaw, speed), compiled(yaw, speed)
    diff = (ref.float() - got.float()).abs()
    bad = int((diff > 0.05).sum())
    print(f"max |compiled - eager|: {diff.max().item():.4f}")
    print(f"samples outside tolerance: {bad}/{diff.numel()}")
    for i in diff.argsort(descending=True)[:3].tolist():
        print(f"  sample {i:5d}: eager {ref[i].item():+.4f}  compiled {got[i].item():+.4f}")
    if bad:
        print("GATE FAILED: compiled bf16 model does not match eager bf16 model")
        sys.exit(1)
    print("GATE PASSED")


if __name__ == "__main__":
    main()
