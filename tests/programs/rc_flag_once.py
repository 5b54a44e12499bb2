"""A training step compiled with a Python bool `log_stats` that is first True at the last step (a logging
interval): one recompile for the new value, expected (blind A/B batch 37)."""
import torch

model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)


@torch.compile(backend="eager")
def loss_fn(x, y, log_stats):
    h = model(x)
    loss = ((h - y) ** 2).mean()
    if log_stats:
        return loss, h.detach().abs().mean()
    return loss, None


x, y = torch.randn(32, 8), torch.randn(32, 1)
for step in range(6):
    loss, stat = loss_fn(x, y, (step + 1) % 6 == 0)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if stat is not None:
        print(f"step {step} loss {loss.item():.4f} |h| {stat.item():.4f}")
