"""The fake kernel of tagger::bucketize_ids (shapes only), for torch.compile and torch.export."""
import torch

import tagger_ops  # noqa: F401  (defines the op; unused here)


@torch.library.register_fake("tagger::bucketize_ids")
def _bucketize_fake(ids, n):
    return torch.empty_like(ids)
