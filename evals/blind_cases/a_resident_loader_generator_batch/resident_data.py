"""Device-resident dataset: the whole (small) training set lives in one tensor and batches are
sliced out of it, which avoids DataLoader/collate overhead for tiny tabular models."""
import random

import torch


def batch_schedule(orders):
    """Yield (epoch, batch_index) following precomputed per-epoch permutations."""
    for epoch, order in enumerate(orders):
        for b in order:
            yield epoch, b


class ResidentDataset:
    def __init__(self, x, y, batch_size, epochs, seed=0):
        self.x, self.y, self.batch_size = x, y, batch_size
        self.num_batches = len(x) // batch_size
        rng = random.Random(seed)
        orders = []
        for _ in range(epochs):
            order = list(range(self.num_batches))
            rng.shuffle(order)
            orders.append(order)
        self._schedule = batch_schedule(orders)

    def next_batch(self):
        epoch, b = next(self._schedule)
        sl = slice(b * self.batch_size, (b + 1) * self.batch_size)
        return self.x[sl], self.y[sl], epoch, b
