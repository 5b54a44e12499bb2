"""Shared training helpers (config, data, compile wrapper)."""
from dataclasses import dataclass, field

import torch


@dataclass
class PretrainConfig:
    channels: int = 8
    seq_len: int = 256
    batch_size: int = 16
    steps_per_epoch: int = 20
    epochs: int = 3
    lr: float = 1e-3
    weight_decay: float = 0.05
    # curriculum: epoch -> fraction of patches hidden from the encoder
    mask_schedule: dict = field(default_factory=lambda: {0: 0.25, 2: 0.5})
    compile: bool = False
    compile_options: dict = field(
        default_factory=lambda: {"guard_filter_fn": torch.compiler.skip_guard_on_all_nn_modules_unsafe}
    )


def maybe_compile(model, cfg: PretrainConfig):
    if not cfg.compile:
        return model
    return torch.compile(model, options=cfg.compile_options)


def sensor_batches(cfg: PretrainConfig, n_batches: int, seed: int):
    """Synthetic stand-in for the plant-sensor loader: mixtures of drifting sinusoids plus noise.

    Masking noise is drawn here (not inside the model) so runs are reproducible across workers.
    """
    g = torch.Generator().manual_seed(seed)
    t = torch.linspace(0, 1, cfg.seq_len)
    n_patches = cfg.seq_len // 16
    out = []
    for _ in range(n_batches):
        freq = torch.rand(cfg.batch_size, cfg.channels, 1, generator=g) * 20 + 1
        phase = torch.rand(cfg.batch_size, cfg.channels, 1, generator=g) * 6.28
        drift = torch.randn(cfg.batch_size, cfg.channels, 1, generator=g) * 0.5
        x = torch.sin(freq * t * 6.28 + phase) + drift * t
        x = x + 0.1 * torch.randn(cfg.batch_size, cfg.channels, cfg.seq_len, generator=g)
        noise = torch.rand(cfg.batch_size * cfg.channels, n_patches, generator=g)
        out.append((x, noise))
    return out
