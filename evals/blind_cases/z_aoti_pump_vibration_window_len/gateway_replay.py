"""Replay a day of gateway traffic through the packaged model and compare with the
Python model. Gateways have different sensor firmware: most sample at 250 Hz
(500-sample windows), older units at 200 Hz (400 samples), new ones at 320 Hz
(640 samples)."""
import os
import time
from collections import Counter

import torch

from model import PumpNet, make_windows

PKG = os.environ.get("PUMP_PKG", "pumpnet.pt2")
GATEWAYS = [("gw-north", 250.0), ("gw-east", 200.0), ("gw-south", 320.0), ("gw-west", 250.0)]


def main():
    model = PumpNet()
    model.load_state_dict(torch.load("pumpnet_state.pt"))
    model.eval()
    runner = torch._inductor.aoti_load_package(PKG)

    g = torch.Generator().manual_seed(11)
    for name, fs in GATEWAYS:
        T = int(2.0 * fs)
        x, y = make_windows(64, T, g, fs=fs)
        agree, correct_pkg, correct_py, worst = 0, 0, 0, 0.0
        preds = Counter()
        t0 = time.perf_counter()
        with torch.no_grad():
            for i in range(x.shape[0]):
                w = x[i:i + 1]
                out = runner(w)
                ref = model(w)
                worst = max(worst, (out - ref).abs().max().item())
                p = int(out.argmax(-1))
                preds[p] += 1
                agree += int(p == int(ref.argmax(-1)))
                correct_pkg += int(p == int(y[i]))
                correct_py += int(int(ref.argmax(-1)) == int(y[i]))
        dt = (time.perf_counter() - t0) / x.shape[0] * 1e3
        print(f"{name:9s} fs={fs:5.0f}Hz T={T:4d}  pkg acc {correct_pkg / 64:.2f}  py acc {correct_py / 64:.2f}  "
              f"agree {agree}/64  max|diff| {worst:.3g}  pkg classes {dict(preds)}  ({dt:.2f} ms/window)")


if __name__ == "__main__":
    main()
