"""Batch scoring of candidate promoter windows with a trained PromoterCNN.

Windows come from a variable-length enhancer/promoter catalogue; we bucket them
by length (padding each batch up to a multiple of --pad-multiple) and score
them with a torch.compile'd model.
"""
import argparse
import logging
import time

import torch
import torch._dynamo

from model import PromoterCNN

log = logging.getLogger("promoter_scan")

BASES = "ACGT"


def make_catalogue(n: int, min_len: int, max_len: int, seed: int):
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(min_len, max_len + 1, (n,), generator=g).tolist()
    return [torch.randint(0, 4, (L,), generator=g) for L in lengths]


def batches(catalogue, batch_size: int, pad_multiple: int):
    # sort by length so each batch has little padding
    order = sorted(range(len(catalogue)), key=lambda i: catalogue[i].numel())
    for s in range(0, len(order), batch_size):
        idx = order[s:s + batch_size]
        longest = max(catalogue[i].numel() for i in idx)
        L = -(-longest // pad_multiple) * pad_multiple
        x = torch.zeros(len(idx), 4, L)
        for row, i in enumerate(idx):
            seq = catalogue[i]
            x[row, :, :seq.numel()] = torch.nn.functional.one_hot(seq, 4).T.float()
        yield idx, x


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n-windows", type=int, default=640)
    p.add_argument("--min-len", type=int, default=200)
    p.add_argument("--max-len", type=int, default=330)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--pad-multiple", type=int, default=64)
    p.add_argument("--channels", type=int, default=64)
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)

    model = PromoterCNN(channels=args.channels).eval()
    catalogue = make_catalogue(args.n_windows, args.min_len, args.max_len, args.seed)

    # lengths vary per batch, so ask for dynamic shapes up front
    scorer = model if args.no_compile else torch.compile(model, dynamic=True)

    scores = torch.empty(len(catalogue), 2)
    seen_lengths = set()
    t_start = time.perf_counter()
    with torch.no_grad():
        for step, (idx, x) in enumerate(batches(catalogue, args.batch_size, args.pad_multiple)):
            t0 = time.perf_counter()
            out = scorer(x)
            dt = time.perf_counter() - t0
            scores[idx] = out
            new = x.shape[-1] not in seen_lengths
            seen_lengths.add(x.shape[-1])
            log.info("batch %2d  len=%d%s  %.3fs", step, x.shape[-1], " (new)" if new else "", dt)
    total = time.perf_counter() - t_start

    graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    log.info("scored %d windows in %.1fs; %d distinct lengths; compiled graphs: %d",
             len(catalogue), total, len(seen_lengths), graphs)
    log.info("mean score per task: %s", scores.mean(0).tolist())


if __name__ == "__main__":
    main()
