"""Shape functions (fake kernels) for the ctr:: ops, used by torch.compile / torch.export."""
import torch

import ctr_ops  # noqa: F401  (defines the ops)


@torch.library.register_fake("ctr::dot_interact")
def _dot_interact_fake(dense, sparse, self_interaction=False):
    b, d = dense.shape
    n = sparse.shape[1] + 1
    pairs = n * (n + 1) // 2 if self_interaction else n * (n - 1) // 2
    return dense.new_empty(b, d + pairs)


@torch.library.register_fake("ctr::hash_bucketize")
def _hash_bucketize_fake(ids, num_buckets):
    return torch.empty_like(ids)
