"""Two bugs: a print under fullgraph=True stops the compiled run at the first step; without torch.compile the
run gets through the steps and fails later in the program's own summary (an empty list indexed)."""
import torch


@torch.compile(fullgraph=True, backend="eager")
def step(x):
    print("inside step")
    return x * 2


x = torch.ones(3)
for i in range(3):
    x = step(x)
    print(f"step {i} sum {x.sum().item():.0f}")
times = []
print("median step time", sorted(times)[len(times) // 2])
