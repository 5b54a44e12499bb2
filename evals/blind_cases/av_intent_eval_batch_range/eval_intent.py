"""Offline evaluation of the intent classifier over our dev/test splits (compiled inference).

Usage: python eval_intent.py --batch-size 64
"""
import argparse
import logging
import time

import torch
import torch.nn as nn

log = logging.getLogger("intent-eval")

VOCAB, MAX_LEN, N_INTENTS = 4000, 32, 24
SPLITS = {"dev": 640, "test": 705}


class IntentEncoder(nn.Module):
    def __init__(self, d_model=96, n_heads=4, n_layers=2):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, d_model, padding_idx=0)
        self.pos = nn.Parameter(torch.randn(1, MAX_LEN, d_model) * 0.02)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, 4 * d_model, dropout=0.1,
                                           batch_first=True, norm_first=True)
        self.enc = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.cls = nn.Linear(d_model, N_INTENTS)

    def forward(self, ids, mask):
        x = self.tok(ids) + self.pos[:, :ids.shape[1]]
        x = self.enc(x, src_key_padding_mask=~mask)
        m = mask.unsqueeze(-1).to(x.dtype)
        pooled = (self.norm(x) * m).sum(1) / m.sum(1).clamp_min(1.0)
        return self.cls(pooled)


def make_split(n, seed):
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(4, MAX_LEN + 1, (n,), generator=g)
    ids = torch.randint(1, VOCAB, (n, MAX_LEN), generator=g)
    mask = torch.arange(MAX_LEN)[None, :] < lengths[:, None]
    ids = ids * mask
    labels = torch.randint(0, N_INTENTS, (n,), generator=g)
    return ids, mask, labels


def prepare_batch(ids, mask, bs):
    # The batch dim varies (last batch of a split), and we never want 0/1 specialization
    # or sizes above what we benchmarked, so give Dynamo the range up front.
    torch._dynamo.mark_dynamic(ids, 0, min=2, max=bs)
    torch._dynamo.mark_dynamic(mask, 0, min=2, max=bs)
    return ids, mask


@torch.no_grad()
def evaluate(model, split, bs):
    ids, mask, labels = split
    correct, n, t0 = 0, 0, time.perf_counter()
    for i in range(0, len(labels), bs):
        b_ids, b_mask = prepare_batch(ids[i:i + bs].clone(), mask[i:i + bs].clone(), bs)
        logits = model(b_ids, b_mask)
        correct += (logits.argmax(-1) == labels[i:i + bs]).sum().item()
        n += len(b_ids)
    return correct / n, n, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")

    torch.manual_seed(0)
    model = IntentEncoder().eval()
    runner = model if args.no_compile else torch.compile(model)
    log.info("torch %s, compiled=%s, batch_size=%d", torch.__version__, not args.no_compile, args.batch_size)

    for seed, (name, n) in enumerate(SPLITS.items()):
        acc, seen, secs = evaluate(runner, make_split(n, seed + 10), args.batch_size)
        log.info("%-4s n=%d acc=%.4f (%.1fs)", name, seen, acc, secs)


if __name__ == "__main__":
    main()
