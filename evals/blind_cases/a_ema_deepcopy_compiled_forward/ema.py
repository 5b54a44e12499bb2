"""Exponential moving average of model weights (timm ModelEmaV2 style)."""
import copy

import torch


class ModelEma(torch.nn.Module):
    def __init__(self, model, decay=0.999, warmup_steps=0):
        super().__init__()
        # keep a separate copy of the weights for evaluation
        self.module = copy.deepcopy(model)
        self.module.eval()
        for p in self.module.parameters():
            p.requires_grad_(False)
        self.decay = decay
        self.warmup_steps = warmup_steps
        self.num_updates = 0

    def _decay(self):
        if self.num_updates < self.warmup_steps:
            return min(self.decay, (1 + self.num_updates) / (10 + self.num_updates))
        return self.decay

    @torch.no_grad()
    def update(self, model):
        self.num_updates += 1
        d = self._decay()
        ema_sd = self.module.state_dict()
        for k, v in model.state_dict().items():
            e = ema_sd[k]
            if e.dtype.is_floating_point:
                e.mul_(d).add_(v.detach(), alpha=1.0 - d)
            else:
                e.copy_(v)

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
