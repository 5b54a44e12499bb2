"""A replay script configured by environment variables (os.environ at module level) that loads a package and
its weights before torch.compile is ever called: the weights file is missing, so it fails with
FileNotFoundError before any compile (blind A/B batch 38: the error was labelled "os.environ read inside a
compiled function" because nothing traced was taken to mean the whole file)."""
import os

import torch

WEIGHTS = os.environ.get("REPLAY_WEIGHTS", "no_such_weights_file.pt")
model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
model.load_state_dict(torch.load(WEIGHTS))
compiled = torch.compile(model, backend="aot_eager")
print(compiled(torch.randn(4, 8)).sum().item())
