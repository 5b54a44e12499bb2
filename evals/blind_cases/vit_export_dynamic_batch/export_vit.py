import os
import torch
import torch.nn as nn
from torch.export import Dim, export


class PatchEmbed(nn.Module):
    def __init__(self, img=64, patch=8, in_ch=3, dim=128):
        super().__init__()
        self.proj = nn.Conv2d(in_ch, dim, kernel_size=patch, stride=patch)
        self.num_patches = (img // patch) ** 2

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)


class Block(nn.Module):
    def __init__(self, dim=128, heads=4, mlp=4.0):
        super().__init__()
        self.n1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.n2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, int(dim * mlp)), nn.GELU(), nn.Linear(int(dim * mlp), dim))

    def forward(self, x):
        h = self.n1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.n2(x))


class TinyViT(nn.Module):
    def __init__(self, img=64, patch=8, dim=128, depth=4, n_cls=10):
        super().__init__()
        self.patch = PatchEmbed(img, patch, 3, dim)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.randn(1, self.patch.num_patches + 1, dim) * 0.02)
        self.blocks = nn.ModuleList(Block(dim) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, n_cls)

    def forward(self, x):
        x = self.patch(x)
        cls = self.cls.expand(x.shape[0], -1, -1)
        x = torch.cat([cls, x], dim=1) + self.pos
        for b in self.blocks:
            x = b(x)
        return self.head(self.norm(x[:, 0]))


def load_sample_image():
    g = torch.Generator().manual_seed(0)
    img = torch.rand(3, 64, 64, generator=g)
    mean = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)
    return ((img - mean) / std).unsqueeze(0)


def main():
    torch.manual_seed(0)
    model = TinyViT().eval()
    example = load_sample_image()
    batch = Dim("batch", max=256)
    with torch.no_grad():
        ep = export(model, (example,), dynamic_shapes={"x": {0: batch}})
    os.makedirs("artifacts", exist_ok=True)
    torch.export.save(ep, "artifacts/tiny_vit.pt2")
    print("saved artifacts/tiny_vit.pt2")

    served = torch.export.load("artifacts/tiny_vit.pt2").module()
    for bs in (1, 8, 32):
        x = torch.randn(bs, 3, 64, 64)
        with torch.no_grad():
            diff = (served(x) - model(x)).abs().max().item()
        print(f"batch={bs:3d} max|exported-eager|={diff:.2e}")


if __name__ == "__main__":
    main()
