"""Lightweight training telemetry shared by our training scripts."""
import collections
import math

import torch

_HISTORY = collections.defaultdict(list)


@torch.compiler.disable
def record_activation_stats(name, t):
    """Keep host-side running stats of an activation (mean/std/fraction of zeros)."""
    t = t.detach()
    _HISTORY[name + "/mean"].append(t.mean().item())
    _HISTORY[name + "/std"].append(t.std().item())
    _HISTORY[name + "/zero_frac"].append((t == 0).float().mean().item())


def summary(last=1):
    out = {}
    for k, v in _HISTORY.items():
        vals = v[-last:]
        out[k] = sum(vals) / max(len(vals), 1)
    return out


def fmt(d):
    return "  ".join(f"{k}={v:.3f}" for k, v in sorted(d.items()) if not math.isnan(v))
