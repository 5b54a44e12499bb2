"""Minimal LoRA helpers (we vendor these instead of depending on peft in the training image)."""
import math

import torch
import torch.nn as nn


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r: int = 8, alpha: int = 16, dropout: float = 0.0):
        super().__init__()
        self.base = base
        self.r = r
        self.scaling = alpha / r
        self.lora_A = nn.Parameter(torch.empty(r, base.in_features))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        self.dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()

    def forward(self, x):
        return self.base(x) + (self.dropout(x) @ self.lora_A.t() @ self.lora_B.t()) * self.scaling


def inject_lora(model: nn.Module, target_modules=("q_proj", "v_proj"), r=8, alpha=16):
    replaced = 0
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            if child_name in target_modules and isinstance(child, nn.Linear):
                setattr(module, child_name, LoRALinear(child, r=r, alpha=alpha))
                replaced += 1
    return replaced


def prepare_for_lora_training(model, target_modules=("q_proj", "v_proj"), r=8, alpha=16):
    """Freeze the backbone, add adapters, make the model ready for adapter training
    (mirrors what peft.prepare_model_for_kbit_training + get_peft_model do for us)."""
    for p in model.parameters():
        p.requires_grad_(False)
    n = inject_lora(model, target_modules, r, alpha)
    if hasattr(model, "enable_input_require_grads"):
        model.enable_input_require_grads()
    model.config.use_cache = False
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in model.parameters())
    print(f"lora: wrapped {n} linears, trainable params {trainable} / {total} ({100 * trainable / total:.2f}%)")
    return model


def lora_state_dict(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items() if "lora_" in k}
