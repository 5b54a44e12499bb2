"""ColBERT-style late-interaction re-ranker, micro-batched like our serving loop.

Requests are queued and flushed every few ms, so each forward sees whatever
batch size happened to accumulate (1..16 query/passage pairs).

    python serve_rerank.py            # compiled MaxSim scorer
    python serve_rerank.py --eager
"""
import argparse
import statistics
import time

import torch
import torch.nn as nn
from transformers import BertConfig, BertModel

Q_LEN, D_LEN, DIM = 32, 128, 32


class ColBERT(nn.Module):
    def __init__(self):
        super().__init__()
        cfg = BertConfig(vocab_size=3000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=128, max_position_embeddings=256)
        self.bert = BertModel(cfg, add_pooling_layer=False)
        self.proj = nn.Linear(cfg.hidden_size, DIM, bias=False)

    def encode(self, ids, mask):
        h = self.bert(input_ids=ids, attention_mask=mask).last_hidden_state
        e = self.proj(h)
        return torch.nn.functional.normalize(e, dim=-1) * mask.unsqueeze(-1)

    def forward(self, q_ids, q_mask, d_ids, d_mask, maxsim_fn=None):
        q = self.encode(q_ids, q_mask)
        d = self.encode(d_ids, d_mask)
        return (maxsim_fn or maxsim)(q, q_mask, d, d_mask)


def maxsim(q, q_mask, d, d_mask):
    """Late interaction: for each query token take the best passage token, then sum."""
    scores = []
    for i in range(q.size(0)):
        sim = q[i] @ d[i].T                                        # (Q_LEN, D_LEN)
        sim = sim.masked_fill(d_mask[i][None, :] == 0, -1e4)
        scores.append((sim.max(dim=-1).values * q_mask[i]).sum())
    return torch.stack(scores)


def make_requests(n, gen):
    """n (query, passage) pairs, padded to fixed lengths like our tokenizer does."""
    q_ids = torch.randint(1, 3000, (n, Q_LEN), generator=gen)
    d_ids = torch.randint(1, 3000, (n, D_LEN), generator=gen)
    q_len = torch.randint(4, Q_LEN + 1, (n,), generator=gen)
    d_len = torch.randint(16, D_LEN + 1, (n,), generator=gen)
    q_mask = (torch.arange(Q_LEN)[None] < q_len[:, None]).long()
    d_mask = (torch.arange(D_LEN)[None] < d_len[:, None]).long()
    return q_ids * q_mask, q_mask, d_ids * d_mask, d_mask


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--eager", action="store_true")
    ap.add_argument("--batches", type=int, default=40)
    args = ap.parse_args()

    torch.manual_seed(0)
    model = ColBERT().eval()
    # The encoder is cheap at these lengths; MaxSim is the hot spot, so that is what we compile.
    # dynamic=True because the micro-batch size changes every flush.
    maxsim_fn = maxsim if args.eager else torch.compile(maxsim, dynamic=True)
    scorer = lambda *reqs: model(*reqs, maxsim_fn=maxsim_fn)
    gen = torch.Generator().manual_seed(0)

    # warm-up with the max micro-batch size
    with torch.no_grad():
        t = time.perf_counter()
        scorer(*make_requests(16, gen))
        print(f"warm-up: {time.perf_counter() - t:.1f}s")

    lat = []
    t_all = time.perf_counter()
    with torch.no_grad():
        for b in range(args.batches):
            n = int(torch.randint(1, 17, (1,), generator=gen))
            reqs = make_requests(n, gen)
            t = time.perf_counter()
            scores = scorer(*reqs)
            lat.append(time.perf_counter() - t)
            if lat[-1] > 0.3:
                print(f"batch {b:3d} size {n:2d}: SLOW {lat[-1]:.2f}s", flush=True)
    lat_ms = sorted(x * 1000 for x in lat)
    print(f"served {args.batches} micro-batches in {time.perf_counter() - t_all:.1f}s | "
          f"p50 {statistics.median(lat_ms):.1f} ms  p95 {lat_ms[int(0.95 * len(lat_ms))]:.1f} ms  "
          f"max {lat_ms[-1]:.0f} ms")


if __name__ == "__main__":
    main()
