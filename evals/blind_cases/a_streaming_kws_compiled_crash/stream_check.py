"""Pre-deploy check for the compiled streaming keyword spotter.

Replays recorded-like streams through the eager model and through the
torch.compile'd model (as the serving worker runs it) and compares the
per-chunk keyword posteriors and the detections they trigger.

    python stream_check.py
"""
import argparse
import copy
import sys
import time

import torch

from stream_model import StreamingKWS, synth_stream


def detections(post, threshold, n_keywords):
    # post: (chunks, streams, classes) -> set of (chunk, stream, keyword)
    hits = set()
    kw = post[..., :n_keywords]
    idx = torch.nonzero(kw > threshold)
    for c, s, k in idx.tolist():
        hits.add((c, s, k))
    return hits


@torch.no_grad()
def run_stream(model, chunks, n_streams):
    model.reset_streams(n_streams)
    outs = []
    for ch in chunks:
        outs.append(torch.softmax(model(ch), dim=-1))
    return torch.stack(outs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--streams", type=int, default=4)
    ap.add_argument("--chunks", type=int, default=60)
    ap.add_argument("--threshold", type=float, default=0.12)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    model = StreamingKWS().eval()
    served = torch.compile(copy.deepcopy(model))

    chunks = synth_stream(args.streams, args.chunks, seed=args.seed + 1)

    eager = run_stream(model, chunks, args.streams)
    t0 = time.time()
    compiled = run_stream(served, chunks, args.streams)
    print(f"compiled stream replay: {time.time() - t0:.1f}s")

    diff = (eager - compiled).abs()
    per_chunk = diff.amax(dim=(1, 2))
    print(f"posterior max abs diff: {diff.max().item():.4e}")
    print("first chunks max diff:", " ".join(f"{v:.2e}" for v in per_chunk[:8].tolist()))
    n_kw = model.classifier.out_features - 1
    de = detections(eager, args.threshold, n_kw)
    dc = detections(compiled, args.threshold, n_kw)
    print(f"detections eager={len(de)} compiled={len(dc)} only-eager={len(de - dc)} only-compiled={len(dc - de)}")

    ok = torch.allclose(eager, compiled, rtol=1e-4, atol=1e-5) and de == dc
    print("CHECK PASSED" if ok else "CHECK FAILED: compiled stream does not match eager")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
