"""Source-stage test program (minify --source): a training loop that monitors activations every
few steps with forward hooks attached and removed around that step, then checks that every monitored
step logged. Compiled, the graph keeps calling the hooks it was traced with (Dynamo guards only how
many hooks a module has), so later monitored steps log nothing and the check exits 1; with
torch.compile off it exits 0. No graph fails: PyTorch's graph minifier has nothing to capture."""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, d_in, d_hidden, n_classes, dropout=0.0):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_hidden)
        self.head = nn.Linear(d_hidden, n_classes)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        x = self.drop(F.gelu(self.fc1(x)))
        x = self.drop(F.gelu(self.fc2(x)))
        return self.head(x)


def batches(n, batch, d_in, n_classes, seed=0):
    g = torch.Generator().manual_seed(seed)
    for _ in range(n):
        yield torch.randn(batch, d_in, generator=g), torch.randint(0, n_classes, (batch,), generator=g)


def attach_monitor(model, step, log):
    def record(name):
        def hook(mod, inp, out):
            log.setdefault(step, {})[name] = out.detach().float().std()
        return hook
    return [getattr(model, n).register_forward_hook(record(n)) for n in ("fc1", "fc2")]


def train(steps=24, every=4, lr=0.05):
    torch.manual_seed(0)
    model = MLP(32, 64, 10)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    step_fn = torch.compile(model, backend="aot_eager")
    log, losses = {}, []
    for step, (x, y) in enumerate(batches(steps, 16, 32, 10)):
        handles = attach_monitor(model, step, log) if step % every == 0 else []
        loss = F.cross_entropy(step_fn(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        for h in handles:
            h.remove()
        losses.append(loss.item())
    monitored = [s for s in range(steps) if s % every == 0]
    missing = [s for s in monitored if s not in log]
    print(f"final loss {losses[-1]:.4f}")
    if missing:
        print(f"MONITOR: {len(missing)} of {len(monitored)} monitored steps logged nothing: {missing}")
        sys.exit(1)
    print("all monitored steps logged")


if __name__ == "__main__":
    train()
