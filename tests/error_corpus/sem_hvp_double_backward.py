# expect: double_backward compile_only
import torch

# Hessian-vector product of a compiled loss (a curvature estimate): the gradient is taken with
# create_graph=True and differentiated again
model = torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.Tanh(), torch.nn.Linear(12, 1))
loss_fn = torch.compile(lambda x, y: (model(x) - y).pow(2).mean(), backend="aot_eager")
x, y = torch.randn(16, 6), torch.randn(16, 1)
params = list(model.parameters())
grads = torch.autograd.grad(loss_fn(x, y), params, create_graph=True)
v = [torch.randn_like(p) for p in params]
hvp = torch.autograd.grad(sum((g * u).sum() for g, u in zip(grads, v)), params)
print("curvature along v:", sum((h * u).sum() for h, u in zip(hvp, v)).item())
