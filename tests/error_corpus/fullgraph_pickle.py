# expect: graph_break_fullgraph compile_only
import pickle

import torch


@torch.compile(fullgraph=True)
def f(x, meta):
    blob = pickle.dumps(meta)
    return x * len(blob)


print(f(torch.randn(3), {"a": 1}))
