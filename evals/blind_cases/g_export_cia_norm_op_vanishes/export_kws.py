import argparse
import collections
import time

import torch
import torch.nn as nn

import kws_ops
from kws_ops import DELEGATED_OPS


class Block(nn.Module):
    def __init__(self, d, k=7, expand=2):
        super().__init__()
        self.norm_w = nn.Parameter(torch.ones(d))
        self.dw = nn.Parameter(torch.randn(d, 1, k) * 0.2)
        self.gate = nn.Parameter(torch.ones(d))
        self.ff1 = nn.Linear(d, expand * d)
        self.ff2 = nn.Linear(expand * d, d)
        self.ff_norm_w = nn.Parameter(torch.ones(d))

    def forward(self, x):
        h = torch.ops.kwsops.rms_norm(x, self.norm_w, 1e-6)
        x = x + torch.ops.kwsops.gated_dwconv(h, self.dw, self.gate)
        h = torch.ops.kwsops.rms_norm(x, self.ff_norm_w, 1e-6)
        return x + self.ff2(torch.nn.functional.silu(self.ff1(h)))


class KeywordSpotter(nn.Module):
    def __init__(self, n_mels=40, d=64, layers=4, keywords=12):
        super().__init__()
        self.inp = nn.Linear(n_mels, d)
        self.blocks = nn.ModuleList([Block(d) for _ in range(layers)])
        self.out_norm_w = nn.Parameter(torch.ones(d))
        self.cls = nn.Linear(d, keywords)

    def forward(self, feats):
        x = self.inp(feats)
        for b in self.blocks:
            x = b(x)
        x = torch.ops.kwsops.rms_norm(x, self.out_norm_w, 1e-6)
        return self.cls(x.mean(dim=1))


def lower_for_npu(ep):
    """Partition: custom kernels go to the NPU, everything else must be core ATen."""
    gm = ep.graph_module
    placed = collections.Counter()
    host = collections.Counter()
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        if node.target in DELEGATED_OPS:
            placed[DELEGATED_OPS[node.target]] += 1
        else:
            host[str(node.target)] += 1
    return placed, host


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=98)
    ap.add_argument("--out", default="/tmp/kws_npu_plan.txt")
    args = ap.parse_args()

    torch.manual_seed(0)
    model = KeywordSpotter().eval()
    feats = torch.randn(2, args.frames, 40)
    with torch.no_grad():
        ref = model(feats)

    t0 = time.time()
    ep = torch.export.export(model, (feats,), strict=True)
    # the NPU compiler only accepts the core ATen opset
    ep = ep.run_decompositions()
    print(f"export + decompositions: {time.time() - t0:.2f}s")

    got = ep.module()(feats)
    print(f"exported program max abs diff vs eager: {(got - ref).abs().max().item():.3e}")

    placed, host = lower_for_npu(ep)
    n_blocks = len(model.blocks)
    expected = {"npu_rms_norm": 2 * n_blocks + 1, "npu_gated_dwconv": n_blocks}
    print("ops placed on NPU :", dict(placed) or "{}")
    print("host ops (top 6)  :", dict(host.most_common(6)))
    with open(args.out, "w") as f:
        for k, v in sorted(host.items()):
            f.write(f"host {k} {v}\n")
        for k, v in sorted(placed.items()):
            f.write(f"npu {k} {v}\n")
    missing = {k: v - placed.get(k, 0) for k, v in expected.items() if placed.get(k, 0) != v}
    if missing:
        raise SystemExit(f"NPU plan incomplete, kernels not matched: {missing}")
    print("NPU plan OK")


if __name__ == "__main__":
    main()
