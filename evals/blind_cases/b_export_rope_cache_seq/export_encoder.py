"""Export the sentence encoder to a .pt2 for the on-device index builder.

    python export_encoder.py --max-seq-len 512 --out encoder.pt2
"""
import argparse
import logging
import os

import torch
from torch.export import Dim, export

from config import EncoderConfig
from encoder import SentenceEncoder

log = logging.getLogger("export")


def sample_batch(cfg, batch, seq_len, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, cfg.vocab_size, (batch, seq_len), generator=g)
    lengths = torch.randint(seq_len // 2, seq_len + 1, (batch,), generator=g)
    mask = (torch.arange(seq_len)[None, :] < lengths[:, None]).long()
    return ids * mask, mask


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-seq-len", type=int, default=None,
                    help="upper bound of the dynamic sequence dim (default: config max_position_embeddings)")
    ap.add_argument("--max-batch", type=int, default=64)
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--out", default="encoder.pt2")
    ap.add_argument("--check-lengths", default="16,100,300,512",
                    help="sequence lengths to compare exported vs eager on")
    ap.add_argument("--strict", action="store_true")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")

    cfg = EncoderConfig()
    torch.manual_seed(0)
    model = SentenceEncoder(cfg).eval()
    if args.checkpoint:
        model.load_state_dict(torch.load(args.checkpoint, map_location="cpu"))
    max_len = args.max_seq_len or cfg.max_position_embeddings

    example = sample_batch(cfg, 4, 64)
    batch = Dim("batch", min=1, max=args.max_batch)
    seq = Dim("seq", min=2, max=max_len)
    dynamic_shapes = {"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: seq}}
    log.info("exporting with batch<=%d seq<=%d (strict=%s)", args.max_batch, max_len, args.strict)
    with torch.no_grad():
        ep = export(model, example, dynamic_shapes=dynamic_shapes, strict=args.strict)
    log.info("range constraints: %s", ep.range_constraints)

    exported = ep.module()
    for L in [int(s) for s in args.check_lengths.split(",")]:
        ids, mask = sample_batch(cfg, 3, L, seed=L)
        with torch.no_grad():
            ref = model(ids, mask)
            got = exported(ids, mask)
        err = (ref - got).abs().max().item()
        log.info("seq_len=%d max abs diff vs eager %.2e", L, err)
        torch.testing.assert_close(got, ref, rtol=1e-4, atol=1e-5)

    torch.export.save(ep, args.out)
    log.info("saved %s (%.1f KiB)", args.out, os.path.getsize(args.out) / 1024)


if __name__ == "__main__":
    main()
