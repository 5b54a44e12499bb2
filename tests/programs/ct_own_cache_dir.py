"""A worker that gives itself a throwaway Inductor cache dir on every start (blind A/B batch 15's ranker
worker, written fresh): mkdtemp() into TORCHINDUCTOR_CACHE_DIR before importing torch, deleted at exit. A
second start reuses nothing; compile-time says so and names the line (tests/test_compile_time.py)."""
import atexit
import os
import shutil
import tempfile

cache_dir = tempfile.mkdtemp(prefix="worker-inductor-")
os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
atexit.register(shutil.rmtree, cache_dir, ignore_errors=True)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

model = torch.compile(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).eval())
with torch.inference_mode():
    print(tuple(model(torch.randn(8, 16)).shape))
