"""Bug: a user-written post-grad pass corrupts the graph (turns mul into add)."""
import sys

import torch
import torch._inductor.config as inductor_config


def corrupt_mul(graph):
    for node in graph.nodes:
        if node.op == "call_function" and node.target is torch.ops.aten.mul.Tensor:
            node.target = torch.ops.aten.add.Tensor


inductor_config.post_grad_custom_post_pass = corrupt_mul


def f(x, y):
    return (x * y).sin() + y


x, y = torch.randn(16), torch.randn(16)
if not torch.allclose(torch.compile(f)(x, y), f(x, y), atol=1e-4):
    print("MISMATCH", file=sys.stderr)
    sys.exit(1)
print("ok")
