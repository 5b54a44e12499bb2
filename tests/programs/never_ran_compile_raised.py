"""A control policy compiled at start-up inside a try/except that logs a warning and falls back to eager: the
call passes `mode` and `options` together, which torch.compile rejects, so nothing is ever compiled. --no-compile
turns compile off. FIXED=1 passes the mode's settings merged into options."""
import argparse
import logging
import os

import torch
import torch.nn as nn

logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
log = logging.getLogger("policy")


def maybe_compile(fn, mode, options):
    try:
        if os.environ.get("FIXED") == "1":
            from torch._inductor import list_mode_options
            return torch.compile(fn, options={**list_mode_options(mode), **options})
        return torch.compile(fn, mode=mode, options=options)
    except Exception as e:
        log.warning("could not compile the policy: %s", e)
        return fn


ap = argparse.ArgumentParser()
ap.add_argument("--no-compile", action="store_true")
args = ap.parse_args()
policy = nn.Sequential(nn.Linear(12, 32), nn.Tanh(), nn.Linear(32, 4)).eval()
act = policy if args.no_compile else maybe_compile(policy, "reduce-overhead", {"triton.cudagraphs": False})
with torch.no_grad():
    for _ in range(3):
        out = act(torch.randn(8, 12))
print("action mean", round(out.mean().item(), 4))
