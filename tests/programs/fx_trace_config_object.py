"""A module traced with torch.fx.symbolic_trace whose wrapped helper takes a plain config object: torch.fx's
create_arg raises "NotImplementedError: argument of type: <class '__main__.ScaleConfig'>" (no torch.compile;
triage --from-text of this traceback names the fx_graph_argument row)."""
import torch
import torch.nn as nn


class ScaleConfig:
    def __init__(self, k):
        self.k = k


@torch.fx.wrap
def scaled(x, cfg):
    return x * cfg.k


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.cfg = ScaleConfig(2.0)
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return scaled(self.lin(x), self.cfg)


gm = torch.fx.symbolic_trace(Head())
print(gm(torch.ones(2, 4)).shape)
