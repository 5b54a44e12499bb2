"""Lightweight per-stage wall-clock accounting used by the trainer dashboards."""
import time
from collections import defaultdict
from contextlib import contextmanager


class StageTimer:
    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self.totals = defaultdict(float)
        self.counts = defaultdict(int)

    @contextmanager
    def __call__(self, name: str):
        if not self.enabled:
            yield
            return
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.totals[name] += time.perf_counter() - t0
            self.counts[name] += 1

    def summary(self):
        return {k: 1000.0 * v / max(self.counts[k], 1) for k, v in sorted(self.totals.items())}

    def reset(self):
        self.totals.clear()
        self.counts.clear()


# process-wide timer, switched on by --profile-stages
TIMER = StageTimer(enabled=False)
