"""Feature-interaction kernels for the CTR ranker.

The CPU kernels here mirror the C++ extension we ship to the serving fleet
(`libctr_kernels.so`); keeping a Python copy lets us run the ranker on dev
boxes without building the extension.
"""
import torch

_lib = torch.library.Library("ctr", "DEF")

_lib.define("dot_interact(Tensor dense, Tensor sparse, bool self_interaction=False) -> Tensor")
_lib.define("hash_bucketize(Tensor ids, int num_buckets) -> Tensor")


def _dot_interact_cpu(dense: torch.Tensor, sparse: torch.Tensor, self_interaction: bool = False) -> torch.Tensor:
    # dense: [B, D], sparse: [B, F, D] -> [B, D + F'(F'-1)/2 (+F')]
    feats = torch.cat([dense.unsqueeze(1), sparse], dim=1)
    z = torch.bmm(feats, feats.transpose(1, 2))
    n = feats.shape[1]
    offset = 0 if self_interaction else -1
    li, lj = torch.tril_indices(n, n, offset=offset, device=feats.device)
    return torch.cat([dense, z[:, li, lj]], dim=1)


def _hash_bucketize_cpu(ids: torch.Tensor, num_buckets: int) -> torch.Tensor:
    # multiplicative hashing, same constants as the C++ kernel
    h = (ids * 2654435761) % 4294967296
    return torch.remainder(h, num_buckets)


_lib.impl("dot_interact", _dot_interact_cpu, "CPU")
_lib.impl("hash_bucketize", _hash_bucketize_cpu, "CPU")


def dot_interact(dense, sparse, self_interaction=False):
    return torch.ops.ctr.dot_interact(dense, sparse, self_interaction)


def hash_bucketize(ids, num_buckets):
    return torch.ops.ctr.hash_bucketize(ids, num_buckets)
