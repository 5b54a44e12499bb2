"""Train a tiny Deformable-DETR style single-object detector on synthetic shapes.

Multi-scale deformable attention (pure PyTorch grid_sample path, as used when the CUDA
extension is not built). Runs on CPU for CI smoke tests: `python train_deformable.py --compile`.
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("deformable")


def ms_deform_attn_core(value, shapes_hw, sampling_locations, attention_weights):
    """value: (B, S, heads, dh); sampling_locations: (B, Q, heads, L, P, 2) in [0, 1]."""
    b, _, heads, dh = value.shape
    _, q, _, levels, points, _ = sampling_locations.shape
    value_list = value.split([h * w for h, w in shapes_hw], dim=1)
    grids = 2 * sampling_locations - 1
    sampled = []
    for lvl, (h, w) in enumerate(shapes_hw):
        v = value_list[lvl].flatten(2).transpose(1, 2).reshape(b * heads, dh, h, w)
        g = grids[:, :, :, lvl].transpose(1, 2).flatten(0, 1)  # (B*heads, Q, P, 2)
        sampled.append(F.grid_sample(v, g, mode="bilinear", padding_mode="zeros", align_corners=False))
    attn = attention_weights.transpose(1, 2).reshape(b * heads, 1, q, levels * points)
    out = (torch.stack(sampled, dim=-2).flatten(-2) * attn).sum(-1)
    return out.view(b, heads * dh, q).transpose(1, 2)


class MSDeformAttn(nn.Module):
    def __init__(self, d=64, levels=3, heads=4, points=4):
        super().__init__()
        self.levels, self.heads, self.points = levels, heads, points
        self.offsets = nn.Linear(d, heads * levels * points * 2)
        self.weights = nn.Linear(d, heads * levels * points)
        self.value_proj = nn.Linear(d, d)
        self.out_proj = nn.Linear(d, d)
        nn.init.zeros_(self.offsets.weight)
        grid = torch.stack([torch.cos(torch.arange(heads) * 2 * math.pi / heads), torch.sin(torch.arange(heads) * 2 * math.pi / heads)], -1)
        bias = grid.view(heads, 1, 1, 2).repeat(1, levels, points, 1) * torch.arange(1, points + 1).view(1, 1, points, 1)
        self.offsets.bias.data.copy_(bias.flatten())

    def forward(self, query, reference_points, value, spatial_shapes, shapes_hw):
        b, q, _ = query.shape
        v = self.value_proj(value).view(b, value.size(1), self.heads, -1)
        off = self.offsets(query).view(b, q, self.heads, self.levels, self.points, 2)
        w = self.weights(query).view(b, q, self.heads, self.levels * self.points).softmax(-1)
        w = w.view(b, q, self.heads, self.levels, self.points)
        offset_normalizer = torch.stack([spatial_shapes[..., 1], spatial_shapes[..., 0]], -1)
        loc = reference_points[:, :, None, :, None, :] + off / offset_normalizer[None, None, None, :, None, :]
        return self.out_proj(ms_deform_attn_core(v, shapes_hw, loc, w))


class TinyDeformableDETR(nn.Module):
    def __init__(self, num_classes=3, d=64, levels=3, queries=8):
        super().__init__()
        chans = [16, 32, 64]
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.ReLU(), nn.Conv2d(16, 16, 3, 2, 1), nn.ReLU())
        self.stages = nn.ModuleList(
            nn.Sequential(nn.Conv2d(cin, cout, 3, 2, 1), nn.GroupNorm(8, cout), nn.ReLU()) for cin, cout in zip([16] + chans[:-1], chans)
        )
        self.input_proj = nn.ModuleList(nn.Conv2d(c, d, 1) for c in chans)
        self.level_embed = nn.Parameter(torch.randn(levels, d) * 0.02)
        self.enc_attn, self.enc_norm = MSDeformAttn(d, levels), nn.LayerNorm(d)
        self.query_embed = nn.Embedding(queries, d)
        self.ref_head = nn.Linear(d, 2)
        self.dec_attn, self.dec_norm = MSDeformAttn(d, levels), nn.LayerNorm(d)
        self.cls_head = nn.Linear(d, num_classes + 1)
        self.box_head = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 4))

    @staticmethod
    def encoder_reference_points(shapes_hw, levels, device):
        refs = []
        for h, w in shapes_hw:
            ys, xs = torch.meshgrid(torch.linspace(0.5, h - 0.5, h, device=device) / h, torch.linspace(0.5, w - 0.5, w, device=device) / w, indexing="ij")
            refs.append(torch.stack([xs.reshape(-1), ys.reshape(-1)], -1))
        return torch.cat(refs, 0)[None, :, None].expand(-1, -1, levels, -1)

    def forward(self, images):
        x = self.stem(images)
        srcs = []
        for stage, proj in zip(self.stages, self.input_proj):
            x = stage(x)
            srcs.append(proj(x))
        # (levels, 2) tensor of (H, W); kept as a tensor so the graph also exports to ONNX
        spatial_shapes = torch.stack([torch._shape_as_tensor(src)[2:4] for src in srcs]).to(device=images.device, dtype=torch.long)
        shapes_hw = [tuple(src.shape[2:4]) for src in srcs]
        memory = torch.cat([s.flatten(2).transpose(1, 2) + self.level_embed[l] for l, s in enumerate(srcs)], 1)
        ref = self.encoder_reference_points(shapes_hw, len(srcs), images.device)
        memory = self.enc_norm(memory + self.enc_attn(memory, ref.expand(memory.size(0), -1, -1, -1), memory, spatial_shapes, shapes_hw))
        tgt = self.query_embed.weight[None].expand(images.size(0), -1, -1)
        qref = self.ref_head(tgt).sigmoid()[:, :, None].expand(-1, -1, len(srcs), -1)
        hs = self.dec_norm(tgt + self.dec_attn(tgt, qref, memory, spatial_shapes, shapes_hw))
        return self.cls_head(hs), self.box_head(hs).sigmoid()


def synth_batch(n, size, num_classes, gen):
    imgs = 0.1 * torch.randn(n, 3, size, size, generator=gen)
    labels = torch.randint(0, num_classes, (n,), generator=gen)
    boxes = torch.empty(n, 4)
    for i in range(n):
        w, h = (int(v) for v in torch.randint(size // 6, size // 2, (2,), generator=gen))
        x0, y0 = int(torch.randint(0, size - w, (1,), generator=gen)), int(torch.randint(0, size - h, (1,), generator=gen))
        imgs[i, labels[i], y0 : y0 + h, x0 : x0 + w] += 1.0
        boxes[i] = torch.tensor([(x0 + w / 2) / size, (y0 + h / 2) / size, w / size, h / size])
    return imgs, labels, boxes


def detr_loss(logits, boxes_pred, labels, boxes, num_classes):
    """Single GT per image: match it to the query with the lowest L1 + class cost (greedy Hungarian)."""
    with torch.no_grad():
        cost = torch.cdist(boxes_pred, boxes[:, None], p=1).squeeze(-1) - logits.softmax(-1).gather(2, labels[:, None, None].expand(-1, logits.size(1), 1)).squeeze(-1)
        match = cost.argmin(1)
    target_cls = torch.full(logits.shape[:2], num_classes, dtype=torch.long)
    target_cls[torch.arange(len(labels)), match] = labels
    weight = torch.ones(num_classes + 1)
    weight[-1] = 0.1
    loss_cls = F.cross_entropy(logits.flatten(0, 1), target_cls.flatten(), weight=weight)
    loss_box = F.l1_loss(boxes_pred[torch.arange(len(labels)), match], boxes)
    return loss_cls + 5.0 * loss_box, loss_cls.detach(), loss_box.detach()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--image-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--compile", action="store_true")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)

    model = TinyDeformableDETR()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    fwd = torch.compile(model) if args.compile else model
    t0 = time.perf_counter()
    for step in range(args.steps):
        imgs, labels, boxes = synth_batch(args.batch_size, args.image_size, 3, gen)
        logits, pred_boxes = fwd(imgs)
        loss, lc, lb = detr_loss(logits, pred_boxes, labels, boxes, 3)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        opt.step()
        if step % 10 == 0 or step == args.steps - 1:
            log.info("step %d loss %.4f (cls %.4f box %.4f)", step, loss.item(), lc.item(), lb.item())
    log.info("done in %.1fs", time.perf_counter() - t0)


if __name__ == "__main__":
    main()
