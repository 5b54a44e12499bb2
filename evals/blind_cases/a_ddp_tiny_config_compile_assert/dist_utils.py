import os

import torch
import torch.distributed as dist


def setup():
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    dist.init_process_group(backend)
    rank = dist.get_rank()
    if backend == "nccl":
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
    return rank, dist.get_world_size(), device


def param_megabytes(model: torch.nn.Module) -> float:
    seen, total = set(), 0
    for p in model.parameters():
        if id(p) in seen:
            continue
        seen.add(id(p))
        total += p.numel() * p.element_size()
    return total / 2**20


def pick_bucket_cap_mb(model: torch.nn.Module, target_buckets: int) -> float:
    """Split gradient all-reduce into ~target_buckets buckets so that
    communication of late layers overlaps with backward of early ones."""
    mb = param_megabytes(model) / target_buckets
    return round(min(max(mb, 0.25), 100.0), 2)


def all_ranks_equal(t: torch.Tensor) -> bool:
    ref = t.detach().clone()
    dist.broadcast(ref, src=0)
    same = torch.tensor([int(torch.equal(ref, t.detach()))], device=t.device)
    dist.all_reduce(same, op=dist.ReduceOp.MIN)
    return bool(same.item())
