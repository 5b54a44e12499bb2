"""Build the AOTInductor package that the tagging service loads."""
import argparse
import logging
import os
import time

import torch
from torch.export import Dim

from tagger_model import VOCAB_SIZE, build_model

log = logging.getLogger("export_tagger")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default="artifacts/query_tagger.pt2")
    p.add_argument("--max-len", type=int, default=64)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")

    model = build_model()
    example_ids = torch.randint(1, VOCAB_SIZE, (4, 16))

    batch = Dim("batch", min=1, max=256)
    seq = Dim("seq", min=2, max=args.max_len)
    t0 = time.perf_counter()
    with torch.no_grad():
        ep = torch.export.export(model, (example_ids,), dynamic_shapes={"input_ids": {0: batch, 1: seq}})
    log.info("exported in %.1fs; inputs: %s", time.perf_counter() - t0, ep.graph_signature.user_inputs)

    # smoke test the exported program against eager before packaging
    check = torch.randint(1, VOCAB_SIZE, (3, 11))
    torch.testing.assert_close(ep.module()(check), model(check))

    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    t0 = time.perf_counter()
    path = torch._inductor.aoti_compile_and_package(ep, package_path=args.out)
    log.info("wrote %s in %.1fs", path, time.perf_counter() - t0)


if __name__ == "__main__":
    main()
