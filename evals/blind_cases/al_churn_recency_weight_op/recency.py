"""Recency weighting for the churn objective.

Older interactions are down-weighted with a piecewise-linear schedule that the
analytics team maintains as a small table of (age_days, weight) knots.  The
lookup runs on the host with numpy, so it is wrapped as a custom op to keep it
usable from compiled code.
"""
import numpy as np
import torch

# (age in days, weight) knots, from the analytics team's 2024-Q3 calibration.
DEFAULT_KNOTS = (
    (0.0, 1.00),
    (7.0, 0.95),
    (30.0, 0.80),
    (90.0, 0.55),
    (180.0, 0.35),
    (365.0, 0.20),
)


@torch.library.custom_op("churn::recency_weight", mutates_args=())
def recency_weight(age_days: torch.Tensor, knot_x: torch.Tensor, knot_y: torch.Tensor) -> torch.Tensor:
    ages = age_days.detach().cpu().numpy()
    w = np.interp(ages, knot_x.cpu().numpy(), knot_y.cpu().numpy())
    return torch.from_numpy(w).to(age_days.device)


@recency_weight.register_fake
def _(age_days, knot_x, knot_y):
    return torch.empty_like(age_days)


class RecencyWeighter(torch.nn.Module):
    def __init__(self, knots=DEFAULT_KNOTS):
        super().__init__()
        xs, ys = zip(*knots)
        self.register_buffer("knot_x", torch.tensor(xs, dtype=torch.float32))
        self.register_buffer("knot_y", torch.tensor(ys, dtype=torch.float32))

    def forward(self, age_days: torch.Tensor) -> torch.Tensor:
        return recency_weight(age_days, self.knot_x, self.knot_y)
