"""Channel-independent masked patch autoencoder for multivariate sensor series (PatchTST-style pretraining)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, dim: int, heads: int, mlp_ratio: float = 4.0):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, int(dim * mlp_ratio)), nn.GELU(), nn.Linear(int(dim * mlp_ratio), dim))

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(a.transpose(1, 2).reshape(b, n, d))
        return x + self.mlp(self.norm2(x))


class PatchMAE(nn.Module):
    def __init__(self, patch_len=16, n_patches=16, dim=64, depth=2, dec_depth=1, heads=4, mask_ratio=0.5):
        super().__init__()
        self.patch_len = patch_len
        self.mask_ratio = mask_ratio
        self.embed = nn.Linear(patch_len, dim)
        self.pos = nn.Parameter(torch.randn(1, n_patches, dim) * 0.02)
        self.encoder = nn.ModuleList(Block(dim, heads) for _ in range(depth))
        self.enc_norm = nn.LayerNorm(dim)
        self.mask_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.decoder = nn.ModuleList(Block(dim, heads) for _ in range(dec_depth))
        self.head = nn.Linear(dim, patch_len)

    def patchify(self, x):
        # x: (B, C, T) -> (B*C, N, patch_len)
        b, c, t = x.shape
        return x.reshape(b * c, t // self.patch_len, self.patch_len)

    def forward(self, series, noise):
        patches = self.patchify(series)
        # per-patch instance norm, as in the downstream forecaster
        mu = patches.mean(dim=(1, 2), keepdim=True)
        sd = patches.std(dim=(1, 2), keepdim=True) + 1e-5
        target = (patches - mu) / sd

        bc, n, _ = target.shape
        len_keep = int(n * (1 - self.mask_ratio))
        ids_shuffle = torch.argsort(noise, dim=1)
        ids_restore = torch.argsort(ids_shuffle, dim=1)
        ids_keep = ids_shuffle[:, :len_keep]

        tokens = self.embed(target) + self.pos
        visible = torch.gather(tokens, 1, ids_keep[..., None].expand(-1, -1, tokens.shape[-1]))
        for blk in self.encoder:
            visible = blk(visible)
        visible = self.enc_norm(visible)

        fill = self.mask_token.expand(bc, n - len_keep, -1)
        full = torch.cat([visible, fill], dim=1)
        full = torch.gather(full, 1, ids_restore[..., None].expand(-1, -1, full.shape[-1])) + self.pos
        for blk in self.decoder:
            full = blk(full)
        recon = self.head(full)

        mask = torch.ones(bc, n, device=series.device)
        mask[:, :len_keep] = 0
        mask = torch.gather(mask, 1, ids_restore)
        per_patch = ((recon - target) ** 2).mean(-1)
        return (per_patch * mask).sum() / mask.sum()


def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.trunc_normal_(m.weight, std=0.02)
        nn.init.zeros_(m.bias)
    elif isinstance(m, nn.LayerNorm):
        nn.init.ones_(m.weight)
        nn.init.zeros_(m.bias)
