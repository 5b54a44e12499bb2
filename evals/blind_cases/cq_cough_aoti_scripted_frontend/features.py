"""Feature front-end shared with the on-device C++ app (TorchScript)."""
import torch
import torch.nn as nn


class LogMelNormalizer(nn.Module):
    """Per-band standardisation of log-mel frames with corpus statistics.

    Input:  (batch, n_mels, frames) log-mel energies
    Output: (batch, n_mels, frames) standardised, clipped features
    """

    def __init__(self, n_mels: int = 40, clip: float = 6.0, floor_db: float = -80.0):
        super().__init__()
        self.clip = clip
        self.floor_db = floor_db
        self.register_buffer("mean", torch.zeros(n_mels))
        self.register_buffer("std", torch.ones(n_mels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.clamp(x, min=self.floor_db)
        x = (x - self.mean[None, :, None]) / self.std[None, :, None]
        return torch.clamp(x, -self.clip, self.clip)


@torch.no_grad()
def fit_normalizer(frontend: nn.Module, feats: torch.Tensor) -> None:
    """Set the corpus statistics from a batch of (batch, n_mels, frames) features."""
    flat = feats.transpose(0, 1).reshape(feats.shape[1], -1)
    frontend.mean.copy_(flat.mean(dim=1))
    frontend.std.copy_(flat.std(dim=1).clamp_min(1e-3))


def build_frontend(n_mels: int = 40) -> nn.Module:
    # the same module object is saved with torch.jit.save for the mobile app
    return torch.jit.script(LogMelNormalizer(n_mels))
