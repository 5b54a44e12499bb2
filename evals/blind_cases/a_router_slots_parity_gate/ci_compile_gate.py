"""CI gate: the compiled MoE layer must reproduce eager outputs before we flip
`compile: true` in the training config."""
import argparse
import json
import logging
import sys

import torch

from router import BudgetRouterMoE

log = logging.getLogger("compile_gate")

CASES = [
    # (name, batch, seq, seed)
    ("short", 4, 16, 0),
    ("medium", 8, 64, 1),
    ("long", 2, 256, 2),
]


def compare(name, eager_out, comp_out, atol, rtol):
    (y_e, s_e), (y_c, s_c) = eager_out, comp_out
    res = {"case": name}
    res["slot_mismatch"] = int((s_e != s_c).sum())
    res["slots_eager"] = torch.bincount(s_e.flatten(), minlength=3).tolist()
    res["slots_compiled"] = torch.bincount(s_c.flatten(), minlength=3).tolist()
    res["max_abs_diff"] = (y_e - y_c).abs().max().item()
    try:
        torch.testing.assert_close(y_c, y_e, atol=atol, rtol=rtol)
        res["outputs_close"] = True
    except AssertionError as err:
        res["outputs_close"] = False
        res["detail"] = str(err).splitlines()[0:4]
    res["ok"] = res["outputs_close"] and res["slot_mismatch"] == 0
    return res


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--d-model", type=int, default=64)
    p.add_argument("--experts", type=int, default=8)
    p.add_argument("--max-slots", type=int, default=2)
    p.add_argument("--atol", type=float, default=1e-5)
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--report", default=None, help="write a JSON report here")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")

    torch.manual_seed(1234)
    layer = BudgetRouterMoE(args.d_model, 2 * args.d_model, args.experts, args.max_slots).eval()
    compiled = torch.compile(layer, dynamic=False)

    results = []
    with torch.no_grad():
        for name, b, t, seed in CASES:
            g = torch.Generator().manual_seed(seed)
            x = torch.randn(b, t, args.d_model, generator=g)
            res = compare(name, layer(x), compiled(x), args.atol, args.rtol)
            results.append(res)
            log.info("%-7s ok=%s slot_mismatch=%d slots eager=%s compiled=%s max|diff|=%.3e",
                     name, res["ok"], res["slot_mismatch"], res["slots_eager"],
                     res["slots_compiled"], res["max_abs_diff"])
            for line in res.get("detail", []):
                log.info("        %s", line)

    if args.report:
        with open(args.report, "w") as f:
            json.dump(results, f, indent=2)
    failed = [r["case"] for r in results if not r["ok"]]
    if failed:
        log.error("compile parity gate FAILED for: %s", ", ".join(failed))
        sys.exit(1)
    log.info("compile parity gate passed")


if __name__ == "__main__":
    main()
