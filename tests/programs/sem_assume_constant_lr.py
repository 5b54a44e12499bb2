"""A hand-written SGD update compiled as one graph, with a learning-rate warm-up factor read from
the scheduler's state. The factor function is marked assume_constant_result (to avoid a recompile
per step), so its first value (step 0) is baked into the graph and the warm-up never progresses."""
import torch
import torch.nn as nn

SCHED = {"step": 0, "warmup": 4}


@torch.compiler.assume_constant_result
def warmup_factor():
    return min(1.0, (SCHED["step"] + 1) / SCHED["warmup"])


@torch.compile(backend="aot_eager")
def sgd_update(params, grads, base_lr):
    lr = base_lr * warmup_factor()
    for p, g in zip(params, grads):
        p.sub_(lr * g)
    return torch.tensor(lr)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
params = list(model.parameters())
used = []
for step in range(6):
    SCHED["step"] = step
    loss = model(torch.randn(32, 8)).pow(2).mean()
    grads = torch.autograd.grad(loss, params)
    with torch.no_grad():
        used.append(sgd_update(params, grads, 0.1).item())
assert abs(used[-1] - 0.1) < 1e-6, f"learning rate after warm-up is {used[-1]:.4f}, expected 0.1: {used}"
print("lr schedule:", [round(v, 4) for v in used])
