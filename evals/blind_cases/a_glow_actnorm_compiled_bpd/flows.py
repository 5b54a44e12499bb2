import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class ActNorm(nn.Module):
    """Per-channel affine layer with data-dependent initialisation (Kingma & Dhariwal, 2018)."""

    def __init__(self, channels):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(1, channels, 1, 1))
        self.logs = nn.Parameter(torch.zeros(1, channels, 1, 1))
        self.register_buffer("initialized", torch.tensor(0, dtype=torch.uint8))

    @torch.compiler.assume_constant_result
    def needs_init(self):
        return self.initialized.item() == 0

    @torch.no_grad()
    def initialize(self, x):
        mean = x.mean(dim=(0, 2, 3), keepdim=True)
        std = x.std(dim=(0, 2, 3), keepdim=True)
        self.loc.copy_(-mean)
        self.logs.copy_(torch.log(1.0 / (std + 1e-6)))
        self.initialized.fill_(1)

    def forward(self, x):
        if self.training and self.needs_init():
            self.initialize(x)
        y = (x + self.loc) * torch.exp(self.logs)
        logdet = x.shape[2] * x.shape[3] * self.logs.sum()
        return y, logdet

    def reverse(self, y):
        return y * torch.exp(-self.logs) - self.loc

class InvConv1x1(nn.Module):
    """Invertible 1x1 convolution, LU-parameterised."""

    def __init__(self, channels):
        super().__init__()
        w = torch.linalg.qr(torch.randn(channels, channels))[0]
        p, l, u = torch.linalg.lu(w)
        s = torch.diagonal(u)
        self.register_buffer("p", p)
        self.register_buffer("sign_s", torch.sign(s))
        self.register_buffer("l_mask", torch.tril(torch.ones(channels, channels), -1))
        self.register_buffer("eye", torch.eye(channels))
        self.l = nn.Parameter(l)
        self.log_s = nn.Parameter(torch.log(torch.abs(s)))
        self.u = nn.Parameter(torch.triu(u, 1))

    def weight(self):
        l = self.l * self.l_mask + self.eye
        u = self.u * self.l_mask.T + torch.diag(self.sign_s * torch.exp(self.log_s))
        return self.p @ l @ u

    def forward(self, x):
        w = self.weight()
        y = F.conv2d(x, w[:, :, None, None])
        return y, x.shape[2] * x.shape[3] * self.log_s.sum()

    def reverse(self, y):
        w_inv = torch.linalg.inv(self.weight())
        return F.conv2d(y, w_inv[:, :, None, None])

class AffineCoupling(nn.Module):
    def __init__(self, channels, hidden):
        super().__init__()
        half = channels // 2
        self.net = nn.Sequential(
            nn.Conv2d(half, hidden, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(hidden, hidden, 1),
            nn.ReLU(),
            nn.Conv2d(hidden, 2 * (channels - half), 3, padding=1),
        )
        nn.init.zeros_(self.net[-1].weight)
        nn.init.zeros_(self.net[-1].bias)

    def _params(self, xa):
        h = self.net(xa)
        shift, raw = h[:, 0::2], h[:, 1::2]
        scale = torch.sigmoid(raw + 2.0)
        return shift, scale

    def forward(self, x):
        xa, xb = x.chunk(2, dim=1)
        shift, scale = self._params(xa)
        yb = (xb + shift) * scale
        logdet = torch.log(scale).flatten(1).sum(1)
        return torch.cat([xa, yb], dim=1), logdet

    def reverse(self, y):
        ya, yb = y.chunk(2, dim=1)
        shift, scale = self._params(ya)
        return torch.cat([ya, yb / scale - shift], dim=1)

class FlowStep(nn.Module):
    def __init__(self, channels, hidden):
        super().__init__()
        self.actnorm = ActNorm(channels)
        self.invconv = InvConv1x1(channels)
        self.coupling = AffineCoupling(channels, hidden)

    def forward(self, x):
        x, ld1 = self.actnorm(x)
        x, ld2 = self.invconv(x)
        x, ld3 = self.coupling(x)
        return x, ld1 + ld2 + ld3

    def reverse(self, y):
        y = self.coupling.reverse(y)
        y = self.invconv.reverse(y)
        return self.actnorm.reverse(y)


def squeeze2x2(x):
    b, c, h, w = x.shape
    x = x.view(b, c, h // 2, 2, w // 2, 2).permute(0, 1, 3, 5, 2, 4)
    return x.reshape(b, c * 4, h // 2, w // 2)


def unsqueeze2x2(x):
    b, c, h, w = x.shape
    x = x.view(b, c // 4, 2, 2, h, w).permute(0, 1, 4, 2, 5, 3)
    return x.reshape(b, c // 4, h * 2, w * 2)


class Glow(nn.Module):
    """Single-scale Glow: squeeze -> K x (actnorm, 1x1 conv, affine coupling) -> N(0, I) prior."""

    def __init__(self, in_channels=1, n_steps=4, hidden=32):
        super().__init__()
        self.steps = nn.ModuleList(FlowStep(in_channels * 4, hidden) for _ in range(n_steps))

    def forward(self, x):
        z = squeeze2x2(x)
        logdet = torch.zeros(x.shape[0], device=x.device)
        for step in self.steps:
            z, ld = step(z)
            logdet = logdet + ld
        log_pz = -0.5 * (z ** 2 + math.log(2 * math.pi)).flatten(1).sum(1)
        return z, log_pz + logdet

    @torch.no_grad()
    def sample(self, n, shape, temperature=0.7):
        c, h, w = shape
        z = torch.randn(n, c * 4, h // 2, w // 2) * temperature
        for step in reversed(self.steps):
            z = step.reverse(z)
        return unsqueeze2x2(z)
