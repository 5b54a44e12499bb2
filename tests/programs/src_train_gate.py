"""Benchmark program for minify --source (issue 28): a 60-line training script with a CI gate. A
compiled model and its eager twin train on the same batches; after training, their predictions
must agree. Inductor's C++ relu is made wrong by PyTorch's own test hook, so the compiled twin
drifts and the gate exits 1. A full run takes about 100 s on 2 idle CPU cores (torch 2.15)."""
import sys

import torch
import torch._inductor.config as inductor_config
import torch.nn as nn
import torch.nn.functional as F

inductor_config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"

STEPS = 25000
BATCH = 128
D_IN, D_HIDDEN, N_CLASSES = 64, 256, 10
LR = 0.01


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(D_IN, D_HIDDEN)
        self.fc2 = nn.Linear(D_HIDDEN, D_HIDDEN)
        self.out = nn.Linear(D_HIDDEN, N_CLASSES)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = torch.relu(self.fc2(x))
        return self.out(x)


def batches(steps, seed=0):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(D_IN, N_CLASSES, generator=g)
    for _ in range(steps):
        x = torch.randn(BATCH, D_IN, generator=g)
        yield x, (x @ w).argmax(dim=1)


def train_step(model, opt, x, y):
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.detach()


def main():
    torch.manual_seed(0)
    eager = Net()
    twin = Net()
    twin.load_state_dict(eager.state_dict())
    compiled = torch.compile(twin)
    opt_e = torch.optim.SGD(eager.parameters(), lr=LR, momentum=0.9)
    opt_c = torch.optim.SGD(twin.parameters(), lr=LR, momentum=0.9)
    for step, (x, y) in enumerate(batches(STEPS)):
        le = train_step(eager, opt_e, x, y)
        lc = train_step(compiled, opt_c, x, y)
        if step % 250 == 0:
            print(f"step {step}: eager loss {le.item():.4f} compiled loss {lc.item():.4f}")
    x_test, _ = next(batches(1, seed=1))
    with torch.no_grad():
        diff = (eager(x_test) - compiled(x_test)).abs().max().item()
    if diff > 1e-2:
        print(f"MISMATCH: compiled and eager predictions differ by {diff:.3g} after {STEPS} steps")
        sys.exit(1)
    print("gate passed")


if __name__ == "__main__":
    main()
