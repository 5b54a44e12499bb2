"""Near-duplicate detection for the support-ticket corpus.

Tickets are embedded with a small transformer encoder and bucketed with
SimHash (random-hyperplane LSH).  A query ticket is a duplicate candidate
of every indexed ticket whose signature is within MAX_HAMMING bits.

    python dedup_service.py            # eager
    python dedup_service.py --compile  # torch.compile'd encode+hash path
"""
import argparse
import functools
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = 4096
DIM = 128
N_BITS = 64
MAX_HAMMING = 10
SEQ = 48


class EncoderBlock(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x, pad_mask):
        h = self.ln1(x)
        a, _ = self.attn(h, h, h, key_padding_mask=pad_mask, need_weights=False)
        x = x + a
        return x + self.ff(self.ln2(x))


class TicketEncoder(nn.Module):
    def __init__(self, vocab=VOCAB, dim=DIM, depth=3, heads=4, max_len=SEQ):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim, padding_idx=0)
        self.pos = nn.Embedding(max_len, dim)
        self.blocks = nn.ModuleList(EncoderBlock(dim, heads) for _ in range(depth))
        self.ln = nn.LayerNorm(dim)

    def forward(self, ids):
        pad = ids.eq(0)
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.tok(ids) + self.pos(pos)[None]
        for blk in self.blocks:
            x = blk(x, pad)
        x = self.ln(x)
        keep = (~pad).unsqueeze(-1).to(x.dtype)
        pooled = (x * keep).sum(1) / keep.sum(1).clamp_min(1.0)
        return F.normalize(pooled, dim=-1)


@functools.lru_cache(maxsize=None)
def lsh_hyperplanes(dim, n_bits):
    # One fixed set of hyperplanes for the lifetime of the process; every
    # signature ever produced must use the same planes.
    return torch.randn(dim, n_bits) / dim ** 0.5


def encode_and_hash(model, ids):
    emb = model(ids)
    planes = lsh_hyperplanes(emb.shape[-1], N_BITS)
    bits = (emb @ planes) > 0
    return emb, bits


def make_corpus(n_docs, gen):
    lengths = torch.randint(16, SEQ + 1, (n_docs,), generator=gen)
    ids = torch.zeros(n_docs, SEQ, dtype=torch.long)
    for i, L in enumerate(lengths.tolist()):
        ids[i, :L] = torch.randint(1, VOCAB, (L,), generator=gen)
    return ids


def perturb(ids, gen, n_edits=1):
    """A 'near duplicate': same ticket with a token retyped."""
    out = ids.clone()
    for i in range(out.shape[0]):
        L = int(out[i].ne(0).sum())
        pos = torch.randint(0, L, (n_edits,), generator=gen)
        out[i, pos] = torch.randint(1, VOCAB, (n_edits,), generator=gen)
    return out


class SignatureIndex:
    def __init__(self):
        self.bits = []
        self.doc_ids = []

    def add(self, doc_ids, bits):
        self.bits.append(bits)
        self.doc_ids.append(doc_ids)

    def finalize(self):
        self.bits = torch.cat(self.bits)
        self.doc_ids = torch.cat(self.doc_ids)

    def query(self, bits):
        ham = (bits[:, None, :] != self.bits[None, :, :]).sum(-1)
        hits = ham <= MAX_HAMMING
        return [self.doc_ids[h.nonzero().flatten()].tolist() for h in hits]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--docs", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=128)
    args = ap.parse_args()

    torch.manual_seed(1234)
    model = TicketEncoder().eval()
    hash_fn = encode_and_hash
    if args.compile:
        hash_fn = torch.compile(encode_and_hash)

    gen = torch.Generator().manual_seed(7)
    corpus = make_corpus(args.docs, gen)
    queries_src = torch.randperm(args.docs, generator=gen)[:256]
    queries = perturb(corpus[queries_src], gen)

    t0 = time.time()
    index = SignatureIndex()
    with torch.inference_mode():
        for s in range(0, args.docs, args.batch):
            chunk = corpus[s:s + args.batch]
            _, bits = hash_fn(model, chunk)
            index.add(torch.arange(s, s + chunk.shape[0]), bits)
        index.finalize()

        # sanity: re-hashing an indexed document must give the same signature
        _, again = hash_fn(model, corpus[:args.batch])
        self_match = (again == index.bits[:args.batch]).all(-1).float().mean().item()

        found = 0
        n_cand = 0
        for s in range(0, queries.shape[0], args.batch):
            _, qbits = hash_fn(model, queries[s:s + args.batch])
            for src, cands in zip(queries_src[s:s + args.batch].tolist(), index.query(qbits)):
                n_cand += len(cands)
                found += int(src in cands)
    elapsed = time.time() - t0

    recall = found / queries.shape[0]
    print(f"mode={'compiled' if args.compile else 'eager'} docs={args.docs} "
          f"self_match={self_match:.3f} recall@ham{MAX_HAMMING}={recall:.3f} "
          f"avg_candidates={n_cand / queries.shape[0]:.2f} time={elapsed:.1f}s")
    if recall < 0.9:
        raise SystemExit(f"dedup recall {recall:.3f} below 0.9 release threshold")


if __name__ == "__main__":
    main()
