"""Small helpers shared by our distributed training scripts."""
import os
import datetime

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def setup():
    backend = os.environ.get("DIST_BACKEND", "gloo")
    dist.init_process_group(backend, timeout=datetime.timedelta(minutes=10))
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    return rank, world


def cleanup():
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


def unwrap(model):
    """Return the plain nn.Module behind DDP / torch.compile wrappers."""
    while True:
        if isinstance(model, DDP):
            model = model.module
        elif hasattr(model, "_orig_mod"):
            model = model._orig_mod
        else:
            return model


def maybe_compile(model, enabled, **compile_kwargs):
    """Compile the model for training (no-op when disabled)."""
    if not enabled:
        return model
    return torch.compile(unwrap(model), **compile_kwargs)


@torch.no_grad()
def replica_divergence(model):
    """Max abs difference of any parameter between ranks (0.0 == in sync)."""
    flat = torch.cat([p.detach().reshape(-1) for p in unwrap(model).parameters()])
    hi, lo = flat.clone(), flat.clone()
    dist.all_reduce(hi, op=dist.ReduceOp.MAX)
    dist.all_reduce(lo, op=dist.ReduceOp.MIN)
    return (hi - lo).abs().max().item()


def all_mean(value):
    t = torch.tensor([float(value)], dtype=torch.float64)
    dist.all_reduce(t)
    return t.item() / dist.get_world_size()
