import torch
import torch.nn as nn


class PillarBEVNet(nn.Module):
    """Lightweight LiDAR detector: per-point MLP -> pillar scatter onto a BEV grid -> 2D CNN -> center heatmap + box regression."""

    def __init__(self, grid=(64, 64), x_range=(-32.0, 32.0), y_range=(-32.0, 32.0),
                 point_dim=4, feat_dim=32, num_classes=3):
        super().__init__()
        self.grid_h, self.grid_w = grid
        self.x_min, self.x_max = x_range
        self.y_min, self.y_max = y_range
        self.feat_dim = feat_dim
        # per-point encoder: (x, y, z, intensity, x_off, y_off) -> feat_dim
        self.point_mlp = nn.Sequential(
            nn.Linear(point_dim + 2, feat_dim), nn.LayerNorm(feat_dim), nn.ReLU(),
            nn.Linear(feat_dim, feat_dim), nn.ReLU(),
        )
        self.backbone = nn.Sequential(
            nn.Conv2d(feat_dim, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
            nn.Conv2d(64, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
            nn.Conv2d(64, 128, 3, stride=2, padding=1), nn.BatchNorm2d(128), nn.ReLU(),
            nn.Conv2d(128, 128, 3, padding=1), nn.BatchNorm2d(128), nn.ReLU(),
        )
        self.up = nn.ConvTranspose2d(128, 64, 2, stride=2)
        self.skip = nn.Conv2d(feat_dim, 64, 1)
        self.heatmap_head = nn.Conv2d(128, num_classes, 1)
        self.box_head = nn.Conv2d(128, 7, 1)  # dx, dy, z, log w, log l, log h, yaw

    def pillar_index(self, xy):
        cell_x = (self.x_max - self.x_min) / self.grid_w
        cell_y = (self.y_max - self.y_min) / self.grid_h
        ix = ((xy[..., 0] - self.x_min) / cell_x).floor().long()
        iy = ((xy[..., 1] - self.y_min) / cell_y).floor().long()
        inside = (ix >= 0) & (ix < self.grid_w) & (iy >= 0) & (iy < self.grid_h)
        ix = ix.clamp(0, self.grid_w - 1)
        iy = iy.clamp(0, self.grid_h - 1)
        centre_x = self.x_min + (ix.float() + 0.5) * cell_x
        centre_y = self.y_min + (iy.float() + 0.5) * cell_y
        offsets = torch.stack([xy[..., 0] - centre_x, xy[..., 1] - centre_y], -1)
        return iy * self.grid_w + ix, inside, offsets

    def forward(self, points, valid):
        # points: (B, N, 4) x, y, z, intensity (zero-padded); valid: (B, N) bool
        B, N, _ = points.shape
        cell, inside, offsets = self.pillar_index(points[..., :2])
        keep = valid & inside
        feats = self.point_mlp(torch.cat([points, offsets], -1))  # (B, N, C)

        # padded / out-of-range points go to a spare slot that is dropped afterwards
        n_cells = self.grid_h * self.grid_w
        cell = torch.where(keep, cell, torch.full_like(cell, n_cells))
        batch_idx = torch.arange(B, device=points.device)[:, None].expand(B, N)
        canvas = points.new_zeros(B, n_cells + 1, self.feat_dim)
        canvas[batch_idx, cell] = feats
        bev = canvas[:, :n_cells].transpose(1, 2).reshape(B, self.feat_dim, self.grid_h, self.grid_w)

        x = self.backbone(bev)
        x = torch.cat([self.up(x), self.skip(bev)], 1)
        return self.heatmap_head(x), self.box_head(x)
