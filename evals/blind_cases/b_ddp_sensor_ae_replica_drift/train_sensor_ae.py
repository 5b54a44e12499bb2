"""Distributed training of a 1-D conv autoencoder for vibration-sensor windows.

Run:  torchrun --nproc_per_node=2 train_sensor_ae.py --compile
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

import dist_utils


class SensorWindows(Dataset):
    """Synthetic 3-axis accelerometer windows: a few harmonics + bearing faults + noise."""

    def __init__(self, n, length=512, seed=0):
        g = torch.Generator().manual_seed(seed)
        t = torch.arange(length, dtype=torch.float32) / length
        f0 = torch.randint(3, 20, (n, 3, 1), generator=g).float()
        phase = torch.rand(n, 3, 1, generator=g) * 2 * math.pi
        amp = 0.5 + torch.rand(n, 3, 1, generator=g)
        x = amp * torch.sin(2 * math.pi * f0 * t + phase)
        x = x + 0.3 * amp * torch.sin(2 * math.pi * 3 * f0 * t)
        fault = (torch.rand(n, 1, 1, generator=g) < 0.2).float()
        spikes = (torch.rand(n, 3, length, generator=g) < 0.01).float() * 2.0
        x = x + fault * spikes + 0.05 * torch.randn(n, 3, length, generator=g)
        self.x = x

    def __len__(self):
        return self.x.shape[0]

    def __getitem__(self, i):
        return self.x[i]


class ResBlock1d(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.norm1 = nn.GroupNorm(8, ch)
        self.conv1 = nn.Conv1d(ch, ch, 5, padding=2)
        self.norm2 = nn.GroupNorm(8, ch)
        self.conv2 = nn.Conv1d(ch, ch, 5, padding=2)

    def forward(self, x):
        h = self.conv1(F.silu(self.norm1(x)))
        h = self.conv2(F.silu(self.norm2(h)))
        return x + h


class SensorAE(nn.Module):
    def __init__(self, in_ch=3, width=32, latent=8):
        super().__init__()
        self.stem = nn.Conv1d(in_ch, width, 7, padding=3)
        self.down = nn.ModuleList()
        ch = width
        for _ in range(3):
            self.down.append(nn.Sequential(ResBlock1d(ch), nn.Conv1d(ch, ch * 2, 4, stride=2, padding=1)))
            ch *= 2
        self.to_latent = nn.Conv1d(ch, latent, 1)
        self.from_latent = nn.Conv1d(latent, ch, 1)
        self.up = nn.ModuleList()
        for _ in range(3):
            self.up.append(nn.Sequential(ResBlock1d(ch), nn.ConvTranspose1d(ch, ch // 2, 4, stride=2, padding=1)))
            ch //= 2
        self.head = nn.Conv1d(ch, in_ch, 7, padding=3)

    def encode(self, x):
        h = self.stem(x)
        for blk in self.down:
            h = blk(h)
        return torch.tanh(self.to_latent(h))

    def decode(self, z):
        h = self.from_latent(z)
        for blk in self.up:
            h = blk(h)
        return self.head(h)

    def forward(self, x):
        z = self.encode(x)
        return self.decode(z), z


def spectral_loss(recon, x):
    a = torch.fft.rfft(recon, dim=-1).abs()
    b = torch.fft.rfft(x, dim=-1).abs()
    return F.l1_loss(torch.log1p(a), torch.log1p(b))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--sync-check-every", type=int, default=20)
    args = ap.parse_args()

    rank, world = dist_utils.setup()
    torch.manual_seed(1234)  # identical init on every rank
    net = SensorAE()
    model = DDP(net)
    train_model = dist_utils.maybe_compile(model, args.compile)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)

    ds = SensorWindows(4096, seed=7)
    sampler = DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(ds, batch_size=args.batch_size, sampler=sampler, drop_last=True)

    step, epoch, t0 = 0, 0, time.time()
    while step < args.steps:
        sampler.set_epoch(epoch)
        for x in loader:
            recon, z = train_model(x)
            loss = F.mse_loss(recon, x) + 0.1 * spectral_loss(recon, x) + 1e-3 * z.pow(2).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            step += 1
            if step % args.sync_check_every == 0 or step == args.steps:
                mean_loss = dist_utils.all_mean(loss.item())
                drift = dist_utils.replica_divergence(model)
                if rank == 0:
                    print(f"step {step:4d}  loss {mean_loss:.4f}  replica drift {drift:.3e}  "
                          f"({time.time() - t0:.1f}s)", flush=True)
                if drift > 1e-6:
                    raise RuntimeError(f"rank {rank}: model replicas out of sync at step {step} "
                                       f"(max |param diff| = {drift:.3e})")
            if step >= args.steps:
                break
        epoch += 1

    if rank == 0:
        torch.save(dist_utils.unwrap(model).state_dict(), "sensor_ae.pt")
        print("saved sensor_ae.pt")
    dist_utils.cleanup()


if __name__ == "__main__":
    main()
