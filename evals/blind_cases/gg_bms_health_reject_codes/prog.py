"""Battery-pack health scoring service: request handling + release smoke test.

Each request carries a telemetry window for one battery module:
  [n_windows, n_cells, n_steps, 4]  channels = (voltage, current, temperature, soc)
The service returns a per-cell health score, or rejects malformed telemetry
with 422 so the gateway can ask the edge device to resend.
"""
import argparse
import logging
import math
import time
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("bms-health")

N_CHANNELS = 4
N_STEPS = 64


class CellEncoder(nn.Module):
    def __init__(self, d_model=96):
        super().__init__()
        self.conv1 = nn.Conv1d(N_CHANNELS, d_model, kernel_size=5, padding=2)
        self.conv2 = nn.Conv1d(d_model, d_model, kernel_size=5, padding=4, dilation=2)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x):  # x: [B*cells, channels, steps]
        h = F.gelu(self.conv1(x))
        h = h + F.gelu(self.conv2(h))
        h = h.mean(dim=-1)
        return self.norm(h)


class PackHealthModel(nn.Module):
    """Encodes every cell's window, mixes information across the cells of a module."""

    def __init__(self, d_model=96, n_heads=4, n_layers=2):
        super().__init__()
        self.n_channels = N_CHANNELS
        self.register_buffer("chan_mean", torch.tensor([3.7, 0.0, 25.0, 0.5]))
        self.register_buffer("chan_std", torch.tensor([0.25, 20.0, 8.0, 0.25]))
        self.encoder = CellEncoder(d_model)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, dim_feedforward=4 * d_model,
                                           dropout=0.0, batch_first=True, norm_first=True)
        self.mixer = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.head = nn.Sequential(nn.Linear(d_model, d_model), nn.GELU(), nn.Linear(d_model, 1))

    def forward(self, telemetry):
        assert telemetry.dim() == 4 and telemetry.shape[-1] == self.n_channels, \
            f"expected [windows, cells, steps, {self.n_channels}] telemetry"
        assert torch.isfinite(telemetry).all(), "non-finite telemetry values"
        assert (telemetry[..., 0] > 0).all(), "cell voltage must be positive"

        b, cells, steps, ch = telemetry.shape
        x = (telemetry - self.chan_mean) / self.chan_std
        x = x.reshape(b * cells, steps, ch).transpose(1, 2)
        h = self.encoder(x).reshape(b, cells, -1)
        h = self.mixer(h)
        return torch.sigmoid(self.head(h).squeeze(-1))


@dataclass
class Response:
    status: int
    body: dict = field(default_factory=dict)


class HealthService:
    def __init__(self, model, compiled=True):
        self.model = model.eval()
        self.runner = torch.compile(self.model) if compiled else self.model
        self.stats = {"ok": 0, "rejected": 0, "error": 0}

    @torch.no_grad()
    def handle(self, request):
        x = request["telemetry"]
        try:
            scores = self.runner(x)
        except AssertionError as e:
            self.stats["rejected"] += 1
            return Response(422, {"error": f"invalid telemetry: {e}", "module": request["module_id"]})
        except Exception as e:  # anything else is our fault: page on-call
            self.stats["error"] += 1
            log.error("internal error on module %s: %s", request["module_id"], str(e).splitlines()[0])
            return Response(500, {"error": "internal error", "module": request["module_id"]})
        self.stats["ok"] += 1
        worst = scores.min(dim=0).values
        return Response(200, {"module": request["module_id"],
                              "min_health": round(float(worst.min()), 4),
                              "weak_cells": int((worst < 0.2).sum())})


def synth_window(gen, n_windows, n_cells):
    t = torch.linspace(0, 2 * math.pi, N_STEPS)
    cur = 15.0 * torch.sin(t + torch.rand(n_windows, n_cells, 1, generator=gen) * 6.28)
    soc = 0.5 + 0.3 * torch.cos(t / 2).expand(n_windows, n_cells, N_STEPS)
    volt = 3.6 + 0.4 * soc - 0.002 * cur + 0.01 * torch.randn(n_windows, n_cells, N_STEPS, generator=gen)
    temp = 25.0 + 3.0 * torch.randn(n_windows, n_cells, 1, generator=gen) + 0.05 * cur.abs()
    return torch.stack([volt, cur, temp, soc], dim=-1)


def build_requests(seed=0):
    """Smoke-test traffic: healthy modules plus the malformed payloads seen in production."""
    gen = torch.Generator().manual_seed(seed)
    reqs = []
    for i in range(10):
        reqs.append({"module_id": f"M{i:03d}", "telemetry": synth_window(gen, 3, 12), "expect": 200})
    bad = synth_window(gen, 3, 12)
    bad[1, 4, 10:20, 2] = float("nan")          # temperature sensor dropout
    reqs.append({"module_id": "M100", "telemetry": bad, "expect": 422})
    bad = synth_window(gen, 3, 12)
    bad[0, 7, :, 0] = 0.0                         # voltage tap disconnected
    reqs.append({"module_id": "M101", "telemetry": bad, "expect": 422})
    bad = synth_window(gen, 3, 12)[..., :3]       # firmware that omits the soc channel
    reqs.append({"module_id": "M102", "telemetry": bad.contiguous(), "expect": 422})
    for i in range(4):
        reqs.append({"module_id": f"M{200 + i}", "telemetry": synth_window(gen, 3, 12), "expect": 200})
    bad = synth_window(gen, 3, 12)
    bad[2, 0, 5, 1] = float("inf")                # current ADC overflow
    reqs.append({"module_id": "M103", "telemetry": bad, "expect": 422})
    return reqs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--eager", action="store_true", help="serve without torch.compile")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")

    torch.manual_seed(0)
    model = PackHealthModel()
    service = HealthService(model, compiled=not args.eager)

    failures = []
    t0 = time.perf_counter()
    for req in build_requests():
        resp = service.handle(req)
        if resp.status != req["expect"]:
            failures.append((req["module_id"], req["expect"], resp.status, resp.body.get("error")))
    dt = time.perf_counter() - t0

    print(f"mode={'eager' if args.eager else 'compiled'} stats={service.stats} time={dt:.1f}s")
    if failures:
        print("SMOKE TEST FAILED:")
        for mid, want, got, err in failures:
            print(f"  {mid}: expected {want}, got {got} ({err})")
        raise SystemExit(1)
    print("SMOKE TEST PASSED")


if __name__ == "__main__":
    main()
