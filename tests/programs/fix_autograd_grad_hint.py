"""A compiled adversarial step that calls torch.autograd.grad inside its loop (blind A/B batch 20): a graph
break whose PyTorch hint is a config switch (torch._dynamo.config.trace_autograd_ops)."""
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))


@torch.compile
def adversarial_loss(x, y):
    delta = torch.zeros_like(x, requires_grad=True)
    for _ in range(2):
        loss = torch.nn.functional.cross_entropy(model(x + delta), y)
        (g,) = torch.autograd.grad(loss, delta)
        delta = (delta + 0.1 * g.sign()).detach().requires_grad_(True)
    return torch.nn.functional.cross_entropy(model(x + delta), y)


for step in range(3):
    x, y = torch.randn(8, 16), torch.randint(0, 2, (8,))
    print(f"step {step} loss {adversarial_loss(x, y).item():.4f}")
