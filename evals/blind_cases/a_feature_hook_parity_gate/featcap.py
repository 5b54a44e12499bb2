"""Intermediate-feature capture used by the distillation trainer and by CI.

Registers forward hooks on named submodules and stores their outputs in a dict
that the caller reads after the forward pass.
"""
from contextlib import contextmanager

import torch


class FeatureCapture:
    def __init__(self, model, layer_names, detach=True):
        self.model = model
        self.layer_names = list(layer_names)
        self.detach = detach
        self.store = {}
        self._handles = []
        modules = dict(model.named_modules())
        missing = [n for n in self.layer_names if n not in modules]
        if missing:
            raise KeyError(f"unknown layers: {missing}")
        for name in self.layer_names:
            self._handles.append(modules[name].register_forward_hook(self._make_hook(name)))

    def _make_hook(self, name):
        def hook(module, inputs, output):
            # dynamo runs hooks on fake tensors while tracing; only keep real outputs
            if torch.compiler.is_compiling():
                return
            if isinstance(output, tuple):
                output = output[0]
            self.store[name] = output.detach() if self.detach else output
        return hook

    @contextmanager
    def capture(self):
        self.store.clear()
        try:
            yield self.store
        finally:
            pass

    def remove(self):
        for h in self._handles:
            h.remove()
        self._handles.clear()
