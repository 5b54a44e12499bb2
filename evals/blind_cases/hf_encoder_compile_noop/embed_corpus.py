"""Embed a document corpus with our in-house BERT sentence encoder (mean pooling + projection).

Benchmarks eager vs. compiled on CPU before we switch the indexing job over.
"""
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._dynamo.utils import counters
from transformers import BertConfig, BertModel

MAX_LEN = 64
BATCH = 32


class SentenceEncoder(nn.Module):
    def __init__(self, cfg, dim=128):
        super().__init__()
        self.bert = BertModel(cfg, add_pooling_layer=False)
        self.proj = nn.Linear(cfg.hidden_size, dim)

    def forward(self, input_ids, attention_mask):
        hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return F.normalize(self.proj(pooled), dim=-1)

    @torch.no_grad()
    def encode(self, batches):
        self.eval()
        embs = []
        for input_ids, attention_mask in batches:
            embs.append(self.forward(input_ids, attention_mask))
        return torch.cat(embs)


def fake_corpus(n_docs=192, vocab=8000, seed=0):
    """Stand-in for the tokenizer output: right-padded to MAX_LEN like the real job."""
    g = torch.Generator().manual_seed(seed)
    batches = []
    for start in range(0, n_docs, BATCH):
        lens = torch.randint(8, MAX_LEN + 1, (BATCH,), generator=g)
        ids = torch.randint(1000, vocab, (BATCH, MAX_LEN), generator=g)
        mask = (torch.arange(MAX_LEN)[None, :] < lens[:, None]).long()
        batches.append((ids * mask, mask))
    return batches


def bench(encoder, batches, label):
    t0 = time.perf_counter()
    embs = encoder.encode(batches)
    dt = time.perf_counter() - t0
    print(f"{label:<28s} {dt:7.2f}s  ({len(embs) / dt:7.1f} docs/s)")
    return embs


def main():
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=8000, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                     intermediate_size=1024, max_position_embeddings=128)
    encoder = SentenceEncoder(cfg)
    batches = fake_corpus()

    ref = bench(encoder, batches, "eager")

    encoder.compile()  # nn.Module.compile(), compiles in place
    bench(encoder, batches, "compiled (1st pass, warmup)")
    out = bench(encoder, batches, "compiled (2nd pass)")
    bench(encoder, batches, "compiled (3rd pass)")
    print("max |emb diff| vs eager:", (out - ref).abs().max().item())
    print("dynamo stats:", dict(counters["stats"]))


if __name__ == "__main__":
    main()
