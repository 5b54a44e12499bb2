"""A latency benchmark that warms the compiled model up at one length and then times requests of other
lengths (blind A/B batch 14's pattern, written fresh): the one recompile torch expects lands on the first
timed request. Triage says so and how to move it into the warm-up (tests/test_triage.py)."""
import time

import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, vocab=1000, d=64, n=5):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.mix = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, d))
        self.out = nn.Linear(d, n)

    def forward(self, ids):
        h = self.mix(self.emb(ids))
        return self.out(h.mean(1))


torch.manual_seed(0)
model = torch.compile(Classifier().eval(), backend="eager")
warmup = torch.randint(0, 1000, (1, 32))
with torch.no_grad():
    for _ in range(3):
        model(warmup)
    times = []
    for i, n in enumerate([40, 17, 25, 33, 12]):
        t0 = time.perf_counter()
        model(torch.randint(0, 1000, (1, n)))
        times.append((time.perf_counter() - t0) * 1000)
slow = max(range(len(times)), key=times.__getitem__)
print(f"slowest request #{slow}")
