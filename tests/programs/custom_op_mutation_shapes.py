"""Custom ops declared with mutates_args=() in shapes a static scan can misread (review of blind A/B batch 47):
fp_* write no input tensor (a rebound clone or array, a list item, a nested helper's parameter); ok_* write only a
copy; miss_* write the input through .cpu().numpy(), an index, a transpose, np.copyto or the call form of custom_op.
Read by tests, never run."""
import torch, numpy as np
from torch.library import custom_op

@custom_op("t::fp_clone_rebind", mutates_args=())
def fp_clone_rebind(x: torch.Tensor) -> torch.Tensor:
    x = x.clone()          # rebinding the arg to a fresh copy
    x.add_(1)
    return x

@custom_op("t::fp_numpy_rebind", mutates_args=())
def fp_numpy_rebind(x: torch.Tensor) -> torch.Tensor:
    arr = x.detach().numpy()
    arr = arr * 2          # new array
    arr[0] = 0
    return torch.from_numpy(arr)

@custom_op("t::fp_list", mutates_args=())
def fp_list(xs: list[torch.Tensor]) -> torch.Tensor:
    xs[0] = xs[0] * 2      # python list element, no tensor written
    return xs[0] + xs[1]

@custom_op("t::fp_nested", mutates_args=())
def fp_nested(x: torch.Tensor) -> torch.Tensor:
    def helper(x):
        x.mul_(2); return x
    return helper(x.clone())

@custom_op("t::ok_emptylike", mutates_args=())
def ok_emptylike(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x); torch.add(x, 1, out=out); return out

@custom_op("t::ok_npcopy", mutates_args=())
def ok_npcopy(x: torch.Tensor) -> torch.Tensor:
    y = x.numpy().copy(); y[0] = 0; return torch.from_numpy(y)

@custom_op("t::miss_cpu_numpy", mutates_args=())
def miss_cpu_numpy(x: torch.Tensor) -> torch.Tensor:
    arr = x.detach().cpu().numpy()
    np.divide(arr, arr.sum(), out=arr)
    return x.clone()

@custom_op("t::miss_index_view", mutates_args=())
def miss_index_view(x: torch.Tensor) -> torch.Tensor:
    row = x[0]
    row.zero_()
    return x.clone()

@custom_op("t::miss_transpose", mutates_args=())
def miss_transpose(x: torch.Tensor) -> torch.Tensor:
    x.t().mul_(2)
    return x.clone()

@custom_op("t::miss_copyto", mutates_args=())
def miss_copyto(x: torch.Tensor) -> torch.Tensor:
    np.copyto(x.numpy(), 0.0)
    return x.clone()

def _impl(x: torch.Tensor) -> torch.Tensor:
    x.add_(1); return x.clone()
miss_functional = custom_op("t::miss_functional", _impl, mutates_args=())
