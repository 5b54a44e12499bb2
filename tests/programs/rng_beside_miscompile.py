"""A training step with dropout whose compiled numbers differ from eager for two reasons at once: Inductor's
random numbers (by design) and a wrong ReLU (PyTorch's own injected bug, with --relu-bug). Without the bug,
fallback_random makes compiled print eager's numbers; with it they still differ, so random numbers are not
the explanation (blind A/B batch 24: an Inductor gradient bug behind "dropout draws other numbers")."""
import sys

import torch
from torch import nn

if "--relu-bug" in sys.argv:
    import torch._inductor.config as inductor_config
    inductor_config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 1))
step = torch.compile(lambda x: model(x).pow(2).mean())
x = torch.randn(64, 16)
for i in range(3):
    loss = step(x)
    loss.backward()
    print(f"step {i} loss {loss.item():.5f} grad {model[0].weight.grad.norm().item():.5f}")
    model.zero_grad()
