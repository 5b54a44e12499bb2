"""A custom op that pools a sequence into chunks, compiled with dynamic=True and called with documents of
several lengths. Its fake kernel computes the chunk count with int(math.ceil(T / chunk)), which fixes the
size inside a fake kernel: every new chunk count recompiles (blind A/B batch 29, a document embedder).
FIXED=1 uses integer ceil division, which stays symbolic: one compile. Prints the number of compiled graphs."""
import math
import os

import torch

FIXED = bool(os.environ.get("FIXED"))


@torch.library.custom_op("rcfake::chunk_pool", mutates_args=())
def chunk_pool(x: torch.Tensor, chunk: int) -> torch.Tensor:
    n = (x.shape[0] + chunk - 1) // chunk
    return torch.stack([x[i * chunk:(i + 1) * chunk].mean(0) for i in range(n)])


@chunk_pool.register_fake
def _chunk_pool_fake(x, chunk):
    n = (x.shape[0] + chunk - 1) // chunk if FIXED else int(math.ceil(x.shape[0] / chunk))
    return x.new_empty(n, x.shape[1])


class Embedder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(16, 16)

    def forward(self, x):
        return chunk_pool(torch.tanh(self.proj(x)), 8).sum(0)


model = torch.compile(Embedder(), dynamic=True)
with torch.no_grad():
    for length in (10, 20, 30, 41, 50):
        model(torch.randn(length, 16))
from torch._dynamo.utils import counters   # noqa: E402
print(f"graphs: {counters['stats']['unique_graphs']}")
