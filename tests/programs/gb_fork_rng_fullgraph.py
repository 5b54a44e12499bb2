"""A spectrogram augmentation made reproducible with torch.random.fork_rng + manual_seed inside a training step
compiled with fullgraph=True: fork_rng calls torch.get_rng_state, a function Dynamo skips, so the first step raises
(blind A/B batch 47). FULLGRAPH=0 compiles without fullgraph: the break splits the graph and the step runs."""
import os

import torch
import torch.nn as nn


class Augment(nn.Module):
    def __init__(self, seed=7):
        super().__init__()
        self.seed = seed

    def forward(self, x):
        with torch.random.fork_rng():
            torch.manual_seed(self.seed)
            keep = (torch.rand_like(x) > 0.1).to(x.dtype)
        return x * keep


model = nn.Sequential(nn.Flatten(), nn.Linear(64, 4))
aug = Augment()


def step(x, y):
    return nn.functional.cross_entropy(model(aug(x)), y)


fn = torch.compile(step, fullgraph=os.environ.get("FULLGRAPH", "1") == "1", backend="eager")
loss = fn(torch.randn(4, 8, 8), torch.randint(0, 4, (4,)))
print(f"loss {loss.item():.4f}")
