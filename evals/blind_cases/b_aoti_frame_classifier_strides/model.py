import torch
import torch.nn as nn

IMAGE_SIZE = 96
NUM_CLASSES = 16
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


class Normalize(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        self.register_buffer("mean", torch.tensor(mean).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor(std).view(1, 3, 1, 1))

    def forward(self, x):
        return (x - self.mean) / self.std


def conv_bn(cin, cout, stride=1):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride, 1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = conv_bn(cin, cout, stride)
        self.conv2 = nn.Sequential(nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
        self.skip = None
        if stride != 1 or cin != cout:
            self.skip = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.conv2(self.conv1(x))
        s = x if self.skip is None else self.skip(x)
        return torch.relu(y + s)


class FrameClassifier(nn.Module):
    """Shelf-camera product classifier. Takes float RGB frames in [0, 1], NCHW."""

    def __init__(self, num_classes=NUM_CLASSES, width=32):
        super().__init__()
        self.normalize = Normalize(MEAN, STD)
        self.stem = conv_bn(3, width, stride=2)
        self.stages = nn.Sequential(
            Block(width, width, 1),
            Block(width, 2 * width, 2),
            Block(2 * width, 4 * width, 2),
            Block(4 * width, 4 * width, 1),
        )
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(4 * width, num_classes)

    def forward(self, frames):
        x = self.normalize(frames)
        x = self.stages(self.stem(x))
        return self.fc(self.pool(x).flatten(1))


def product_frames(n, seed):
    """Synthetic shelf frames as the camera SDK returns them: uint8 RGB, (N, H, W, 3).
    Each product class has its own colour and stripe pattern."""
    g = torch.Generator().manual_seed(seed)
    palette = torch.randint(30, 226, (NUM_CLASSES, 3), generator=torch.Generator().manual_seed(1234))
    labels = torch.randint(0, NUM_CLASSES, (n,), generator=g)
    yy = torch.arange(IMAGE_SIZE).view(1, -1, 1)
    period = 4 + (labels % 4) * 3
    stripes = ((yy // period.view(-1, 1, 1)) % 2).float()                    # (n, H, 1)
    img = palette[labels].view(n, 1, 1, 3).float() * (0.75 + 0.25 * stripes[..., None])
    img = img.expand(n, IMAGE_SIZE, IMAGE_SIZE, 3)
    img = img + torch.randn(n, IMAGE_SIZE, IMAGE_SIZE, 3, generator=g) * 12
    return img.clamp(0, 255).to(torch.uint8).numpy(), labels


def build_model(seed=0, steps=40):
    """Stand-in for loading the trained checkpoint: a short fit on synthetic frames."""
    torch.manual_seed(seed)
    model = FrameClassifier()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.train()
    for step in range(steps):
        frames, labels = product_frames(32, seed=10_000 + step)
        x = torch.from_numpy(frames).permute(0, 3, 1, 2).float() / 255.0
        loss = nn.functional.cross_entropy(model(x), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.eval()
