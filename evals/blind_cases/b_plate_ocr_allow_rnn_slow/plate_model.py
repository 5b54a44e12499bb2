import torch
import torch.nn as nn

CHARSET = "0123456789ABCDEFGHJKLMNPRSTUVWXYZ"   # index 0 is the CTC blank
NUM_CLASSES = len(CHARSET) + 1


def conv_bn(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class PlateRecognizer(nn.Module):
    """CRNN: conv feature extractor -> BiLSTM over the width axis -> per-column CTC logits."""

    def __init__(self, hidden=128):
        super().__init__()
        self.features = nn.Sequential(
            conv_bn(1, 32), nn.MaxPool2d(2),           # 32x48 -> 16x24
            conv_bn(32, 64), nn.MaxPool2d(2),          # -> 8x12
            conv_bn(64, 96), conv_bn(96, 96), nn.MaxPool2d((2, 1)),   # -> 4x12
            conv_bn(96, 128), nn.MaxPool2d((4, 1)),    # -> 1x12
        )
        self.proj = nn.Linear(128, hidden)
        self.rnn = nn.LSTM(hidden, hidden, num_layers=1, bidirectional=True, batch_first=True)
        self.head = nn.Sequential(nn.LayerNorm(2 * hidden), nn.Linear(2 * hidden, NUM_CLASSES))

    def forward(self, images):
        f = self.features(images)                  # B, C, 1, T
        f = f.squeeze(2).transpose(1, 2)           # B, T, C
        h, _ = self.rnn(self.proj(f))
        return self.head(h).log_softmax(-1)        # B, T, K


def greedy_decode(log_probs):
    out = []
    for row in log_probs.argmax(-1).tolist():
        chars, prev = [], 0
        for k in row:
            if k != prev and k != 0:
                chars.append(CHARSET[k - 1])
            prev = k
        out.append("".join(chars))
    return out
