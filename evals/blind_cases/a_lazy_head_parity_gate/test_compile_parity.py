"""CI gate: the compiled model served in production must match eager."""
import pytest
import torch

from bearing_net import NetConfig, build_model

CFG = NetConfig()
ATOL = RTOL = 1e-4


def make_windows(n, seed=None):
    g = None
    if seed is not None:
        g = torch.Generator().manual_seed(seed)
    t = torch.linspace(0, 1, CFG.window)
    base = torch.sin(2 * torch.pi * 157.0 * t) + 0.3 * torch.sin(2 * torch.pi * 33.0 * t)
    noise = torch.randn(n, CFG.in_channels, CFG.window, generator=g)
    return (base + 0.5 * noise).float()


@pytest.fixture(scope="module")
def models():
    torch.manual_seed(0)
    eager = build_model(CFG).eval()
    torch.manual_seed(0)
    compiled = torch.compile(build_model(CFG).eval())
    return eager, compiled


@torch.no_grad()
def test_eager_is_deterministic(models):
    eager, _ = models
    x = make_windows(4, seed=1)
    a = eager(x)
    b = eager(x)
    for u, v in zip(a, b):
        torch.testing.assert_close(u, v, atol=0, rtol=0)


@torch.no_grad()
@pytest.mark.parametrize("batch", [8, 32])
def test_compiled_matches_eager(models, batch):
    eager, compiled = models
    x = make_windows(batch, seed=batch)
    ref_logits, ref_rul = eager(x)
    out_logits, out_rul = compiled(x)
    print(f"batch={batch} max|dlogits|={(out_logits - ref_logits).abs().max():.3e} "
          f"max|drul|={(out_rul - ref_rul).abs().max():.3e}")
    torch.testing.assert_close(out_logits, ref_logits, atol=ATOL, rtol=RTOL)
    torch.testing.assert_close(out_rul, ref_rul, atol=ATOL, rtol=RTOL)


@torch.no_grad()
def test_predicted_classes_agree(models):
    eager, compiled = models
    x = make_windows(64, seed=7)
    agree = (eager(x)[0].argmax(-1) == compiled(x)[0].argmax(-1)).float().mean().item()
    print(f"class agreement: {agree:.3f}")
    assert agree == 1.0
