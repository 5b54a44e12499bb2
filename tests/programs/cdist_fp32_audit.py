"""A dispatch planner: each stop goes to the nearest depot by torch.cdist on raw UTM metres (about 4.5e6) in float32,
compiled, then an fp64 audit. cdist's default for more than 25 rows is the matmul form |x|^2 + |y|^2 - 2xy, whose
float32 cancellation at these magnitudes is kilometres: the audit fails with or without torch.compile (exit 1).
FIXED=1 passes compute_mode="donot_use_mm_for_euclid_dist" and the audit passes, with other numbers than the buggy
eager run printed. (Blind A/B batch 64: compare then said the fix's numbers were unlike eager's.)"""
import os
import sys

import torch

FIXED = os.environ.get("FIXED") == "1"
torch.manual_seed(0)
EAST0, NORTH0 = 500_000.0, 4_500_000.0
depots64 = torch.stack([EAST0 + torch.rand(16, dtype=torch.float64) * 40_000,
                        NORTH0 + torch.rand(16, dtype=torch.float64) * 40_000], 1)
stops64 = torch.stack([EAST0 + torch.rand(256, dtype=torch.float64) * 40_000,
                       NORTH0 + torch.rand(256, dtype=torch.float64) * 40_000], 1)


@torch.compile
def plan(stops, depots):
    mode = "donot_use_mm_for_euclid_dist" if FIXED else "use_mm_for_euclid_dist_if_necessary"
    d = torch.cdist(stops, depots, compute_mode=mode)
    dist, depot = d.min(1)
    return depot, dist, torch.softmax(-d / 5000.0, 1).sum(0) / len(stops) * 100


depot, dist, share = plan(stops64.float(), depots64.float())
ref = torch.cdist(stops64, depots64, compute_mode="donot_use_mm_for_euclid_dist")
ref_dist, ref_depot = ref.min(1)
wrong = int((depot != ref_depot).sum())
err = (dist.double() - ref_dist).abs().max().item()
print(f"depot load share: min {share.min().item():.1f}  max {share.max().item():.1f}")
print(f"audit: {len(stops64)} stops, depot mismatches {wrong} ({100 * wrong / len(stops64):.2f}%), "
      f"max distance error {err:.1f} m")
if wrong or err > 5.0:
    print("AUDIT FAIL")
    sys.exit(1)
print("AUDIT PASS")
