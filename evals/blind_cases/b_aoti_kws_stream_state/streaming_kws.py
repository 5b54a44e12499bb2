"""Streaming keyword-spotting model (causal, chunked).

The model consumes log-mel chunks of shape (1, N_MELS, CHUNK) and keeps all
look-back context inside registered buffers so that a caller can feed a
stream chunk by chunk.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

N_MELS = 40
CHUNK = 16
KEYWORDS = ["_silence_", "_unknown_", "yes", "no", "up", "down",
            "left", "right", "on", "off", "stop", "go"]


class OnlineCMVN(nn.Module):
    """Exponential running mean/var normalisation of the input features."""

    def __init__(self, n_feats: int, momentum: float = 0.05):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("run_mean", torch.zeros(1, n_feats, 1))
        self.register_buffer("run_var", torch.ones(1, n_feats, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m = x.mean(dim=-1, keepdim=True)
        v = x.var(dim=-1, keepdim=True, unbiased=False)
        new_mean = (1 - self.momentum) * self.run_mean + self.momentum * m
        new_var = (1 - self.momentum) * self.run_var + self.momentum * v
        self.run_mean.copy_(new_mean)
        self.run_var.copy_(new_var)
        return (x - new_mean) * torch.rsqrt(new_var + 1e-5)


class CausalConvBlock(nn.Module):
    """Depthwise causal conv + pointwise projection with a look-back cache."""

    def __init__(self, channels: int, kernel: int, dilation: int):
        super().__init__()
        self.ctx = (kernel - 1) * dilation
        self.dw = nn.Conv1d(channels, channels, kernel, dilation=dilation, groups=channels)
        self.pw = nn.Conv1d(channels, channels, 1)
        self.norm = nn.GroupNorm(1, channels)
        self.register_buffer("cache", torch.zeros(1, channels, self.ctx))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        full = torch.cat([self.cache, x], dim=-1)
        self.cache.copy_(full[..., -self.ctx:])
        y = self.dw(full)
        y = self.pw(F.gelu(self.norm(y)))
        return x + y


class StreamingKWS(nn.Module):
    def __init__(self, channels: int = 64, n_blocks: int = 4, kernel: int = 5):
        super().__init__()
        self.cmvn = OnlineCMVN(N_MELS)
        self.inp = nn.Conv1d(N_MELS, channels, 1)
        self.blocks = nn.ModuleList(
            [CausalConvBlock(channels, kernel, dilation=2 ** i) for i in range(n_blocks)]
        )
        self.head = nn.Conv1d(channels, len(KEYWORDS), 1)

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        x = self.inp(self.cmvn(feats))
        for blk in self.blocks:
            x = blk(x)
        return self.head(x).transpose(1, 2)  # (1, CHUNK, n_keywords)

    @torch.no_grad()
    def reset_state(self) -> None:
        """Start a new audio stream."""
        self.cmvn.run_mean.zero_()
        self.cmvn.run_var.fill_(1.0)
        for blk in self.blocks:
            blk.cache.zero_()
