"""A pytest CI gate that compares a compiled model with an eager one, built from different random weights (the
second model is built after the RNG moved on): it fails without torch.compile too. pytest shows torch's own
DEBUG log records (the torch.__trace logger) of the failing test, hundreds of lines that are not the program's
output (blind A/B batch 23)."""
import torch
from torch import nn


def build():
    return nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4)).eval()


def test_compiled_matches_eager():
    torch.manual_seed(0)
    eager = build()
    x = torch.randn(8, 16)
    compiled = torch.compile(build())
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), eager(x), atol=1e-4, rtol=1e-4)
