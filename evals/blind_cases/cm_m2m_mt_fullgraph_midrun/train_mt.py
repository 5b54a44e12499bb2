"""Fine-tune a small M2M100-style translation model on a synthetic parallel corpus.

Used as the CPU smoke test for our MT fine-tuning recipe before it goes to the cluster.
"""
import argparse
import logging
import math
import random
import time

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import M2M100Config, M2M100ForConditionalGeneration

log = logging.getLogger("train_mt")

PAD, BOS, EOS = 1, 0, 2
VOCAB = 512


def build_config(args):
    return M2M100Config(
        vocab_size=VOCAB,
        d_model=args.d_model,
        encoder_layers=args.layers,
        decoder_layers=args.layers,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=args.d_model * 4,
        decoder_ffn_dim=args.d_model * 4,
        max_position_embeddings=64,
        dropout=0.1,
        attention_dropout=0.0,
        encoder_layerdrop=0.0,
        decoder_layerdrop=0.0,
        activation_function="relu",
        pad_token_id=PAD,
        bos_token_id=BOS,
        eos_token_id=EOS,
        decoder_start_token_id=EOS,
        scale_embedding=True,
    )


class SyntheticParallel(Dataset):
    """Pairs (src, tgt) where tgt is a deterministic 'translation' of src (token remap + local reorder)."""

    def __init__(self, n, seed, min_len, max_len, long_frac):
        rng = random.Random(seed)
        self.pairs = []
        for _ in range(n):
            if rng.random() < long_frac:
                L = rng.randint(max_len // 2, max_len)
            else:
                L = rng.randint(min_len, max_len // 3)
            src = [rng.randint(4, VOCAB - 1) for _ in range(L)]
            tgt = [(t * 7 + 3) % (VOCAB - 4) + 4 for t in src]
            for i in range(0, L - 1, 2):
                tgt[i], tgt[i + 1] = tgt[i + 1], tgt[i]
            self.pairs.append((src + [EOS], tgt + [EOS]))

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, i):
        return self.pairs[i]


def collate(batch, multiple=64):
    """Dynamic padding to the longest sequence in the batch, rounded up to `multiple`."""
    def pad(seqs):
        L = max(len(s) for s in seqs)
        L = int(math.ceil(L / multiple) * multiple)
        out = torch.full((len(seqs), L), PAD, dtype=torch.long)
        for i, s in enumerate(seqs):
            out[i, : len(s)] = torch.tensor(s)
        return out

    src = pad([b[0] for b in batch])
    tgt = pad([b[1] for b in batch])
    labels = tgt.masked_fill(tgt == PAD, -100)
    return {"input_ids": src, "attention_mask": (src != PAD).long(), "labels": labels}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--d-model", type=int, default=64)
    p.add_argument("--layers", type=int, default=1)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--max-len", type=int, default=100)
    p.add_argument("--long-frac", type=float, default=0.03)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--fullgraph", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)
    random.seed(args.seed)

    model = M2M100ForConditionalGeneration(build_config(args))
    model.train()
    n_params = sum(p.numel() for p in model.parameters())
    log.info("model params: %.2fM", n_params / 1e6)

    ds = SyntheticParallel(n=args.steps * args.batch_size, seed=args.seed, min_len=6,
                           max_len=args.max_len, long_frac=args.long_frac)
    g = torch.Generator().manual_seed(args.seed)
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True, generator=g, collate_fn=collate)

    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)

    step_fn = model
    if args.compile:
        step_fn = torch.compile(model, fullgraph=args.fullgraph)
        log.info("torch.compile enabled (fullgraph=%s)", args.fullgraph)

    t_start = time.perf_counter()
    for step, batch in enumerate(loader):
        t0 = time.perf_counter()
        out = step_fn(**batch)
        loss = out.loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        dt = time.perf_counter() - t0
        log.info("step %3d  src_len %3d  tgt_len %3d  loss %.4f  %.2fs",
                 step, batch["input_ids"].shape[1], batch["labels"].shape[1], loss.item(), dt)
    log.info("done: %d steps in %.1fs", step + 1, time.perf_counter() - t_start)


if __name__ == "__main__":
    main()
