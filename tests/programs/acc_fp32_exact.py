"""A float32 model checked with torch.equal: compiled differs from eager by rounding only, but at
float32 torch's accuracy check (1e-3 of eager passes) cannot tell rounding from a small miscompile,
so triage must say not sure (bisect), never 'rounding, not a bug'."""
import torch

torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 64))
x = torch.randn(32, 64) * 30
ref, out = m(x), torch.compile(m)(x)
print("max abs diff", (ref - out).abs().max().item())
assert torch.equal(ref, out), "compiled output differs from eager"
