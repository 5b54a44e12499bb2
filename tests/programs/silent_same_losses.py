"""A small training loop that prints its losses at full precision: compiled and eager differ only
by float32 rounding in the last digits (no silent difference)."""
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.LayerNorm(64), torch.nn.Linear(64, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(256, 32), torch.randn(256, 1)


@torch.compile
def step():
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    return loss


for i in range(8):
    opt.zero_grad()
    loss = step()
    opt.step()
    print(f"step {i} loss {loss.item()!r} grad-norm {model[0].weight.grad.norm().item()}")
print("done: 8 steps")
