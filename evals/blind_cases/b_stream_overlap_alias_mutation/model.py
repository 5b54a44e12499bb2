"""Small causal conv denoiser used by the streaming front-end."""
import torch
import torch.nn as nn


class ConvBlock(nn.Module):
    def __init__(self, channels: int, kernel: int, dilation: int):
        super().__init__()
        self.pad = (kernel - 1) * dilation
        self.conv = nn.Conv1d(channels, channels, kernel, dilation=dilation)
        self.norm = nn.GroupNorm(1, channels)
        self.act = nn.GELU()

    def forward(self, x):
        y = nn.functional.pad(x, (self.pad, 0))
        return x + self.act(self.norm(self.conv(y)))


class StreamingDenoiser(nn.Module):
    """Predicts a per-bin gain for the newest `hop` frames given a lookback window.

    forward(chunk, window):
        chunk:  (hop, B, C)   newest frames, time-major as they come off the ring buffer
        window: (W, B, C)     lookback window, whose last `hop` frames are the chunk
    returns (hop, B, C)
    """

    def __init__(self, channels: int = 64, hidden: int = 96, layers: int = 4, kernel: int = 3):
        super().__init__()
        # in-place to keep peak memory down on the edge box
        self.pre_act = nn.LeakyReLU(0.1, inplace=True)
        self.inp = nn.Conv1d(channels, hidden, 1)
        self.blocks = nn.Sequential(*[ConvBlock(hidden, kernel, 2 ** i) for i in range(layers)])
        self.gain = nn.Conv1d(hidden, channels, 1)

    def forward(self, chunk: torch.Tensor, window: torch.Tensor) -> torch.Tensor:
        hop = chunk.shape[0]
        self.pre_act(chunk)
        x = window.permute(1, 2, 0)                      # (B, C, W)
        h = self.blocks(self.inp(x))
        g = torch.sigmoid(self.gain(h[..., -hop:]))      # (B, C, hop)
        return chunk * g.permute(2, 0, 1)
