"""Keyword-spotting trainer (log-mel input) with on-the-fly SpecAugment.

Usage:
    python train_kws.py --epochs 2 --compile
"""
import argparse
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("kws")

N_MELS = 40
N_FRAMES = 98
N_CLASSES = 12


# --------------------------------------------------------------------------- data
class SyntheticSpeechCommands(torch.utils.data.Dataset):
    """Stand-in for the Speech Commands log-mel cache (same shapes / label set)."""

    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.labels = torch.randint(0, N_CLASSES, (n,), generator=g)
        base = torch.randn(N_CLASSES, N_MELS, N_FRAMES, generator=g)
        self.feats = base[self.labels] + 0.7 * torch.randn(n, N_MELS, N_FRAMES, generator=g)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.feats[i], self.labels[i]


# --------------------------------------------------------------------------- augmentation
class SpecAugment(nn.Module):
    """Time/frequency masking + gain jitter + additive noise.

    The augmentation draws from its own seeded stream so that a run's
    augmentations are reproducible and independent of dropout / init draws
    (changing the model must not change which masks the data gets).
    """

    def __init__(self, freq_mask=8, time_mask=12, noise_std=0.05, seed=1234):
        super().__init__()
        self.freq_mask = freq_mask
        self.time_mask = time_mask
        self.noise_std = noise_std
        self.seed = seed
        self.register_buffer("calls", torch.zeros((), dtype=torch.long), persistent=False)

    def _masks(self, x):
        b, m, t = x.shape
        f0 = torch.randint(0, m - self.freq_mask, (b, 1, 1))
        t0 = torch.randint(0, t - self.time_mask, (b, 1, 1))
        fidx = torch.arange(m).view(1, m, 1)
        tidx = torch.arange(t).view(1, 1, t)
        fmask = (fidx >= f0) & (fidx < f0 + self.freq_mask)
        tmask = (tidx >= t0) & (tidx < t0 + self.time_mask)
        return ~(fmask | tmask)

    def forward(self, x):
        if not self.training:
            return x
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed + int(self.calls))
            keep = self._masks(x)
            gain = torch.empty(x.shape[0], 1, 1).uniform_(0.8, 1.2)
            noise = torch.randn_like(x) * self.noise_std
        self.calls += 1
        return x * keep * gain + noise


# --------------------------------------------------------------------------- model
class DSConvBlock(nn.Module):
    def __init__(self, c_in, c_out, stride):
        super().__init__()
        self.dw = nn.Conv2d(c_in, c_in, 3, stride=stride, padding=1, groups=c_in, bias=False)
        self.bn1 = nn.BatchNorm2d(c_in)
        self.pw = nn.Conv2d(c_in, c_out, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c_out)

    def forward(self, x):
        x = F.relu(self.bn1(self.dw(x)))
        return F.relu(self.bn2(self.pw(x)))


class DSCNN(nn.Module):
    def __init__(self, width=64, n_classes=N_CLASSES):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, width, (10, 4), stride=(2, 2), padding=(5, 1), bias=False),
                                  nn.BatchNorm2d(width), nn.ReLU())
        self.blocks = nn.Sequential(*[DSConvBlock(width, width, 1) for _ in range(4)])
        self.drop = nn.Dropout(0.2)
        self.head = nn.Linear(width, n_classes)

    def forward(self, x):
        x = self.stem(x.unsqueeze(1))
        x = self.blocks(x)
        x = x.mean(dim=(2, 3))
        return self.head(self.drop(x))


class KWSTrainModule(nn.Module):
    """Augment -> model -> loss, so the whole step can be captured as one graph."""

    def __init__(self, model, augment, label_smoothing=0.1):
        super().__init__()
        self.model = model
        self.augment = augment
        self.label_smoothing = label_smoothing

    def forward(self, feats, labels):
        logits = self.model(self.augment(feats))
        loss = F.cross_entropy(logits, labels, label_smoothing=self.label_smoothing)
        return loss, logits


# --------------------------------------------------------------------------- main
def evaluate(model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for feats, labels in loader:
            correct += (model(feats).argmax(-1) == labels).sum().item()
            total += labels.numel()
    model.train()
    return correct / total


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--train-size", type=int, default=512)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--compile", action="store_true")
    args = p.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)
    log.info("torch %s", torch.__version__)

    train_ds = SyntheticSpeechCommands(args.train_size, seed=args.seed + 1)
    val_ds = SyntheticSpeechCommands(256, seed=args.seed + 2)
    train_dl = torch.utils.data.DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, drop_last=True)
    val_dl = torch.utils.data.DataLoader(val_ds, batch_size=128)

    model = DSCNN()
    step_module = KWSTrainModule(model, SpecAugment())
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-2)

    step_fn = step_module
    if args.compile:
        # one graph for augment + forward + loss; fail loudly instead of silently splitting
        step_fn = torch.compile(step_module, fullgraph=True)

    step = 0
    for epoch in range(args.epochs):
        t0 = time.perf_counter()
        running = 0.0
        for feats, labels in train_dl:
            ts = time.perf_counter()
            loss, _ = step_fn(feats, labels)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            running += loss.item()
            step += 1
            if step == 1 or step % 8 == 0:
                log.info("epoch %d step %d loss %.4f (%.1f ms)", epoch, step, loss.item(),
                         1e3 * (time.perf_counter() - ts))
        acc = evaluate(model, val_dl)
        log.info("epoch %d done: mean loss %.4f  val acc %.3f  (%.1fs)", epoch,
                 running / len(train_dl), acc, time.perf_counter() - t0)


if __name__ == "__main__":
    main()
