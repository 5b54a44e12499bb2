"""Keyword/audio-event tagger on log-mel patches (synthetic data for CI)."""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import telemetry

N_MELS, N_FRAMES, N_CLASSES = 40, 64, 12


class ConvBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)


class Tagger(nn.Module):
    def __init__(self, width=32):
        super().__init__()
        self.blocks = nn.ModuleList([
            ConvBlock(1, width), ConvBlock(width, width * 2), ConvBlock(width * 2, width * 2)
        ])
        self.attn = nn.Linear(width * 2, 1)
        self.head = nn.Linear(width * 2, N_CLASSES)
        self.drop = nn.Dropout(0.1)

    def forward(self, mel, log_stats=False):
        x = mel.unsqueeze(1)
        for i, blk in enumerate(self.blocks):
            x = blk(x)
            if log_stats:
                telemetry.record_activation_stats(f"block{i}", x)
        x = x.mean(dim=2).transpose(1, 2)                 # (B, T', C)
        w = torch.softmax(self.attn(x).squeeze(-1), dim=-1)
        pooled = torch.einsum("bt,btc->bc", w, x)
        return self.head(self.drop(pooled))


def spec_augment(mel, gen, max_f=6, max_t=10):
    mel = mel.clone()
    b = mel.shape[0]
    f0 = torch.randint(0, N_MELS - max_f, (b,), generator=gen)
    t0 = torch.randint(0, N_FRAMES - max_t, (b,), generator=gen)
    for i in range(b):
        mel[i, f0[i]:f0[i] + max_f, :] = 0.0
        mel[i, :, t0[i]:t0[i] + max_t] = 0.0
    return mel


def make_batch(batch, gen):
    y = torch.randint(0, N_CLASSES, (batch,), generator=gen)
    t = torch.arange(N_FRAMES).float()
    f = torch.arange(N_MELS).float()[:, None]
    freq = 2.0 + y.float()[:, None, None] * 0.5
    base = torch.sin(freq * t / N_FRAMES * 6.28 + f / 7.0)
    mel = base + 0.5 * torch.randn(batch, N_MELS, N_FRAMES, generator=gen)
    return mel, y


def compute_loss(model, mel, y, label_smoothing, log_stats):
    logits = model(mel, log_stats=log_stats)
    loss = F.cross_entropy(logits, y, label_smoothing=label_smoothing)
    acc = (logits.argmax(-1) == y).float().mean()
    return loss, acc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=80)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--log-every", type=int, default=50)
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()

    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    model = Tagger()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=2e-3, total_steps=args.steps)

    # fullgraph=True so CI fails loudly if someone introduces a graph break in the model
    loss_fn = compute_loss if args.no_compile else torch.compile(compute_loss, fullgraph=True)

    t0 = time.time()
    for step in range(args.steps):
        mel, y = make_batch(args.batch, gen)
        mel = spec_augment(mel, gen)
        log_stats = (step + 1) % args.log_every == 0
        loss, acc = loss_fn(model, mel, y, 0.1, log_stats)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        if step % 10 == 0 or log_stats:
            print(f"step {step:3d} loss {loss.item():.4f} acc {acc.item():.3f} ({time.time() - t0:.1f}s)")
        if log_stats:
            print("  telemetry:", telemetry.fmt(telemetry.summary()))

    model.eval()
    with torch.no_grad():
        mel, y = make_batch(512, gen)
        acc = (model(mel).argmax(-1) == y).float().mean().item()
    print(f"eval acc {acc:.3f}")


if __name__ == "__main__":
    main()
