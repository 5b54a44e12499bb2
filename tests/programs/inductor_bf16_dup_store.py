"""An open Inductor CPU bug (pytorch#194706, still on 2.15.0; blind A/B batch 14): one bf16 reduction
stored to two outputs makes the C++ code generator declare the same converted variable twice, and g++
fails with "conflicting declaration". In a model it is a learnable logit prior beside a head bias (both
get the same gradient); here the two-line core (tests/test_triage.py)."""
import torch


def f(g):
    return g.sum(0), g.sum(0, keepdim=True)


out = torch.compile(f)(torch.randn(256, 20, dtype=torch.bfloat16))
print("compiled:", [tuple(o.shape) for o in out])
