"""One serving pod: load the precompiled ranker package and answer scoring requests."""
import json
import os
import sys
import time

T_START = time.perf_counter()
import torch  # noqa: E402

from ranker_model import CTRRanker, example_inputs  # noqa: E402

PKG = os.environ.get("RANKER_PKG", "artifacts/ctr_ranker.pt2")


def main():
    t_import = time.perf_counter() - T_START
    t0 = time.perf_counter()
    runner = torch._inductor.aoti_load_package(PKG)
    t_load = time.perf_counter() - t0

    ref = CTRRanker().eval()
    ref.load_state_dict(torch.load(os.path.join(os.path.dirname(PKG), "ranker_ref_state.pt")))

    t0 = time.perf_counter()
    worst = 0.0
    lat = []
    for i, bs in enumerate([1 + 1, 17, 64, 256, 33, 64, 128, 8]):
        dense, sparse = example_inputs(bs, seed=100 + i)
        s = time.perf_counter()
        scores = runner(dense, sparse)
        lat.append(time.perf_counter() - s)
        with torch.no_grad():
            worst = max(worst, (scores - ref(dense, sparse)).abs().max().item())
    t_serve = time.perf_counter() - t0
    ready = time.perf_counter() - T_START
    print(json.dumps({
        "pod": os.environ.get("POD_NAME", "pod"),
        "import_s": round(t_import, 2),
        "aoti_load_package_s": round(t_load, 2),
        "first_requests_s": round(t_serve, 3),
        "p50_request_ms": round(1000 * sorted(lat)[len(lat) // 2], 3),
        "max_abs_diff_vs_eager": worst,
        "time_to_ready_s": round(ready, 2),
    }))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
