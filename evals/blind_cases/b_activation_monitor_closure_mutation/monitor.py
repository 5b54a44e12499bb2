"""Lightweight activation monitoring: per-block RMS and call counts for dashboards.

Hooks are avoided on purpose (they cost a Python call per module even when
monitoring is off); instead the selected blocks get a thin forward wrapper.
"""
import torch


def attach_activation_monitor(model, block_names):
    """Wrap the forward of each named submodule; returns (calls, rms) dicts keyed by name."""
    calls = {name: 0 for name in block_names}
    rms = {}

    class _Tap:
        __slots__ = ("name",)

        def __init__(self, name):
            self.name = name

        def __call__(self, out):
            calls[self.name] += 1
            rms[self.name] = out.detach().float().pow(2).mean().sqrt()
            return out

    modules = dict(model.named_modules())
    for name in block_names:
        mod = modules[name]
        inner = mod.forward

        def forward(*args, _inner=inner, _name=name, **kwargs):
            return _Tap(_name)(_inner(*args, **kwargs))

        mod.forward = forward
    return calls, rms


def summarize(calls, rms):
    parts = []
    for name, n in calls.items():
        v = rms.get(name)
        parts.append(f"{name}: n={n} rms={'-' if v is None else f'{float(v):.3f}'}")
    return " | ".join(parts)
