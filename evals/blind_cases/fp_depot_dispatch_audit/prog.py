"""Nightly dispatch planner + audit gate.

Assigns every delivery stop to its nearest depot, estimates drive-time,
and cross-checks the compiled planner against the float64 audit job that
operations uses for billing (straight-line distance in projected metres).
"""
import math
import time
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

# UTM zone 18N (EPSG:32618) bounding box for the service area, metres
EAST0, NORTH0 = 571_500.0, 4_497_000.0
SPAN_E, SPAN_N = 24_000.0, 18_000.0

N_DEPOTS = 16
N_STOPS = 640
STOP_FEATS = 6          # parcel count, weight, time-window width, floor, ... (normalised)
TOPK = 3

AUDIT_SAMPLE = 640
MAX_MISMATCH_RATE = 0.005    # share of stops whose depot differs from audit
MAX_DIST_ERR_M = 5.0         # metres


def make_city(seed: int = 7):
    rng = random.Random(seed)
    depots = [(EAST0 + rng.uniform(0.1, 0.9) * SPAN_E,
               NORTH0 + rng.uniform(0.1, 0.9) * SPAN_N) for _ in range(N_DEPOTS)]
    stops = []
    for _ in range(N_STOPS):
        # stops cluster around neighbourhood centres
        cx, cy = depots[rng.randrange(N_DEPOTS)]
        r = abs(rng.gauss(0.0, 2_500.0))
        th = rng.uniform(0.0, 2 * math.pi)
        stops.append((min(max(cx + r * math.cos(th), EAST0), EAST0 + SPAN_E),
                      min(max(cy + r * math.sin(th), NORTH0), NORTH0 + SPAN_N)))
    g = torch.Generator().manual_seed(seed)
    feats = torch.randn(N_STOPS, STOP_FEATS, generator=g)
    return depots, stops, feats


class EtaHead(nn.Module):
    def __init__(self, d_in: int, hidden: int = 64):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(d_in, hidden), nn.GELU(),
            nn.Linear(hidden, hidden), nn.GELU(),
            nn.Linear(hidden, 1),
        )

    def forward(self, x):
        # minutes, strictly positive
        return F.softplus(self.net(x)).squeeze(-1) + 2.0


class DispatchPlanner(nn.Module):
    def __init__(self, depot_xy: torch.Tensor, temperature_km: float = 1.5):
        super().__init__()
        self.register_buffer("depot_xy", depot_xy)
        self.temperature_km = temperature_km
        self.eta = EtaHead(TOPK + STOP_FEATS + N_DEPOTS)

    def forward(self, stop_xy: torch.Tensor, stop_feats: torch.Tensor):
        dist_m = torch.cdist(stop_xy, self.depot_xy)            # (N, D) metres
        dist_km = dist_m / 1000.0
        nearest = dist_km.argmin(dim=1)
        topk_km = dist_km.topk(TOPK, dim=1, largest=False).values
        load_share = torch.softmax(-dist_km / self.temperature_km, dim=1)
        eta_in = torch.cat([topk_km, stop_feats, load_share], dim=1)
        eta_min = self.eta(eta_in)
        return {
            "depot": nearest,
            "dist_m": dist_m.gather(1, nearest[:, None]).squeeze(1),
            "eta_min": eta_min,
            "depot_load": load_share.sum(dim=0),
        }


def audit_reference(depots, stops, idx):
    """Float64 audit job (same logic as the billing service)."""
    ref_depot, ref_dist = [], []
    for i in idx:
        sx, sy = stops[i]
        best, best_d = -1, float("inf")
        for j, (dx, dy) in enumerate(depots):
            d = math.hypot(sx - dx, sy - dy)
            if d < best_d:
                best, best_d = j, d
        ref_depot.append(best)
        ref_dist.append(best_d)
    return ref_depot, ref_dist


def main():
    torch.manual_seed(0)
    depots, stops, feats = make_city()
    depot_xy = torch.tensor(depots, dtype=torch.float32)
    stop_xy = torch.tensor(stops, dtype=torch.float32)

    planner = DispatchPlanner(depot_xy).eval()
    planner_c = torch.compile(planner)

    t0 = time.perf_counter()
    with torch.no_grad():
        out = planner_c(stop_xy, feats)
    t_first = time.perf_counter() - t0

    t0 = time.perf_counter()
    with torch.no_grad():
        for _ in range(20):
            out = planner_c(stop_xy, feats)
    t_steady = (time.perf_counter() - t0) / 20

    print(f"planned {N_STOPS} stops over {N_DEPOTS} depots "
          f"(first call {t_first:.1f}s, steady {t_steady * 1e3:.2f} ms/plan)")
    load = out["depot_load"]
    print(f"depot load share: min {load.min().item():.1f}  max {load.max().item():.1f}")
    print(f"mean ETA {out['eta_min'].mean().item():.1f} min, "
          f"p95 {out['eta_min'].quantile(0.95).item():.1f} min")

    # ---- audit gate -------------------------------------------------------
    idx = list(range(0, N_STOPS, max(1, N_STOPS // AUDIT_SAMPLE)))
    ref_depot, ref_dist = audit_reference(depots, stops, idx)
    got_depot = out["depot"][idx].tolist()
    got_dist = out["dist_m"][idx].tolist()

    mismatches = [k for k, (a, b) in enumerate(zip(got_depot, ref_depot)) if a != b]
    dist_err = [abs(a - b) for a, b in zip(got_dist, ref_dist)]
    rate = len(mismatches) / len(idx)
    worst = max(range(len(idx)), key=lambda k: dist_err[k])

    print(f"audit: {len(idx)} stops, depot mismatches {len(mismatches)} ({rate:.2%}), "
          f"max distance error {dist_err[worst]:.1f} m (stop {idx[worst]}: "
          f"planner {got_dist[worst]:.1f} m vs audit {ref_dist[worst]:.1f} m)")
    for k in mismatches[:3]:
        i = idx[k]
        print(f"  stop {i}: planner depot {got_depot[k]} vs audit depot {ref_depot[k]}")

    ok = rate <= MAX_MISMATCH_RATE and dist_err[worst] <= MAX_DIST_ERR_M
    print("AUDIT", "PASS" if ok else "FAIL")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
