"""Train the vibration-state filter, export it, and run the serving latency gate.

Pipeline (runs nightly in CI):
  1. short fine-tune of the recurrent filter on synthetic sensor traces
  2. torch.export the model and save the .pt2 artifact the serving pod loads
  3. reload the artifact like the pod does and compare accuracy + latency
     against the eager model; fail the job if the artifact regresses.
"""
import os
import tempfile
import time

import torch
import torch.nn as nn
from torch.nn.utils import parametrize
from torch.nn.utils.parametrizations import orthogonal

torch.manual_seed(0)

SENSORS = 24          # accelerometer + strain channels per machine
STATE = 128           # latent state size of the filter
WINDOW = 96           # samples per scoring window
BATCH = 16            # machines scored together by the pod
TRAIN_STEPS = 30
LATENCY_BUDGET = 1.5  # artifact may be at most 1.5x slower than eager


class StateFilter(nn.Module):
    """Learned Kalman-style filter: propagate, predict, correct."""

    def __init__(self, n_sensors: int, n_state: int):
        super().__init__()
        self.n_state = n_state
        self.propagator = nn.Linear(n_state, n_state, bias=False)
        self.decoder = nn.Linear(n_state, n_sensors)
        self.encoder = nn.Sequential(
            nn.Linear(n_sensors, n_state),
            nn.Tanh(),
            nn.Linear(n_state, n_state),
        )
        # keep the state transition norm-preserving so long windows stay stable
        orthogonal(self.propagator)
        self.head = nn.Sequential(nn.LayerNorm(n_state), nn.Linear(n_state, 3))

    def forward(self, readings: torch.Tensor) -> torch.Tensor:
        # readings: (batch, time, sensors)
        x = readings.new_zeros(readings.shape[0], self.n_state)
        for y in readings.unbind(-2):
            x = self.propagator(x)
            yhat = self.decoder(x)
            x = x + self.encoder(yhat - y)
        return self.head(x)


def synthetic_batch(batch: int, gen: torch.Generator):
    t = torch.arange(WINDOW, dtype=torch.float32)
    freq = torch.rand(batch, 1, SENSORS, generator=gen) * 0.3 + 0.05
    phase = torch.rand(batch, 1, SENSORS, generator=gen) * 6.28
    amp = torch.rand(batch, 1, SENSORS, generator=gen) + 0.5
    sig = amp * torch.sin(freq * t[None, :, None] + phase)
    sig = sig + 0.1 * torch.randn(sig.shape, generator=gen)
    # three condition classes: nominal / imbalance / bearing wear
    label = torch.randint(0, 3, (batch,), generator=gen)
    sig = sig + (label == 1).float()[:, None, None] * 0.4 * torch.sin(2.0 * freq * t[None, :, None])
    sig = sig + (label == 2).float()[:, None, None] * 0.2 * torch.randn(sig.shape, generator=gen)
    return sig, label


def train(model: nn.Module) -> None:
    gen = torch.Generator().manual_seed(1)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
    model.train()
    for step in range(TRAIN_STEPS):
        x, y = synthetic_batch(BATCH, gen)
        # the orthogonal map is expensive; compute it once per step, not once per sample
        with parametrize.cached():
            loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 10 == 0 or step == TRAIN_STEPS - 1:
            print(f"step {step:3d}  loss {loss.item():.4f}")
    model.eval()


def export_artifact(model: nn.Module, example: torch.Tensor, path: str) -> None:
    batch = torch.export.Dim("batch", min=1, max=256)
    ep = torch.export.export(model, (example,), dynamic_shapes={"readings": {0: batch}})
    torch.export.save(ep, path)


def load_for_serving(path: str) -> nn.Module:
    return torch.export.load(path).module()


def score(fn, x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad(), parametrize.cached():
        return fn(x)


def bench(fn, x: torch.Tensor, reps: int = 10) -> float:
    score(fn, x)
    score(fn, x)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        score(fn, x)
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2]


def main() -> int:
    print(f"torch {torch.__version__}, threads={torch.get_num_threads()}")
    model = StateFilter(SENSORS, STATE)
    t0 = time.perf_counter()
    train(model)
    print(f"train: {time.perf_counter() - t0:.1f}s")

    gen = torch.Generator().manual_seed(7)
    x_eval, y_eval = synthetic_batch(BATCH, gen)

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "state_filter.pt2")
        t0 = time.perf_counter()
        export_artifact(model, x_eval, path)
        print(f"export+save: {time.perf_counter() - t0:.1f}s  ({os.path.getsize(path) / 1e6:.2f} MB)")
        served = load_for_serving(path)

    ref = score(model, x_eval)
    out = score(served, x_eval)
    max_diff = (ref - out).abs().max().item()
    acc_eager = (ref.argmax(-1) == y_eval).float().mean().item()
    acc_served = (out.argmax(-1) == y_eval).float().mean().item()
    print(f"max |eager - artifact| = {max_diff:.2e}; acc eager {acc_eager:.3f} artifact {acc_served:.3f}")

    # odd batch sizes hit the pod all the time
    x_small = x_eval[:5]
    small_diff = (score(model, x_small) - score(served, x_small)).abs().max().item()
    print(f"batch=5 max diff = {small_diff:.2e}")

    t_eager = bench(model, x_eval)
    t_served = bench(served, x_eval)
    ratio = t_served / t_eager
    print(f"latency per window batch: eager {t_eager * 1e3:.2f} ms, artifact {t_served * 1e3:.2f} ms  ({ratio:.2f}x)")

    ok = True
    if max_diff > 1e-4 or small_diff > 1e-4:
        print("GATE FAIL: artifact output differs from eager")
        ok = False
    if ratio > LATENCY_BUDGET:
        print(f"GATE FAIL: artifact is {ratio:.2f}x slower than eager (budget {LATENCY_BUDGET}x)")
        ok = False
    if ok:
        print("GATE PASS")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
