"""A compiled training step that takes its gradients with torch.autograd.grad and updates momentum
buffers in place. Measured: torch 2.14.1 graph-breaks at torch.autograd.grad (GB9186) and compiles the
rest (2 graphs, 22 ops); torch 2.15.0 fails the whole frame at that break on every call (6 hits, 0
graphs): the step runs eagerly after the upgrade ("it got slower after I upgraded")."""
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 1))
bufs = [torch.zeros_like(p) for p in model.parameters()]


@torch.compile
def train_step(x, y):
    loss = torch.nn.functional.mse_loss(model(x), y)
    grads = torch.autograd.grad(loss, list(model.parameters()))
    with torch.no_grad():
        for p, g, buf in zip(model.parameters(), grads, bufs):
            if buf.data_ptr():                       # the momentum buffer exists
                buf.mul_(0.9).add_(g)
            p.sub_(0.05 * buf)
    return loss


x, y = torch.randn(64, 16), torch.randn(64, 1)
for step in range(6):
    print(f"step {step} loss {train_step(x, y).item():.5f}")
