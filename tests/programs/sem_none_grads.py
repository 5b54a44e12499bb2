"""A two-task training step: one shared trunk, two heads computed by one custom autograd.Function whose
backward skips a head whose output gradient is None (ctx.set_materialize_grads(False)) and averages the
trunk gradient over the heads that got one. Batches alternate tasks; a CI gate compares the compiled
run's losses with an eager run's."""
import sys

import torch
import torch.nn as nn


class TwoHeads(torch.autograd.Function):
    @staticmethod
    def forward(ctx, h, w_a, w_b):
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(h, w_a, w_b)
        return h @ w_a.t(), h @ w_b.t()

    @staticmethod
    def backward(ctx, g_a, g_b):
        h, w_a, w_b = ctx.saved_tensors
        used = [g is not None for g in (g_a, g_b)]
        grad_h = torch.zeros_like(h)
        grad_a = grad_b = None
        if g_a is not None:
            grad_h = grad_h + g_a @ w_a
            grad_a = g_a.t() @ h
        if g_b is not None:
            grad_h = grad_h + g_b @ w_b
            grad_b = g_b.t() @ h
        return grad_h / max(sum(used), 1), grad_a, grad_b


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(16, 32), nn.Tanh())
        self.w_a = nn.Parameter(torch.randn(4, 32) * 0.1)
        self.w_b = nn.Parameter(torch.randn(1, 32) * 0.1)

    def forward(self, x):
        return TwoHeads.apply(self.trunk(x), self.w_a, self.w_b)


def train(compiled):
    torch.manual_seed(0)
    model = Model()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    fwd = torch.compile(model) if compiled else model
    losses = []
    for step in range(6):
        x = torch.randn(8, 16)
        logits, reg = fwd(x)
        task = step % 3          # 0: both heads, 1: head a only, 2: head b only
        loss = 0.0
        if task != 2:
            loss = loss + nn.functional.cross_entropy(logits, torch.randint(0, 4, (8,)))
        if task != 1:
            loss = loss + nn.functional.mse_loss(reg.squeeze(1), torch.randn(8))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


eager, comp = train(False), train(True)
for i, (e, c) in enumerate(zip(eager, comp)):
    print(f"step {i}: eager {e:.5f} compiled {c:.5f}")
worst = max(abs(e - c) for e, c in zip(eager, comp))
if worst > 1e-4:
    print(f"PARITY FAIL: losses differ by {worst:.3g}")
    sys.exit(1)
print("parity ok")
