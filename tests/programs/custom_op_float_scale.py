"""Simulated int8 inference: a custom op computes each batch's quantization scale with numpy and returns it as a
Python float; its fake kernel returns a placeholder 1.0, which the compiled graph keeps as a constant
(blind A/B batch 38)."""
import numpy as np
import torch


@torch.library.custom_op("cdtest::percentile_scale", mutates_args=())
def percentile_scale(x: torch.Tensor) -> float:
    return float(np.percentile(np.abs(x.detach().numpy()), 99.9)) / 127.0


@percentile_scale.register_fake
def _(x):
    return 1.0


def fake_quant(x):
    s = percentile_scale(x)
    return torch.clamp(torch.round(x / s), -127, 127) * s


torch.manual_seed(0)
lin = torch.nn.Linear(16, 4)
x = torch.randn(8, 16) * 0.05


def model(x):
    return lin(fake_quant(x))


with torch.no_grad():
    print(f"logits sum {model(x).sum().item():.5f}")
    print(f"logits sum {torch.compile(model)(x).sum().item():.5f} (compiled)")
