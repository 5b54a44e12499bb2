import torch


@torch.library.custom_op("tinylm::kv_write", mutates_args=())
def kv_write(k_cache: torch.Tensor, v_cache: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
             pos: torch.Tensor) -> None:
    # k_cache/v_cache: [B, H, T_max, D]; k/v: [B, H, T_new, D]; pos: [T_new]
    k_cache.index_copy_(2, pos, k)
    v_cache.index_copy_(2, pos, v)


@kv_write.register_fake
def _(k_cache, v_cache, k, v, pos):
    return None
