"""A training step whose compiled path differs by a debug branch under torch.compiler.is_compiling() that
divides by a norm that is 0 for padded rows: compiled prints NaN, eager finite numbers. The report must name
the NaN first (blind A/B batch 21: a TextCNN's NaN gradients were listed below dropout's loss difference)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Dropout(0.1), nn.Linear(16, 2))


def loss_fn(x, y):
    h = model(x)
    if torch.compiler.is_compiling():
        h = h * (x.abs().sum(-1, keepdim=True) > 0)
        h = h / h.norm(dim=-1, keepdim=True)
    return nn.functional.cross_entropy(h, y)


x, y = torch.randn(6, 8), torch.tensor([0, 1, 0, 1, 0, 1])
x[3] = 0.0
step = torch.compile(loss_fn)
for i in range(2):
    loss = step(x, y)
    loss.backward()
    gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    print(f"step {i} loss {loss.item():.4f} grad_norm {gn.item():.3f}")
