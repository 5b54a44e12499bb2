"""Synthetic bearing-vibration dataset used by training and CI checks."""
import math

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

SAMPLE_RATE = 2048
WINDOW = 1024
CLASSES = ["healthy", "inner_race", "outer_race", "ball", "misalignment"]
FAULT_FREQS = [0.0, 162.0, 107.0, 141.0, 58.0]


def _synth_window(label: int, idx: int) -> np.ndarray:
    """Deterministic synthetic window for (label, idx)."""
    rng = np.random.RandomState(1000 * label + idx)
    t = np.arange(WINDOW) / SAMPLE_RATE
    shaft = 29.0 + rng.uniform(-1.0, 1.0)
    sig = 0.8 * np.sin(2 * math.pi * shaft * t + rng.uniform(0, 2 * math.pi))
    if label > 0:
        f = FAULT_FREQS[label]
        env = 0.5 * (1 + np.sin(2 * math.pi * f * t))
        sig += 0.4 * env * np.sin(2 * math.pi * 1200.0 * t)
    sig += 0.15 * rng.randn(WINDOW)
    return sig.astype(np.float32)


class VibrationWindows(Dataset):
    def __init__(self, split: str, n_per_class: int, augment: bool):
        offset = {"train": 0, "val": 5000, "test": 9000}[split]
        self.items = [(c, offset + i) for c in range(len(CLASSES)) for i in range(n_per_class)]
        self.augment = augment

    def __len__(self):
        return len(self.items)

    def _augment(self, x: np.ndarray) -> np.ndarray:
        # sensor gain drift and mounting-position jitter
        gain = np.random.uniform(0.9, 1.1)
        shift = np.random.randint(0, 32)
        return np.roll(x * gain, shift).astype(np.float32)

    def __getitem__(self, i):
        label, idx = self.items[i]
        x = _synth_window(label, idx)
        if self.augment:
            x = self._augment(x)
        return torch.from_numpy(x).unsqueeze(0), label


def make_loader(split: str, n_per_class: int, batch_size: int) -> DataLoader:
    augment = split != "test"
    ds = VibrationWindows(split, n_per_class, augment=augment)
    return DataLoader(ds, batch_size=batch_size, shuffle=(split == "train"), num_workers=0)
