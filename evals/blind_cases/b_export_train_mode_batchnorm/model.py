import torch
import torch.nn as nn


class ConvBNAct(nn.Sequential):
    def __init__(self, cin, cout, stride=1):
        super().__init__(
            nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
        )


class ResidualBlock(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = ConvBNAct(cin, cout, stride)
        self.conv2 = nn.Sequential(nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout))
        self.skip = (
            nn.Identity()
            if stride == 1 and cin == cout
            else nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))
        )

    def forward(self, x):
        return torch.relu(self.conv2(self.conv1(x)) + self.skip(x))


class DefectClassifier(nn.Module):
    """Small ResNet used for the surface-defect inspection line."""

    def __init__(self, num_classes=6, width=32, dropout=0.2):
        super().__init__()
        self.stem = ConvBNAct(1, width)
        self.stage1 = ResidualBlock(width, width)
        self.stage2 = ResidualBlock(width, 2 * width, stride=2)
        self.stage3 = ResidualBlock(2 * width, 4 * width, stride=2)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(dropout), nn.Linear(4 * width, num_classes))

    def forward(self, x):
        x = self.stem(x)
        x = self.stage3(self.stage2(self.stage1(x)))
        return self.head(self.pool(x))
