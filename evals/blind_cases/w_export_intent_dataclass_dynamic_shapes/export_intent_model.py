"""Export the support-ticket intent model for the C++/AOTI serving tier.

The serving tier sends variable-size batches (1..64 tickets) of variable token length
(8..256), so the exported program must accept dynamic batch and sequence dims.
"""
import argparse
import dataclasses
import math
import os
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.export import Dim

INTENTS = ["billing", "refund", "login", "shipping", "cancel", "upgrade", "bug_report", "other"]
VOCAB = 8000
MAX_LEN = 256


@dataclasses.dataclass
class EncodedBatch:
    input_ids: torch.Tensor        # (B, S) int64
    attention_mask: torch.Tensor   # (B, S) int64, 1 = real token
    segment_ids: torch.Tensor      # (B, S) int64, 0 = subject, 1 = body
    channel: str = "email"         # email | chat | phone - used by the serving tier for routing/metrics


torch.export.register_dataclass(EncodedBatch, serialized_type_name="ticketing.EncodedBatch")


class EncoderLayer(nn.Module):
    def __init__(self, dim, heads, ff):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln1 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, ff), nn.GELU(), nn.Linear(ff, dim))
        self.ln2 = nn.LayerNorm(dim)

    def forward(self, x, key_bias):
        B, S, D = x.shape
        q, k, v = self.qkv(x).view(B, S, 3, self.heads, D // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=key_bias)
        x = self.ln1(x + self.proj(a.transpose(1, 2).reshape(B, S, D)))
        return self.ln2(x + self.ff(x))


class TicketIntentModel(nn.Module):
    def __init__(self, dim=128, heads=4, ff=512, layers=3):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, dim, padding_idx=0)
        self.seg = nn.Embedding(2, dim)
        self.pos = nn.Embedding(MAX_LEN, dim)
        self.layers = nn.ModuleList([EncoderLayer(dim, heads, ff) for _ in range(layers)])
        self.head = nn.Sequential(nn.Linear(dim, dim), nn.Tanh(), nn.Linear(dim, len(INTENTS)))

    def forward(self, batch: EncodedBatch) -> torch.Tensor:
        S = batch.input_ids.shape[1]
        pos = torch.arange(S, device=batch.input_ids.device)
        x = self.tok(batch.input_ids) + self.seg(batch.segment_ids) + self.pos(pos)
        mask = batch.attention_mask.to(x.dtype)
        key_bias = ((1.0 - mask) * -1e4)[:, None, None, :]
        for layer in self.layers:
            x = layer(x, key_bias)
        pooled = (x * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True).clamp_min(1.0)
        return self.head(pooled)


def make_batch(bsz: int, seq: int, gen: torch.Generator, channel: str = "email") -> EncodedBatch:
    lengths = torch.randint(max(2, seq // 3), seq + 1, (bsz,), generator=gen)
    lengths[0] = seq
    ar = torch.arange(seq)
    mask = (ar[None, :] < lengths[:, None]).long()
    ids = torch.randint(5, VOCAB, (bsz, seq), generator=gen) * mask
    seg = ((ar[None, :] > (lengths[:, None] // 4)).long()) * mask
    return EncodedBatch(ids, mask, seg, channel)


def export_model(model: nn.Module, example: EncodedBatch):
    batch = Dim("batch", min=1, max=64)
    seq = Dim("seq", min=8, max=MAX_LEN)
    token_dims = {0: batch, 1: seq}
    dynamic_shapes = {
        "batch": {
            "input_ids": token_dims,
            "attention_mask": token_dims,
            "segment_ids": token_dims,
        }
    }
    return torch.export.export(model, (example,), dynamic_shapes=dynamic_shapes)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "ticket_intent.pt2"))
    args = ap.parse_args()

    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    model = TicketIntentModel().eval()
    example = make_batch(8, 64, gen)

    t0 = time.perf_counter()
    ep = export_model(model, example)
    print(f"exported in {time.perf_counter() - t0:.1f}s")
    print(ep.range_constraints)
    torch.export.save(ep, args.out)
    served = torch.export.load(args.out).module()

    # serving-tier shapes: single ticket, long threads, a full micro-batch, odd sizes
    worst = 0.0
    for bsz, seq, channel in [(1, 12, "chat"), (3, 200, "email"), (64, 48, "chat"), (17, 256, "phone"), (8, 64, "email")]:
        b = make_batch(bsz, seq, gen, channel)
        with torch.no_grad():
            ref = model(b)
            out = served(b)
        diff = (ref - out).abs().max().item()
        worst = max(worst, diff)
        pred = [INTENTS[i] for i in out.argmax(-1)[:3].tolist()]
        print(f"{channel:5s} batch={bsz:3d} seq={seq:4d}  max|eager-exported|={diff:.2e}  first preds={pred}")
    print(f"saved {args.out}; worst diff {worst:.2e}")


if __name__ == "__main__":
    main()
