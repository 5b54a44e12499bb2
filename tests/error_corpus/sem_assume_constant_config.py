# expect: assume_constant_result_once compile_only
import torch

CONFIG = {"temperature": 1.0}


@torch._dynamo.assume_constant_result
def temperature():
    return CONFIG["temperature"]


@torch.compile(backend="eager")
def sample_logits(logits):
    return torch.softmax(logits / temperature(), dim=-1)


logits = torch.tensor([[2.0, 1.0, 0.0]])
sharp = sample_logits(logits)
CONFIG["temperature"] = 10.0             # anneal for exploration
flat = sample_logits(logits)
assert flat.max() < sharp.max(), f"temperature change had no effect: {flat.tolist()} vs {sharp.tolist()}"
