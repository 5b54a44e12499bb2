"""A gate against stored reference scores with a tolerance too tight for float32 (it fails without
torch.compile too, by ~1e-7), while the compiled model is really wrong (Inductor's injected relu bug). Two
runs without torch.compile print the same numbers, so the 'results vary' step must not be given (review of
batch 21's rule)."""
import sys

import torch
import torch.nn as nn

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)).eval()
x = torch.randn(32, 8)
with torch.no_grad():
    reference = model.double()(x.double()).float()     # the "stored" scores
    model.float()
    scores = torch.compile(model)(x)
diff = (scores - reference).abs().max().item()
print(f"max |score - reference| = {diff:.3e}")
sys.exit(0 if diff < 1e-9 else "score check FAILED: scores differ from the stored reference")
