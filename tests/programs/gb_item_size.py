import torch


def keep_first(x, mask):
    n = int(mask.sum())          # data-dependent value used as a size, not as a branch
    out = torch.zeros(n, x.shape[1])
    return out + x[:n]


def scale(x):
    if x.sum().item() > 0:       # the same kind of break used as a branch
        return x * 2
    return x - 1


x, mask = torch.randn(8, 3), torch.arange(8) < 5
print(torch.compile(keep_first, backend="eager")(x, mask).shape)
print(torch.compile(scale, backend="eager")(x).shape)
