"""Offline retrieval evaluation for the FAQ dual encoder.

Encodes a document collection and a set of paraphrased queries with the
student encoder, builds an in-memory cosine index and reports recall@k / MRR
plus encode latency. `--compile` runs the encoder through torch.compile, which
is what the serving image will use.
"""
import argparse
import logging
import math
import time
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import BertConfig, BertModel

log = logging.getLogger("retrieval_eval")


@dataclass
class EncoderSpec:
    vocab_size: int = 2000
    hidden: int = 128
    layers: int = 2
    heads: int = 4
    ffn: int = 256
    max_len: int = 128
    out_dim: int = 64


class DualEncoder(nn.Module):
    """BERT trunk + masked mean pooling + projection head (shared for docs and queries)."""

    def __init__(self, spec: EncoderSpec):
        super().__init__()
        cfg = BertConfig(
            vocab_size=spec.vocab_size,
            hidden_size=spec.hidden,
            num_hidden_layers=spec.layers,
            num_attention_heads=spec.heads,
            intermediate_size=spec.ffn,
            max_position_embeddings=spec.max_len,
            hidden_dropout_prob=0.1,
            attention_probs_dropout_prob=0.1,
        )
        self.bert = BertModel(cfg, add_pooling_layer=False)
        self.proj = nn.Linear(spec.hidden, spec.out_dim)

    @torch.inference_mode()
    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1.0)
        return F.normalize(self.proj(pooled), dim=-1)


def make_collection(num_docs: int, seq_len: int, vocab: int, gen: torch.Generator):
    """Synthetic FAQ collection: token ids with variable lengths, right-padded with 0."""
    lengths = torch.randint(seq_len // 2, seq_len + 1, (num_docs,), generator=gen)
    ids = torch.randint(5, vocab, (num_docs, seq_len), generator=gen)
    mask = (torch.arange(seq_len).unsqueeze(0) < lengths.unsqueeze(1)).long()
    ids = ids * mask
    ids[:, 0] = 101  # [CLS]
    return ids, mask


def paraphrase(ids: torch.Tensor, mask: torch.Tensor, rate: float, vocab: int, gen: torch.Generator):
    """Query = document with a fraction of its tokens replaced (a cheap paraphrase model)."""
    noise = torch.rand(ids.shape, generator=gen) < rate
    noise &= mask.bool()
    noise[:, 0] = False
    repl = torch.randint(5, vocab, ids.shape, generator=gen)
    return torch.where(noise, repl, ids), mask.clone()


def encode_all(encoder, ids, mask, batch_size):
    chunks, times = [], []
    for start in range(0, ids.size(0), batch_size):
        b_ids = ids[start:start + batch_size]
        b_mask = mask[start:start + batch_size]
        # trim right padding to the longest row of the batch
        width = int(b_mask.sum(dim=1).max())
        t0 = time.perf_counter()
        emb = encoder(b_ids[:, :width], b_mask[:, :width])
        times.append(time.perf_counter() - t0)
        chunks.append(emb)
    return torch.cat(chunks), times


def retrieval_metrics(q_emb, d_emb, gold, ks=(1, 5, 10)):
    scores = q_emb @ d_emb.T
    ranking = scores.argsort(dim=1, descending=True)
    hit_pos = (ranking == gold.unsqueeze(1)).float().argmax(dim=1)
    out = {f"recall@{k}": (hit_pos < k).float().mean().item() for k in ks}
    out["mrr"] = (1.0 / (hit_pos.float() + 1)).mean().item()
    return out


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--num-docs", type=int, default=512)
    p.add_argument("--num-queries", type=int, default=128)
    p.add_argument("--seq-len", type=int, default=48)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--noise", type=float, default=0.25)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--compile", action="store_true", help="run the encoder through torch.compile")
    p.add_argument("--dynamic", action="store_true", help="pass dynamic=True to torch.compile")
    p.add_argument("--min-recall", type=float, default=0.5, help="fail the run below this recall@1")
    return p.parse_args()


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)

    spec = EncoderSpec(max_len=max(128, args.seq_len))
    encoder = DualEncoder(spec).eval()
    n_params = sum(p.numel() for p in encoder.parameters())
    log.info("encoder: %d layers, hidden %d, %.2fM params", spec.layers, spec.hidden, n_params / 1e6)

    doc_ids, doc_mask = make_collection(args.num_docs, args.seq_len, spec.vocab_size, gen)
    gold = torch.randperm(args.num_docs, generator=gen)[: args.num_queries]
    q_ids, q_mask = paraphrase(doc_ids[gold], doc_mask[gold], args.noise, spec.vocab_size, gen)
    log.info("collection: %d docs, %d queries, seq_len<=%d", args.num_docs, args.num_queries, args.seq_len)

    run_encoder = encoder
    if args.compile:
        log.info("compiling encoder (dynamic=%s)", args.dynamic)
        run_encoder = torch.compile(encoder, dynamic=True if args.dynamic else None)

    t0 = time.perf_counter()
    d_emb, d_times = encode_all(run_encoder, doc_ids, doc_mask, args.batch_size)
    log.info("indexed %d docs in %.2fs (first batch %.2fs, median batch %.1fms)",
             d_emb.size(0), time.perf_counter() - t0, d_times[0],
             1000 * sorted(d_times)[len(d_times) // 2])
    q_emb, q_times = encode_all(run_encoder, q_ids, q_mask, args.batch_size)
    log.info("encoded %d queries (median batch %.1fms)", q_emb.size(0),
             1000 * sorted(q_times)[len(q_times) // 2])

    metrics = retrieval_metrics(q_emb, d_emb, gold)
    log.info("metrics: %s", " ".join(f"{k}={v:.4f}" for k, v in metrics.items()))
    if math.isnan(metrics["mrr"]) or metrics["recall@1"] < args.min_recall:
        raise SystemExit(f"recall@1 {metrics['recall@1']:.4f} below gate {args.min_recall}")
    log.info("gate passed")


if __name__ == "__main__":
    main()
