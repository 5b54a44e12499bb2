"""A custom op defined with torch.library.Library("tagger", "DEF") and a CPU kernel only; its fake kernel lives
in tagger_ops_fake.py (export_op_fake_not_imported.py imports this module, not that one)."""
import torch

_lib = torch.library.Library("tagger", "DEF")
_lib.define("bucketize_ids(Tensor ids, int n) -> Tensor")


def _bucketize_cpu(ids, n):
    return torch.remainder(ids * 40503, n)


_lib.impl("bucketize_ids", _bucketize_cpu, "CPU")


def bucketize_ids(ids, n):
    return torch.ops.tagger.bucketize_ids(ids, n)
