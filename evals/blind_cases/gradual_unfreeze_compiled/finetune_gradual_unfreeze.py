"""ULMFiT-style gradual unfreezing of a pretrained encoder on a regression task.

Stage 0 trains only the head; every stage unfreezes one more residual block
(top-down). The model is compiled once up front.
"""
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

N_BLOCKS = 9
D = 64


class ResBlock(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)

    def forward(self, x):
        return x + self.fc2(F.silu(self.fc1(self.norm(x))))


class Regressor(nn.Module):
    def __init__(self, d_in=32, d=D, n_blocks=N_BLOCKS):
        super().__init__()
        self.inp = nn.Linear(d_in, d)
        self.blocks = nn.ModuleList(ResBlock(d) for _ in range(n_blocks))
        self.head = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 1))

    def forward(self, x):
        h = self.inp(x)
        for blk in self.blocks:
            h = blk(h)
        return self.head(h).squeeze(-1)


def set_stage(model, stage):
    """stage 0: head only; stage k: head + top k blocks."""
    for p in model.parameters():
        p.requires_grad_(False)
    for p in model.head.parameters():
        p.requires_grad_(True)
    for blk in list(model.blocks)[len(model.blocks) - stage:] if stage > 0 else []:
        for p in blk.parameters():
            p.requires_grad_(True)


def main():
    torch.manual_seed(0)
    model = Regressor()
    # pretend these are pretrained weights
    w_true = torch.randn(32)
    X = torch.randn(4096, 32)
    y = torch.tanh(X @ w_true / 4) + 0.05 * torch.randn(4096)

    cmodel = torch.compile(model)
    steps_per_stage = 30
    for stage in range(N_BLOCKS + 1):
        set_stage(model, stage)
        trainable = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.Adam(trainable, lr=1e-3)
        before = {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}
        t0 = time.perf_counter()
        for step in range(steps_per_stage):
            idx = torch.randint(0, X.shape[0], (128,))
            loss = F.mse_loss(cmodel(X[idx]), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        dt = time.perf_counter() - t0
        moved = sum(int(not torch.equal(before[n], p)) for n, p in model.named_parameters() if p.requires_grad)
        print(f"stage {stage:2d}: trainable tensors {len(trainable):3d}, updated {moved:3d}, "
              f"loss {loss.item():.4f}, {1e3 * dt / steps_per_stage:7.1f} ms/step")


if __name__ == "__main__":
    main()
