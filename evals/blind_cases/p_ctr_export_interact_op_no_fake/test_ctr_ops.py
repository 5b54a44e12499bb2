import torch

import ctr_ops
import ctr_ops_meta  # noqa: F401


def test_dot_interact_opcheck():
    dense = torch.randn(4, 16)
    sparse = torch.randn(4, 6, 16)
    torch.library.opcheck(torch.ops.ctr.dot_interact.default, (dense, sparse, False))


def test_hash_bucketize_opcheck():
    ids = torch.randint(0, 10**9, (32,))
    torch.library.opcheck(torch.ops.ctr.hash_bucketize.default, (ids, 1000))


def test_dot_interact_shape():
    out = ctr_ops.dot_interact(torch.randn(2, 8), torch.randn(2, 3, 8))
    assert out.shape == (2, 8 + 6)
