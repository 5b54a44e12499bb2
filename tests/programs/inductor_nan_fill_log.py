"""Nightly churn scorer over feature groups (blind A/B batch 62's fd, pytorch#190417): each group is transformed
(log for tenure) and normalised; a segment without CRM data has no tenure group, which forward fills with zeros
before the transform: log(0) = -inf, the LayerNorm makes NaN. Eager scores that segment NaN without an error; the
compiled graph for it has the zeros as a constant and Inductor's value-range analysis asserts. FIXED=1: the
missing group is filled after the transform."""
import os

import torch
import torch.nn as nn

FIXED = os.environ.get("FIXED") == "1"
GROUPS = {"usage": ("log1p", 4), "billing": ("none", 3), "tenure": ("log", 1)}


class GroupedScorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.norms = nn.ModuleDict({g: nn.LayerNorm(n) for g, (_, n) in GROUPS.items()})
        self.head = nn.Linear(sum(n for _, n in GROUPS.values()), 1)

    def forward(self, feats):
        batch = next(iter(feats.values())).shape[0]
        parts = []
        for name, (kind, n) in GROUPS.items():
            x = feats.get(name)
            if x is None and FIXED:
                parts.append(self.norms[name](torch.zeros(batch, n)))
                continue
            if x is None:
                x = torch.zeros(batch, n)
            x = torch.log1p(x) if kind == "log1p" else torch.log(x) if kind == "log" else x
            parts.append(self.norms[name](x))
        return self.head(torch.cat(parts, dim=1)).squeeze(-1)


def main():
    torch.manual_seed(0)
    model = GroupedScorer().eval()
    scorer = torch.compile(model)
    segments = {
        "enterprise": {"usage": torch.rand(16, 4) * 50, "billing": torch.randn(16, 3), "tenure": torch.rand(16, 1) * 900 + 1},
        "self_serve_new": {"usage": torch.rand(16, 4) * 5, "billing": torch.randn(16, 3)},
    }
    with torch.no_grad():
        for name, feats in segments.items():
            risk = torch.sigmoid(scorer(feats))
            print(f"{name}: high_risk={int((risk > 0.5).sum())} mean={risk.mean().item():.3f}")


if __name__ == "__main__":
    main()
