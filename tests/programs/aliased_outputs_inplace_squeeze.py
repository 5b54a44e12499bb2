"""A compiled encode returns `z` and `z.detach()` (blind A/B batch 55's dy, pytorch#191449): under no_grad Inductor
hands both back as one tensor object, so the caller's in-place `mu.squeeze_(-1)` also squeezes `z`, and the compiled
decode then fails while tracing with a channel mismatch; eager returns two objects. FIXED=1: squeeze out of place."""
import os

import torch
import torch.nn as nn


class AE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv1d(3, 8, 4)
        self.dec = nn.ConvTranspose1d(8, 3, 4)

    def encode(self, x):
        z = self.enc(x).mean(-1, keepdim=True)
        return z, z.detach()

    def decode(self, z):
        return self.dec(z)


torch.manual_seed(0)
model = AE().eval()
encode, decode = torch.compile(model.encode), torch.compile(model.decode)
x = torch.randn(5, 3, 16)
with torch.no_grad():
    z, mu = encode(x)
    if os.environ.get("FIXED") == "1":
        mu = mu.squeeze(-1)
    else:
        mu.squeeze_(-1)
    rec = decode(z)
print("latent", tuple(mu.shape), "recon", tuple(rec.shape))
