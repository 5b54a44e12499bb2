"""Streaming near-duplicate filter for tokenized documents.

Each step we receive a block of tokenized windows (int64 token ids), hash every
window into a 64-bit fingerprint and drop windows whose fingerprint we have
already seen.  The staging buffer is reused between steps: after hashing, the
tail columns (the overlap region) are reset to PAD so the next block can be
written into them.

    python dedup_stream.py --steps 20            # eager
    python dedup_stream.py --steps 20 --compile  # torch.compile'd hashing
"""
import argparse
import logging
import time

import torch

log = logging.getLogger("dedup")

PAD = -1
SALT = 0x5BD1E995          # murmur-style mixing constant, applied per 32-bit lane
OVERLAP = 3                # tail columns recycled after each block


def hash_block(buf: torch.Tensor) -> torch.Tensor:
    """Hash each row of `buf` (int64 [rows, width]); recycle the overlap columns.

    We hash the two 32-bit lanes of every token independently (cheaper than a
    64-bit mix and good enough for dedup), then clear the overlap region of the
    staging buffer in place so it can be refilled.
    """
    lanes = buf.view(torch.int32) ^ SALT     # [rows, 2*width] fresh tensor
    lanes.add_(0x27D4EB2F)                   # second mixing round, in place
    buf[:, -OVERLAP:] = PAD                  # recycle staging slots
    return lanes.view(torch.int64)           # back to one int64 per token


def fingerprint(hashed: torch.Tensor) -> torch.Tensor:
    # position-weighted sum -> one 64-bit fingerprint per row
    w = torch.arange(1, hashed.shape[1] + 1, dtype=torch.int64)
    return (hashed * w).sum(dim=1)


def make_stream(steps, rows, width, dup_rate, vocab, seed):
    """Synthetic tokenized windows; a known fraction are exact re-posts of earlier windows."""
    g = torch.Generator().manual_seed(seed)
    history = []
    for _ in range(steps):
        block = torch.randint(0, vocab, (rows, width), generator=g)
        n_dup = int(rows * dup_rate)
        if history:
            pool = torch.cat(history)
            idx = torch.randint(0, pool.shape[0], (n_dup,), generator=g)
            block[:n_dup] = pool[idx]
        # near-duplicates: same prefix, different tail (these must NOT be dropped)
        block[n_dup:2 * n_dup, :-OVERLAP] = block[:n_dup, :-OVERLAP]
        history.append(block.clone())
        yield block


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--rows", type=int, default=256)
    p.add_argument("--width", type=int, default=16)
    p.add_argument("--dup-rate", type=float, default=0.1)
    p.add_argument("--vocab", type=int, default=50_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--compile", action="store_true")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    hasher = torch.compile(hash_block) if args.compile else hash_block
    staging = torch.full((args.rows, args.width), PAD, dtype=torch.int64)
    seen, kept, dropped = set(), 0, 0
    t0 = time.time()
    for step, block in enumerate(make_stream(args.steps, args.rows, args.width,
                                             args.dup_rate, args.vocab, args.seed)):
        staging.copy_(block)
        fps = fingerprint(hasher(staging)).tolist()
        for fp in fps:
            if fp in seen:
                dropped += 1
            else:
                seen.add(fp)
                kept += 1
        if step % 5 == 0:
            log.info("step %d kept=%d dropped=%d", step, kept, dropped)
    expected = int(args.rows * args.dup_rate) * (args.steps - 1)
    log.info("done in %.1fs: kept=%d dropped=%d (expected ~%d exact duplicates)",
             time.time() - t0, kept, dropped, expected)


if __name__ == "__main__":
    main()
