import argparse
import os
import time

import torch

from model import QueryDocRanker
from svc_ops import quantize_


def request_stream(n, seed=7):
    g = torch.Generator().manual_seed(seed)
    for _ in range(n):
        bs = int(torch.randint(4, 17, (1,), generator=g))
        length = int(torch.randint(16, 97, (1,), generator=g))
        ids = torch.randint(1, 5000, (bs, length), generator=g)
        lens = torch.randint(8, length + 1, (bs,), generator=g)
        ids[torch.arange(length)[None, :] >= lens[:, None]] = 0
        yield ids


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--requests", type=int, default=40)
    p.add_argument("--no-compile", action="store_true")
    args = p.parse_args()
    torch.manual_seed(0)
    model = quantize_(QueryDocRanker()).eval()
    ranker = model if args.no_compile else torch.compile(model, dynamic=True)
    print(f"bf16 dequant: {os.environ.get('SVC_BF16_DEQUANT', '0')}  compile: {not args.no_compile}", flush=True)

    lat, checksum = [], 0.0
    t_start = time.perf_counter()
    with torch.inference_mode():
        for i, ids in enumerate(request_stream(args.requests)):
            t0 = time.perf_counter()
            scores = ranker(ids)
            lat.append(time.perf_counter() - t0)
            checksum += scores.float().sum().item()
            if i == 0:
                print(f"first request served after {time.perf_counter() - t_start:.1f}s", flush=True)
    lat_ms = sorted(x * 1e3 for x in lat[5:])
    print(f"served {len(lat)} requests  p50 {lat_ms[len(lat_ms) // 2]:.2f} ms  checksum {checksum:.4f}", flush=True)


if __name__ == "__main__":
    main()
