"""Batch scoring worker for the delivery ETA model.

Pulls route requests off the queue in micro-batches, scores them, and writes ETAs back.
A malformed request must never take the worker down: if a batch fails we rescore its
requests one by one and reject the bad ones.
"""
import argparse
import json
import random
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

N_ZONES = 64
N_VEHICLE = 4


class RouteFeatures(nn.Module):
    """Integer route summary -> dense features (all done in torch so it can be compiled)."""

    def __init__(self, d=32):
        super().__init__()
        self.zone = nn.Embedding(N_ZONES, d)
        self.vehicle = nn.Embedding(N_VEHICLE, d)

    def forward(self, route_m, planned_s, n_stops, zone, vehicle, hour):
        # seconds and metres per stop, integer bucketed like the legacy rules engine
        sec_per_stop = torch.div(planned_s, n_stops, rounding_mode="trunc")
        m_per_stop = torch.div(route_m, n_stops, rounding_mode="trunc")
        speed = route_m.float() / planned_s.clamp_min(1).float()
        hour_ang = hour.float() * (2 * torch.pi / 24)
        dense = torch.stack(
            [
                torch.log1p(route_m.float()) / 10,
                torch.log1p(planned_s.float()) / 10,
                torch.log1p(sec_per_stop.float()) / 10,
                torch.log1p(m_per_stop.float()) / 10,
                n_stops.float() / 20,
                speed / 15,
                torch.sin(hour_ang),
                torch.cos(hour_ang),
            ],
            dim=-1,
        )
        return torch.cat([dense, self.zone(zone), self.vehicle(vehicle)], dim=-1)


class EtaModel(nn.Module):
    def __init__(self, d=32, hidden=128):
        super().__init__()
        self.feats = RouteFeatures(d)
        self.mlp = nn.Sequential(
            nn.Linear(8 + 2 * d, hidden), nn.SiLU(),
            nn.Linear(hidden, hidden), nn.SiLU(),
            nn.Linear(hidden, 1),
        )

    def forward(self, route_m, planned_s, n_stops, zone, vehicle, hour):
        x = self.feats(route_m, planned_s, n_stops, zone, vehicle, hour)
        # predicted multiplicative correction on the planner's duration
        return planned_s.float() * torch.exp(0.5 * torch.tanh(self.mlp(x).squeeze(-1)))


FIELDS = ("route_m", "planned_s", "n_stops", "zone", "vehicle", "hour")


def fake_queue(n, seed=0, bad_every=37):
    rng = random.Random(seed)
    for i in range(n):
        stops = rng.randint(1, 25)
        req = {
            "id": f"req-{i:05d}",
            "route_m": rng.randint(800, 60000),
            "planned_s": rng.randint(600, 14400),
            "n_stops": stops,
            "zone": rng.randrange(N_ZONES),
            "vehicle": rng.randrange(N_VEHICLE),
            "hour": rng.randrange(24),
        }
        if i % bad_every == bad_every - 1:
            # upstream sometimes sends a route whose stops were all cancelled
            req["n_stops"] = 0
        yield req


def to_tensors(reqs):
    return [torch.tensor([r[f] for r in reqs], dtype=torch.long) for f in FIELDS]


def score_batch(fn, reqs):
    with torch.no_grad():
        return fn(*to_tensors(reqs)).tolist()


def run_worker(fn, n_requests, batch_size):
    done, rejected, fallbacks = {}, [], 0
    queue = list(fake_queue(n_requests))
    t0 = time.time()
    for i in range(0, len(queue), batch_size):
        batch = queue[i:i + batch_size]
        try:
            etas = score_batch(fn, batch)
            done.update({r["id"]: e for r, e in zip(batch, etas)})
        except RuntimeError as exc:
            fallbacks += 1
            for r in batch:
                try:
                    done[r["id"]] = score_batch(fn, [r])[0]
                except RuntimeError as exc1:
                    rejected.append((r["id"], str(exc1).splitlines()[0]))
    return done, rejected, fallbacks, time.time() - t0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--compile", action="store_true")
    p.add_argument("--requests", type=int, default=2048)
    p.add_argument("--batch-size", type=int, default=64)
    args = p.parse_args()

    torch.manual_seed(0)
    model = EtaModel().eval()
    fn = torch.compile(model, dynamic=True) if args.compile else model

    print(f"worker start (compile={args.compile})", flush=True)
    done, rejected, fallbacks, dt = run_worker(fn, args.requests, args.batch_size)
    print(f"scored {len(done)} requests in {dt:.1f}s, {fallbacks} batch fallbacks, "
          f"{len(rejected)} rejected", flush=True)
    for rid, why in rejected[:3]:
        print(f"  rejected {rid}: {why}")
    with open("etas.json", "w") as f:
        json.dump(done, f)
    print("worker exit OK", flush=True)


if __name__ == "__main__":
    main()
