"""Encode a document corpus with a (small) BERT encoder and write an int8 vector index.

The int8 scheme follows the sentence-transformers style "calibrated" quantization:
per-dimension ranges are estimated on a calibration sample, then each embedding is
mapped onto the 256 int8 levels.
"""
import argparse
import hashlib
import logging
import time

import torch
import torch.nn.functional as F
from transformers import BertConfig, BertModel

log = logging.getLogger("build_index")


def build_encoder(args):
    cfg = BertConfig(vocab_size=args.vocab, hidden_size=128, num_hidden_layers=2,
                     num_attention_heads=4, intermediate_size=256,
                     max_position_embeddings=128, hidden_dropout_prob=0.0,
                     attention_probs_dropout_prob=0.0)
    torch.manual_seed(args.seed)
    return BertModel(cfg, add_pooling_layer=False).eval()


def fake_corpus(n_docs, vocab, seed, min_len=8, max_len=48):
    g = torch.Generator().manual_seed(seed)
    docs = []
    for _ in range(n_docs):
        n = int(torch.randint(min_len, max_len + 1, (1,), generator=g))
        docs.append(torch.randint(5, vocab, (n,), generator=g))
    return docs


def collate(docs, pad_to=48):
    ids = torch.zeros(len(docs), pad_to, dtype=torch.long)
    mask = torch.zeros(len(docs), pad_to, dtype=torch.long)
    for i, d in enumerate(docs):
        ids[i, : len(d)] = d
        mask[i, : len(d)] = 1
    return ids, mask


class Int8Quantizer:
    def __init__(self, starts, steps):
        self.starts = starts
        self.steps = steps

    @classmethod
    def calibrate(cls, emb):
        lo = emb.min(dim=0).values
        hi = emb.max(dim=0).values
        return cls(lo, (hi - lo) / 255)

    def __call__(self, emb):
        return ((emb - self.starts) / self.steps - 128).to(torch.int8)


def make_encode_fn(model, quantizer):
    def encode(input_ids, attention_mask):
        out = model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        m = attention_mask.unsqueeze(-1).to(out.dtype)
        pooled = (out * m).sum(1) / m.sum(1).clamp(min=1.0)
        emb = F.normalize(pooled, dim=-1)
        return quantizer(emb)
    return encode


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--docs", type=int, default=512)
    p.add_argument("--calib-docs", type=int, default=64)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--vocab", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--check-against-eager", action="store_true",
                   help="re-encode with the eager model and compare the index")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    model = build_encoder(args)
    docs = fake_corpus(args.docs, args.vocab, args.seed)

    with torch.no_grad():
        ids, mask = collate(docs[: args.calib_docs])
        out = model(input_ids=ids, attention_mask=mask).last_hidden_state
        m = mask.unsqueeze(-1).float()
        calib = F.normalize((out * m).sum(1) / m.sum(1), dim=-1)
    quantizer = Int8Quantizer.calibrate(calib)
    log.info("calibrated int8 ranges on %d docs", args.calib_docs)

    encode = make_encode_fn(model, quantizer)
    run = torch.compile(encode) if args.compile else encode

    t0 = time.perf_counter()
    chunks = []
    with torch.no_grad():
        for i in range(0, len(docs), args.batch_size):
            ids, mask = collate(docs[i : i + args.batch_size])
            chunks.append(run(ids, mask))
    index = torch.cat(chunks)
    log.info("encoded %d docs in %.1fs (compile=%s) -> %s %s", len(docs),
             time.perf_counter() - t0, args.compile, tuple(index.shape), index.dtype)
    digest = hashlib.sha1(index.numpy().tobytes()).hexdigest()[:12]
    log.info("index sha1=%s", digest)

    if args.check_against_eager:
        with torch.no_grad():
            ref = torch.cat([encode(*collate(docs[i : i + args.batch_size]))
                             for i in range(0, len(docs), args.batch_size)])
        diff = (index.int() - ref.int()).abs()
        # allow one quantization step of slack for fp32 reordering in the encoder
        rows = (diff > 1).any(dim=1)
        log.info("rows differing from eager by >1 code: %d/%d, max code diff %d",
                 int(rows.sum()), len(rows), int(diff.max()))
        q = index[:32].float()
        r = ref[:32].float()
        top_c = (q @ index.float().t()).topk(10, dim=1).indices
        top_e = (r @ ref.float().t()).topk(10, dim=1).indices
        overlap = sum(len(set(a.tolist()) & set(b.tolist())) for a, b in zip(top_c, top_e)) / (32 * 10)
        log.info("top-10 neighbour overlap vs eager index: %.3f", overlap)
        if rows.any():
            log.error("index built with compile=%s does not match the eager index", args.compile)
            raise SystemExit(1)
        log.info("index matches eager")


if __name__ == "__main__":
    main()
