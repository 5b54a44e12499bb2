"""An inference service: compile the model once with Inductor freezing (faster CPU inference), then
hot-reload a newer checkpoint with load_state_dict. The frozen graph keeps the old weights, so the
post-reload check against the reference outputs fails only compiled."""
import torch
import torch.nn as nn
import torch._inductor.config as inductor_config

inductor_config.freezing = True


def make_model():
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 3)).eval()


torch.manual_seed(0)
model = make_model()
serve = torch.compile(model)
batch = torch.randn(8, 16)
with torch.no_grad():
    before = serve(batch)

torch.manual_seed(1)
new_ckpt = make_model().state_dict()       # a newer checkpoint arrives
model.load_state_dict(new_ckpt)
reference = make_model()
reference.load_state_dict(new_ckpt)
with torch.no_grad():
    after, want = serve(batch), reference(batch)
assert torch.allclose(after, want, atol=1e-5), \
    f"after reload the served outputs are off by {(after - want).abs().max().item():.3g}"
print("reload ok; outputs changed by", (after - before).abs().max().item())
