"""An Inductor custom post-grad pass given as a plain function: PyTorch cannot hash it into the FX graph
cache key, so the FX graph cache is bypassed ("Unsupported post grad custom pass")."""
import torch
import torch._inductor.config as inductor_config


def my_pass(graph):  # a plain callable, not a torch._inductor.custom_graph_pass.CustomGraphPass
    return None


inductor_config.post_grad_custom_post_pass = my_pass


@torch.compile
def f(x):
    return torch.relu(x) * 2 + 1


with torch.no_grad():
    print(f(torch.randn(8)).sum().item())
