"""Contrastive (InfoNCE) fine-tuning of the encoder on query/passage pairs.

Batches are padded to the longest sequence in the batch (dynamic padding),
like the HF DataCollatorWithPadding does.
"""
import argparse
import logging
import random
import time

import torch
import torch.nn.functional as F

from modeling import NomicStyleEncoder

log = logging.getLogger("train")


def synthetic_pairs(n, vocab, min_len, max_len, seed):
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        ql = rng.randint(min_len, max_len // 2)
        pl = rng.randint(max_len // 2, max_len)
        q = [rng.randint(1, vocab - 1) for _ in range(ql)]
        p = q[: ql // 2] + [rng.randint(1, vocab - 1) for _ in range(pl - ql // 2)]
        pairs.append((q, p))
    return pairs


def collate(seqs):
    longest = max(len(s) for s in seqs)
    ids = torch.zeros(len(seqs), longest, dtype=torch.long)
    mask = torch.zeros(len(seqs), longest, dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s)
        mask[i, : len(s)] = 1
    return ids, mask


def batches(pairs, bs, rng):
    idx = list(range(len(pairs)))
    rng.shuffle(idx)
    for i in range(0, len(idx) - bs + 1, bs):
        chunk = [pairs[j] for j in idx[i : i + bs]]
        yield collate([q for q, _ in chunk]), collate([p for _, p in chunk])


def info_nce(q, p, temperature):
    logits = q @ p.T / temperature
    labels = torch.arange(q.shape[0], device=q.device)
    return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--max-len", type=int, default=96)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--temperature", type=float, default=0.05)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--log-every", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    model = NomicStyleEncoder()
    pairs = synthetic_pairs(4000, 8192, 8, args.max_len, args.seed)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)

    encoder = torch.compile(model) if args.compile else model

    model.train()
    step, t_window, seen = 0, time.perf_counter(), 0
    step_times = []
    while step < args.steps:
        for (q_ids, q_mask), (p_ids, p_mask) in batches(pairs, args.batch_size, rng):
            t0 = time.perf_counter()
            q = encoder(q_ids, q_mask)
            p = encoder(p_ids, p_mask)
            loss = info_nce(q, p, args.temperature)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            step_times.append(time.perf_counter() - t0)
            seen += q_ids.shape[0]
            step += 1
            if step % args.log_every == 0:
                dt = time.perf_counter() - t_window
                log.info("step %d loss %.4f  %.1f pairs/s  q_len %d p_len %d",
                         step, loss.item(), seen / dt, q_ids.shape[1], p_ids.shape[1])
                t_window, seen = time.perf_counter(), 0
            if step >= args.steps:
                break

    tail = sorted(step_times[len(step_times) // 2 :])
    log.info("median step time (second half): %.1f ms", 1000 * tail[len(tail) // 2])


if __name__ == "__main__":
    main()
