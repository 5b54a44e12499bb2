"""A CPU scorer compiled for three fixed batch buckets (dynamic=False) with Inductor's freezing on: a graph per
bucket by design, and freezing keeps both compile caches from storing any graph (every start compiles again)."""
import torch
import torch._inductor.config as inductor_config

inductor_config.freezing = True

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1)).eval()
scorer = torch.compile(model, dynamic=False)
with torch.no_grad():
    for bucket in (8, 32, 128):
        print(f"bucket {bucket}: score sum {scorer(torch.randn(bucket, 32)).sum().item():.3f}")
