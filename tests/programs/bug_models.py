"""Model targets for `accuracy` (file.py:factory)."""
import torch
import torch._inductor.config as inductor_config


class Small(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.log1p(self.lin(x).abs()) * 2, torch.relu(x).sum()


def clean():
    torch.manual_seed(0)
    return Small().eval(), (torch.randn(4, 8),)


def log1p_bug():
    """Inductor CPU miscompiles log1p (PyTorch's own test hook)."""
    inductor_config.cpp.inject_log1p_bug_TESTING_ONLY = "accuracy"
    torch.manual_seed(0)
    return Small().eval(), (torch.randn(4, 8),)


class Drop(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.dropout(x, p=0.5, training=True) * 3


def dropout():
    """Random numbers: compiled dropout differs from eager unless fallback_random=True."""
    return Drop(), (torch.ones(64, 64),)
