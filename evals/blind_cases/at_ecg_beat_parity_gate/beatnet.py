"""BeatNet: 1-D CNN + attention-pooling classifier for single ECG beats (AAMI 5 classes)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvBlock(nn.Module):
    def __init__(self, c_in, c_out, k, stride=1):
        super().__init__()
        self.conv = nn.Conv1d(c_in, c_out, k, stride=stride, padding=k // 2, bias=False)
        self.bn = nn.BatchNorm1d(c_out)

    def forward(self, x):
        return F.gelu(self.bn(self.conv(x)))


class AttnPool(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.score = nn.Linear(dim, 1)

    def forward(self, h):  # h: (B, T, D)
        w = torch.softmax(self.score(h).squeeze(-1), dim=-1)
        return torch.einsum("bt,btd->bd", w, h)


class BeatNet(nn.Module):
    def __init__(self, n_leads=2, n_classes=5, width=64, head_dropout=0.2):
        super().__init__()
        self.stem = ConvBlock(n_leads, width, 7, stride=2)
        self.body = nn.Sequential(
            ConvBlock(width, width, 5),
            ConvBlock(width, 2 * width, 5, stride=2),
            ConvBlock(2 * width, 2 * width, 3),
            ConvBlock(2 * width, 2 * width, 3),
        )
        self.pool = AttnPool(2 * width)
        self.head_dropout = head_dropout
        self.fc1 = nn.Linear(2 * width + 2, width)
        self.fc2 = nn.Linear(width, n_classes)

    def forward(self, beats, rr):
        # beats: (B, leads, 256) samples around the R peak; rr: (B, 2) pre/post RR intervals in s
        h = self.body(self.stem(beats))
        h = self.pool(h.transpose(1, 2))
        h = torch.cat([h, (rr - 0.8) / 0.2], dim=-1)
        h = F.gelu(self.fc1(h))
        h = F.dropout(h, self.head_dropout)
        return self.fc2(h)
