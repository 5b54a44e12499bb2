"""Audio upsampler loss under dynamic=True: a float ratio check of two lengths (Eq(IntTrueDiv(s1, s0), 2.0): it pins
only the ratio), then a Hann window of the reference length (torch.hann_window takes a Python int: that line makes
the length static). Review of blind A/B batch 46's float-math rule: the window's line is the cause, not the ratio."""
import torch
import torch.nn.functional as F

def loss(x, ref):
    if ref.shape[-1] / x.shape[-1] == 2.0:
        y = F.interpolate(x, scale_factor=2.0, mode="linear")
    else:
        y = F.interpolate(x, size=ref.shape[-1], mode="linear")
    win = torch.hann_window(ref.shape[-1])
    return ((y - ref) * win).pow(2).mean()

f = torch.compile(loss, dynamic=True, backend="eager")
for T in (100, 120, 140, 160):
    print(T, f(torch.randn(2, 3, T), torch.randn(2, 3, 2 * T)).item())
