"""A forecasting worker normalizes with a target mean/std estimated at start-up from an unseeded sample and kept
as float attributes; the cache dir is a fixed folder (os.environ.setdefault). torch.compile bakes the floats
into the graph, so each start compiles another graph: the warm start misses both caches."""
import os
import tempfile

os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(tempfile.gettempdir(), "forecast-worker-cache"))
import numpy as np
import torch


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 1)
        self.y_mean, self.y_std = 0.0, 1.0

    def forward(self, x):
        return self.fc(x) * self.y_std + self.y_mean


model = Head()
sample = np.random.default_rng().normal(60.0, 25.0, size=64)
model.y_mean, model.y_std = float(sample.mean()), float(sample.std())
out = torch.compile(model)(torch.randn(4, 8))
print(f"forecast mean {out.mean().item():.2f}")
