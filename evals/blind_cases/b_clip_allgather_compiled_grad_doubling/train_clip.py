"""Two-tower contrastive (CLIP-style) retrieval trainer.

Launch:  torchrun --nproc_per_node 2 train_clip.py [--compile-loss]
"""
import argparse
import math
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from clip_loss import ClipLoss

VOCAB = 320
TOKENS_PER_CAPTION = 8
IMG_FEAT_DIM = 64
LATENT_DIM = 8
EMBED_DIM = 32
TEMPERATURE = 0.1


class PairedToyDataset:
    """Synthetic (image-feature, caption) pairs driven by a shared latent."""

    def __init__(self, seed, n):
        g = torch.Generator().manual_seed(1234)  # same "world" for every rank
        self.proj = torch.randn(LATENT_DIM, IMG_FEAT_DIM, generator=g) / math.sqrt(LATENT_DIM)
        self.word_bias = torch.randn(TOKENS_PER_CAPTION, LATENT_DIM, generator=g)
        g = torch.Generator().manual_seed(seed)
        self.z = torch.randn(n, LATENT_DIM, generator=g)
        self.noise = torch.randn(n, IMG_FEAT_DIM, generator=g) * 0.3
        self.n = n

    def batch(self, idx):
        z = self.z[idx]
        img = torch.tanh(z @ self.proj) + self.noise[idx]
        # each caption slot picks one of 40 words, driven by a projection of z
        slot_scores = z @ self.word_bias.t()                       # (B, T)
        buckets = ((torch.sigmoid(slot_scores) * 39.999).long())   # 0..39
        tokens = buckets + 40 * torch.arange(TOKENS_PER_CAPTION)   # disjoint vocab per slot
        return img, tokens


class ImageTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(IMG_FEAT_DIM, 128), nn.GELU(), nn.LayerNorm(128), nn.Linear(128, EMBED_DIM)
        )

    def forward(self, x):
        return self.net(x)


class TextTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.EmbeddingBag(VOCAB, 96, mode="mean")
        self.proj = nn.Sequential(nn.GELU(), nn.Linear(96, EMBED_DIM))

    def forward(self, tokens):
        return self.proj(self.emb(tokens))


class DualEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.image = ImageTower()
        self.text = TextTower()
        self.register_buffer("logit_scale", torch.tensor(1 / TEMPERATURE))

    def forward(self, img, tokens):
        i = F.normalize(self.image(img), dim=-1)
        t = F.normalize(self.text(tokens), dim=-1)
        return i, t, self.logit_scale


@torch.no_grad()
def retrieval_top1(model, data, n_eval=512):
    idx = torch.arange(data.n - n_eval, data.n)
    img, tok = data.batch(idx)
    i, t, _ = model(img, tok)
    sims = i @ t.t()
    return (sims.argmax(1) == torch.arange(n_eval)).float().mean().item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--compile-loss", action="store_true")
    p.add_argument("--steps", type=int, default=120)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=1.0)
    args = p.parse_args()

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)  # identical init on every rank

    model = DDP(DualEncoder())
    loss_fn = ClipLoss(rank=rank, world_size=world)
    if args.compile_loss:
        loss_fn = torch.compile(loss_fn)

    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 10))

    train = PairedToyDataset(seed=100 + rank, n=args.steps * args.batch)
    evalset = PairedToyDataset(seed=999, n=512)
    g = torch.Generator().manual_seed(7 + rank)

    t0 = time.time()
    for step in range(args.steps):
        idx = torch.randint(0, train.n, (args.batch,), generator=g)
        img, tok = train.batch(idx)
        i, t, scale = model(img, tok)
        loss = loss_fn(i, t, scale)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=float("inf"))
        opt.step()
        sched.step()
        if rank == 0 and (step % 20 == 0 or step == args.steps - 1):
            print(f"step {step:4d}  loss {loss.item():.4f}  grad_norm {gnorm.item():.4f}  "
                  f"lr {sched.get_last_lr()[0]:.3f}", flush=True)

    if rank == 0:
        acc = retrieval_top1(model.module, evalset)
        tag = "compiled loss" if args.compile_loss else "eager loss"
        print(f"[{tag}] world={world} final loss {loss.item():.4f}  eval i2t top1 {acc:.3f}  "
              f"({time.time() - t0:.1f}s)", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
