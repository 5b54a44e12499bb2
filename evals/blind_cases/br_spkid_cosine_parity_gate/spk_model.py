"""Speaker-ID model: small TDNN-style encoder + cosine (normalized prototype) head."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TDNNEncoder(nn.Module):
    def __init__(self, n_mels=40, channels=128, emb_dim=96):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Conv1d(n_mels, channels, 5, padding=2), nn.ReLU(), nn.BatchNorm1d(channels),
            nn.Conv1d(channels, channels, 3, dilation=2, padding=2), nn.ReLU(), nn.BatchNorm1d(channels),
            nn.Conv1d(channels, channels, 3, dilation=3, padding=3), nn.ReLU(), nn.BatchNorm1d(channels),
        )
        self.proj = nn.Linear(2 * channels, emb_dim)

    def forward(self, feats):                      # feats: (B, T, n_mels)
        h = self.layers(feats.transpose(1, 2))      # (B, C, T)
        stats = torch.cat([h.mean(-1), h.std(-1)], dim=1)
        return self.proj(stats)


class CosineHead(nn.Module):
    """Scaled cosine classifier. At inference the prototypes are normalized once."""

    def __init__(self, emb_dim, n_classes, scale=30.0):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_classes, emb_dim) * 0.05)
        self.scale = scale
        self._proto = None

    def train(self, mode=True):
        if mode:
            self._proto = None
        return super().train(mode)

    def prototypes(self):
        if self.training:
            return F.normalize(self.weight, dim=1)
        if self._proto is None:
            self._proto = F.normalize(self.weight.detach(), dim=1)
        return self._proto

    def forward(self, emb):
        return self.scale * F.normalize(emb, dim=1) @ self.prototypes().t()


class SpeakerID(nn.Module):
    def __init__(self, n_mels=40, n_speakers=64, emb_dim=96):
        super().__init__()
        self.encoder = TDNNEncoder(n_mels=n_mels, emb_dim=emb_dim)
        self.head = CosineHead(emb_dim, n_speakers)

    def forward(self, feats):
        return self.head(self.encoder(feats))


def build_model(cfg):
    return SpeakerID(n_mels=cfg["n_mels"], n_speakers=cfg["n_speakers"], emb_dim=cfg["emb_dim"])
