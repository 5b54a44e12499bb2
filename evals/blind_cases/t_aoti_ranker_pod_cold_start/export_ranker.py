"""CI step: export the ranker and build the AOTInductor package that the serving image ships."""
import os
import time

import torch
from torch.export import Dim

from ranker_model import CTRRanker, example_inputs

PKG = os.environ.get("RANKER_PKG", "artifacts/ctr_ranker.pt2")


def main():
    torch.manual_seed(0)
    model = CTRRanker().eval()
    dense, sparse = example_inputs(64)
    batch = Dim("batch", min=2, max=1024)
    t0 = time.perf_counter()
    with torch.no_grad():
        ep = torch.export.export(model, (dense, sparse), dynamic_shapes=({0: batch}, {0: batch}))
        os.makedirs(os.path.dirname(PKG), exist_ok=True)
        path = torch._inductor.aoti_compile_and_package(ep, package_path=PKG)
    torch.save(model.state_dict(), os.path.join(os.path.dirname(PKG), "ranker_ref_state.pt"))
    print(f"built {path} in {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
