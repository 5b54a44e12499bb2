# expect: cudagraph_grad_overwritten compile_only
"""Train with gradient accumulation (2 micro-batches per optimizer step) through a model compiled
with mode="reduce-overhead". The .grad tensors are first allocated by the compiled backward inside
the CUDA graphs' memory pool; the next micro-batch's replay overwrites them."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 1)).cuda()
cmodel = torch.compile(model, mode="reduce-overhead")
opt = torch.optim.SGD(model.parameters(), lr=0.05)
data = torch.randn(12, 32, 64, device="cuda")
target = data.sum(-1, keepdim=True).tanh()

for step in range(6):
    for micro in range(2):
        i = 2 * step + micro
        loss = (cmodel(data[i]) - target[i]).pow(2).mean() / 2
        loss.backward()
    print(f"step {step}: grad norm {model[0].weight.grad.norm().item():.5f}")
    opt.step()
    opt.zero_grad(set_to_none=False)
