"""A checkpoint sweep through one compiled runner with Inductor's freezing on: the weights of the first
compile are folded into the compiled code, so every later load_state_dict is ignored and each checkpoint
scores like the first. Exits 0 (tests/test_semantics.py: class freezing_stale_weights, seen from source)."""
import torch
import torch._inductor.config as inductor_config

inductor_config.freezing = True   # "faster CPU inference"

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)).eval()
checkpoints = [{k: v * scale for k, v in model.state_dict().items()} for scale in (1.0, 2.0, 3.0)]
x = torch.randn(8, 16)
runner = torch.compile(model)
with torch.no_grad():
    for i, sd in enumerate(checkpoints):
        model.load_state_dict(sd)
        print(f"checkpoint {i}: output mean {runner(x).mean().item():.4f}")
