"""A retrieval encoder whose custom op normalizes its input's rows in place through NumPy (np.divide(..., out=arr))
and returns the row lengths, declared with mutates_args=(): the compiled graph takes the input as unchanged and
computes the scaled embedding from the unnormalized rows (blind A/B batch 47). The fix declares mutates_args=("x",)
(the test runs an edited copy). It prints the compiled and eager embeddings' mean row norm."""
import numpy as np
import torch
import torch.nn as nn


@torch.library.custom_op("cdtest::normalize_rows_inplace", mutates_args=(), device_types="cpu")
def normalize_rows(x: torch.Tensor) -> torch.Tensor:
    arr = x.detach().numpy()
    norms = np.sqrt((arr * arr).sum(1)).astype(np.float32)
    np.divide(arr, np.maximum(norms, 1e-6)[:, None], out=arr)
    return torch.from_numpy(norms)


@normalize_rows.register_fake
def _(x):
    return x.new_empty((x.shape[0],))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 8)

    def forward(self, x):
        z = self.proj(x)
        lengths = normalize_rows(z)
        return z * 3.0, lengths


torch.manual_seed(0)
enc = Encoder().eval()
x = torch.randn(32, 16)
with torch.no_grad():
    eager, _ = enc(x)
    compiled, _ = torch.compile(enc)(x)
print(f"mean row norm: eager {eager.norm(dim=1).mean().item():.3f} compiled {compiled.norm(dim=1).mean().item():.3f}")
