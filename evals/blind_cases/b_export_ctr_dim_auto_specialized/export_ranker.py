"""Export the ranker to a .pt2 package for the CPU serving tier."""
import argparse
import logging

import torch
from torch.export import Dim

from ranker import Ranker

log = logging.getLogger("export")


def example_batch(batch, hist_len, num_dense=13, n_tables=8, gen=None):
    dense = torch.randn(batch, num_dense, generator=gen)
    sparse_ids = torch.randint(0, 1000, (batch, n_tables), generator=gen)
    target_item = torch.randint(1, 5000, (batch,), generator=gen)
    history = torch.randint(1, 5000, (batch, hist_len), generator=gen)
    lengths = torch.randint(1, hist_len + 1, (batch,), generator=gen)
    history = history * (torch.arange(hist_len) < lengths[:, None])
    return dense, sparse_ids, target_item, history


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ckpt", default=None)
    p.add_argument("--out", default="ranker.pt2")
    p.add_argument("--example-batch", type=int, default=64)
    p.add_argument("--example-hist-len", type=int, default=50)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(0)
    model = Ranker().eval()
    if args.ckpt:
        model.load_state_dict(torch.load(args.ckpt, map_location="cpu"))

    gen = torch.Generator().manual_seed(0)
    inputs = example_batch(args.example_batch, args.example_hist_len, gen=gen)

    # batch size varies per request; history length varies per user segment
    dynamic_shapes = {
        "dense": {0: Dim.AUTO},
        "sparse_ids": {0: Dim.AUTO},
        "target_item": {0: Dim.AUTO},
        "history": {1: Dim.AUTO},
    }
    with torch.no_grad():
        ep = torch.export.export(model, inputs, dynamic_shapes=dynamic_shapes)
    log.info("exported graph with %d nodes", len(ep.graph.nodes))
    torch.export.save(ep, args.out)
    log.info("saved %s", args.out)


if __name__ == "__main__":
    main()
