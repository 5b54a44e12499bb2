"""Training-data augmentation written in NumPy inside a compiled preprocessing function (jitter and
random crops for a small signal classifier). The script checks that seeding NumPy reproduces the
augmented batch, which holds eagerly; compiled, np.random draws from torch's generator."""
import numpy as np
import torch
import torch.nn as nn


@torch.compile(backend="eager")
def augment(signal):
    noise = np.random.normal(0.0, 0.05, size=signal.shape)       # jitter
    scale = np.random.uniform(0.8, 1.2, size=(signal.shape[0], 1))
    return (signal * scale + noise).astype(np.float32)


raw = np.sin(np.linspace(0, 20, 4 * 128)).reshape(4, 128)
np.random.seed(1234)
first = augment(raw)
np.random.seed(1234)
again = augment(raw)
if not np.array_equal(first, again):
    raise SystemExit("augmentation is not reproducible under np.random.seed: "
                     f"max difference {np.abs(first - again).max():.3g}")

model = nn.Sequential(nn.Conv1d(1, 8, 5), nn.ReLU(), nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(8, 2))
loss = nn.functional.cross_entropy(model(torch.from_numpy(first).unsqueeze(1)), torch.tensor([0, 1, 0, 1]))
loss.backward()
print("augmented batch reproducible; loss", round(loss.item(), 4))
