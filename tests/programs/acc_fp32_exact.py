"""A float32 model checked with torch.equal: compiled differs from eager by rounding only. torch's
accuracy check at its default repro_tolerance (1e-3 of eager passes) cannot tell that from a small
miscompile; at repro_tolerance 0 its RMSE rule measures it: rounding, not a bug."""
import torch

torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 64))
x = torch.randn(32, 64) * 30
ref, out = m(x), torch.compile(m)(x)
print("max abs diff", (ref - out).abs().max().item())
assert torch.equal(ref, out), "compiled output differs from eager"
