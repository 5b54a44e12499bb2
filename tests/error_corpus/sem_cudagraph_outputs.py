# expect: cudagraph_output_overwritten compile_only
"""Evaluate a compiled classifier with mode="reduce-overhead" (CUDA graphs) and keep every batch's
logits to compute the metrics at the end. Each replay reuses the CUDA graph's output memory, so the
logits kept from earlier batches were overwritten: PyTorch raises when they are read."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(128, 256), nn.GELU(), nn.Linear(256, 256), nn.GELU(), nn.Linear(256, 10))
model = model.cuda().eval()
cmodel = torch.compile(model, mode="reduce-overhead")
batches = [(torch.randn(64, 128, device="cuda"), torch.randint(0, 10, (64,), device="cuda")) for _ in range(6)]

all_logits = []
with torch.no_grad():
    for x, _ in batches:
        all_logits.append(cmodel(x))
logits = torch.cat(all_logits)
labels = torch.cat([y for _, y in batches])
print("accuracy:", (logits.argmax(1) == labels).float().mean().item())
