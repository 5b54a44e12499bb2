"""Training-time regularizers shared by our text classifiers."""
import torch
import torch.nn as nn
from torch.nn.modules.module import register_module_forward_hook


class ActivationRegularizer:
    """AR penalty (Merity et al., 2017): beta * mean(h^2) over the hidden activations.

    Collects the outputs of every activation module of the given types while the
    model is in training mode.  The penalty is switched on after a warm-up so that
    the early steps can move freely.
    """

    def __init__(self, beta: float, module_types=(nn.GELU,)):
        self.beta = beta
        self.module_types = tuple(module_types)
        self._acts = []
        self._handle = None

    @property
    def enabled(self) -> bool:
        return self._handle is not None

    def _collect(self, module, inputs, output):
        if isinstance(module, self.module_types) and module.training:
            self._acts.append(output)

    def enable(self):
        if self._handle is None:
            self._handle = register_module_forward_hook(self._collect)

    def disable(self):
        if self._handle is not None:
            self._handle.remove()
            self._handle = None
        self._acts.clear()

    def penalty(self) -> torch.Tensor:
        if not self._acts:
            return torch.zeros(())
        pen = torch.stack([a.float().pow(2).mean() for a in self._acts]).sum()
        self._acts.clear()
        return self.beta * pen
