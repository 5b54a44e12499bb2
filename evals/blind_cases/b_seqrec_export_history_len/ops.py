"""Custom ops used by the ranker (mirrors the C++ kernels shipped in ranker_ext)."""
import torch
from torch import Tensor


@torch.library.custom_op("ranker::topk_mean_pool", mutates_args=())
def topk_mean_pool(hist: Tensor, scores: Tensor, k: int) -> Tensor:
    """Average the k highest-scoring history items.

    hist:   (B, L, D) item embeddings of the user history
    scores: (B, L)    relevance of each history item to the candidate
    returns (B, D)
    """
    kk = min(k, hist.shape[1])
    idx = scores.topk(kk, dim=1).indices
    picked = torch.gather(hist, 1, idx.unsqueeze(-1).expand(-1, -1, hist.shape[2]))
    return picked.mean(dim=1)


@topk_mean_pool.register_fake
def _(hist, scores, k):
    torch._check(scores.shape[0] == hist.shape[0])
    torch._check(scores.shape[1] == hist.shape[1])
    kk = k if hist.shape[1] >= k else hist.shape[1]
    assert kk > 0
    return hist.new_empty(hist.shape[0], hist.shape[2])
