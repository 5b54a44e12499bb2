"""Train the ECG rhythm tagger on synthetic 12-lead windows; optionally with torch.compile."""
import argparse
import logging
import time

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

from ecg_model import ECGTagger

log = logging.getLogger("train_ecg")

FS = 250
WINDOW_S = 10
STEM_STRIDE = 8


class SyntheticECG(Dataset):
    """Variable-length recordings (6-10 s), zero-padded to 10 s, with a per-frame validity mask."""

    def __init__(self, n: int, n_labels: int = 27, seed: int = 0):
        g = torch.Generator().manual_seed(seed)
        self.n_samples = WINDOW_S * FS
        self.lengths = torch.randint(6 * FS, self.n_samples + 1, (n,), generator=g)
        self.signals = torch.randn(n, 12, self.n_samples, generator=g) * 0.2
        t = torch.arange(self.n_samples) / FS
        hr = torch.rand(n, 1, generator=g) * 1.5 + 0.8
        self.signals += torch.sin(2 * torch.pi * hr * t)[:, None, :]
        self.labels = (torch.rand(n, n_labels, generator=g) < 0.1).float()

    def __len__(self):
        return len(self.lengths)

    def __getitem__(self, i):
        L = int(self.lengths[i])
        sig = self.signals[i].clone()
        sig[:, L:] = 0.0
        n_frames = self.n_samples // STEM_STRIDE + (1 if self.n_samples % STEM_STRIDE else 0)
        mask = torch.zeros(n_frames)
        mask[: (L + STEM_STRIDE - 1) // STEM_STRIDE] = 1.0
        return sig, mask, self.labels[i]


def run_epoch(model, loader, opt, max_steps):
    model.train()
    times, losses = [], []
    for step, (sig, mask, y) in enumerate(loader):
        if step >= max_steps:
            break
        t0 = time.perf_counter()
        logits = model(sig, mask)
        loss = F.binary_cross_entropy_with_logits(logits, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
        losses.append(loss.item())
    return times, losses


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--compile", action="store_true")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--fullgraph", action="store_true", help="require a single graph (what the export path needs)")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(0)
    ds = SyntheticECG(n=args.batch_size * args.steps)
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True, drop_last=True,
                        generator=torch.Generator().manual_seed(0))
    model = ECGTagger(n_layers=args.layers)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    step_fn = torch.compile(model, fullgraph=args.fullgraph) if args.compile else model

    times, losses = run_epoch(step_fn, loader, opt, args.steps)
    warm = times[5:]
    log.info("mode=%s first_step=%.2fs steady_step=%.1fms loss[0]=%.4f loss[-1]=%.4f",
             "compiled" if args.compile else "eager", times[0], 1000 * sum(warm) / len(warm),
             losses[0], losses[-1])
    if args.compile:
        from torch._dynamo.utils import counters
        log.info("dynamo: unique_graphs=%d graph_breaks=%d",
                 counters["stats"]["unique_graphs"], sum(counters["graph_break"].values()))


if __name__ == "__main__":
    main()
