"""Train a small MLP; every 4 steps attach forward hooks that record activation statistics for
that step, then remove them (a common monitoring pattern). Exits 0; compiled, steps 4 and 8 log
nothing: the graph compiled while the hooks were removed never runs hooks added later."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 64), nn.GELU(), nn.Linear(64, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
cmodel = torch.compile(model, backend="aot_eager")
data = [(torch.randn(16, 32), torch.randint(0, 10, (16,))) for _ in range(12)]

logged = {}


def attach(step):
    def hook(mod, inp, out, name):
        logged.setdefault(step, {})[name] = out.detach().std()
    return [model[i].register_forward_hook(lambda m, i_, o, n=f"layer{i}": hook(m, i_, o, n)) for i in (0, 2)]


for step, (x, y) in enumerate(data):
    handles = attach(step) if step % 4 == 0 else []
    loss = nn.functional.cross_entropy(cmodel(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    for h in handles:
        h.remove()

print("steps with activation stats:", sorted(logged))
