"""A model server that loads one saved ExportedProgram per locale on a thread pool, as a startup speed-up:
torch.export.load keeps its deserializer in one process-wide variable, and two loads that overlap fail with
"_CURRENT_DESERIALIZER is already set" (blind A/B batch 46; pytorch/pytorch#195099). FIXED=1 takes one lock
around torch.export.load, and every load succeeds."""
import os
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor

import torch
import torch.nn as nn

LOCALES = ["en", "de", "fr", "es", "it", "nl"]
_LOAD_LOCK = threading.Lock()


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 4))

    def forward(self, x):
        return self.net(x).softmax(-1)


def load(path, barrier):
    barrier.wait()
    if os.environ.get("FIXED"):
        with _LOAD_LOCK:
            ep = torch.export.load(path)
    else:
        ep = torch.export.load(path)
    return ep.module()


with tempfile.TemporaryDirectory() as tmp:
    paths = []
    for i, loc in enumerate(LOCALES):
        torch.manual_seed(i)
        paths.append(os.path.join(tmp, f"{loc}.pt2"))
        torch.export.save(torch.export.export(Scorer().eval(), (torch.randn(2, 16),)), paths[-1])
    for round_ in range(3):
        barrier = threading.Barrier(len(paths))
        with ThreadPoolExecutor(len(paths)) as pool:
            models = list(pool.map(load, paths, [barrier] * len(paths)))
        print(f"round {round_}: loaded {len(models)} models")
    print("server ready:", [m(torch.randn(2, 16)).argmax(-1).tolist() for m in models])
