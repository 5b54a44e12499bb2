"""Eager vs compiled vs an fp64 reference, per output, the way torch._dynamo.utils.same judges
it (allclose at tol, else RMSE(compiled, fp64) <= multiplier * RMSE(eager, fp64) + tol/10), and
whether torch._inductor.config.fallback_random / emulate_precision_casts make it pass.

  --model file.py:factory   a model target
  --graph checkpoint.py     a graph dumped by the minifier's accuracy check (TORCHDYNAMO_REPRO_LEVEL=4)
Writes JSON to --result."""
import argparse
import copy
import json
import math
import os
import re
import sys
import traceback


def _flat(x):
    import torch
    out = []

    def walk(v, path):
        if isinstance(v, torch.Tensor):
            out.append((path or "output", v))
        elif isinstance(v, (list, tuple)):
            for i, e in enumerate(v):
                walk(e, f"{path}[{i}]")
        elif isinstance(v, dict):
            for k, e in v.items():
                walk(e, f"{path}[{k!r}]")
        elif hasattr(v, "__dataclass_fields__") or type(v).__name__.endswith("Output"):
            for k in getattr(v, "__dataclass_fields__", {}) or vars(v):
                walk(getattr(v, k), f"{path}.{k}")
    walk(x, "")
    return out


def _multiplier(res, fp64, ref, tol):
    import torch
    m = 3.0 if res.dtype in (torch.float16, torch.bfloat16) else 2.0
    if fp64.numel() < 1000 or (ref.ndim == 4 and ref.shape[-1] == ref.shape[-2] == 1) or tol >= 2e-2:
        m = 3.0
    return m


def compare(ref_out, res_out, fp64_out, tol):
    """Per-output numbers + verdict (torch._dynamo.utils.same on each output)."""
    import torch
    from torch._dynamo.utils import same
    refs, ress, fps = _flat(ref_out), _flat(res_out), _flat(fp64_out)
    rows = []
    for (name, ref), (_, res), (_, fp) in zip(refs, ress, fps):
        row = {"output": name, "shape": list(ref.shape), "dtype": str(ref.dtype).replace("torch.", "")}
        if not ref.is_floating_point():
            row.update(verdict="pass" if torch.equal(ref, res) else "FAIL", exact=bool(torch.equal(ref, res)))
            rows.append(row)
            continue
        r64, c64, f64 = ref.detach().double(), res.detach().double(), fp.detach().double()
        diff = (c64 - r64).abs()
        row["max_abs_err"] = float(diff.max()) if diff.numel() else 0.0
        row["max_rel_err"] = float((diff / r64.abs().clamp_min(1e-12)).max()) if diff.numel() else 0.0
        row["max_abs_err_vs_fp64"] = float((c64 - f64).abs().max()) if diff.numel() else 0.0
        rmse_ref = float(torch.sqrt(torch.mean((f64 - r64) ** 2))) if diff.numel() else 0.0
        rmse_res = float(torch.sqrt(torch.mean((f64 - c64) ** 2))) if diff.numel() else 0.0
        row["rmse_eager_vs_fp64"], row["rmse_compiled_vs_fp64"] = rmse_ref, rmse_res
        row["rmse_ratio"] = (rmse_res / rmse_ref) if rmse_ref > 0 else (0.0 if rmse_res == 0 else math.inf)
        row["multiplier"] = _multiplier(res, fp, ref, tol)
        row["nan_compiled"] = bool(torch.isnan(res).any())
        row["nan_eager"] = bool(torch.isnan(ref).any())
        row["allclose"] = bool(torch.allclose(ref, res, atol=tol, rtol=tol))
        ok = same(ref, res, fp64_ref=fp, tol=tol, log_error=lambda *a, **k: None)
        row["verdict"] = "pass" if ok else "FAIL"
        rows.append(row)
    if len(refs) != len(ress):
        rows.append({"output": "(structure)", "verdict": "FAIL", "note": f"{len(refs)} eager vs {len(ress)} compiled tensors"})
    return rows


def _fp64(model, args, kwargs):
    import torch
    from torch._dynamo.debug_utils import cast_to_fp64
    a64 = [a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]
    if isinstance(model, torch.fx.GraphModule):
        m64 = cast_to_fp64(copy.deepcopy(model), list(args))[0]
    elif isinstance(model, torch.nn.Module):
        m64 = copy.deepcopy(model).to(torch.float64)
    else:
        m64 = model
    k64 = {k: (v.double() if isinstance(v, torch.Tensor) and v.is_floating_point() else v) for k, v in kwargs.items()}
    return m64, a64, k64


def evaluate(model, args, kwargs, tol, compile_kw, variants=True, seed=0):
    import torch

    def call(fn, a, k):
        torch.manual_seed(seed)
        with torch.no_grad():
            return fn(*a, **k)

    ref = call(model, args, kwargs)
    m64, a64, k64 = _fp64(model, args, kwargs)
    try:
        fp64 = call(m64, a64, k64)
    except Exception as e:  # some ops have no fp64 kernel: fall back to eager as the reference
        fp64, note = ref, f"fp64 reference failed ({type(e).__name__}); eager used as reference"
    else:
        note = None
    out = {"tol": tol, "note": note, "configs": []}
    configs = [("default", {})]
    if variants:
        configs += [("fallback_random=True", {"fallback_random": True}),
                    ("emulate_precision_casts=True", {"emulate_precision_casts": True})]
    for name, opts in configs:
        torch._dynamo.reset()
        entry = {"config": name}
        try:
            cfn = torch.compile(model, **compile_kw, options=opts or None) if opts else torch.compile(model, **compile_kw)
            res = call(cfn, args, kwargs)
            rows = compare(ref, res, fp64, tol)
            entry["outputs"] = rows
            entry["verdict"] = "FAIL" if any(r["verdict"] == "FAIL" for r in rows) else "pass"
        except Exception as e:
            entry["verdict"] = "ERROR"
            entry["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
        out["configs"].append(entry)
        if name == "default" and entry["verdict"] == "pass":
            break   # nothing to fix
    return out


def load_graph(path):
    """mod, args from a minifier checkpoint / repro file (run_repro(command='get_args'))."""
    from torch._dynamo.repro.after_aot import run_repro
    src = open(path).read()
    g = {"__name__": "cd_graph", "__file__": path}
    exec(compile(src, path, "exec"), g)
    m = re.search(r"save_dir=('[^']*'|None)", src)
    save_dir = eval(m.group(1)) if m else None
    sys.argv = [path]   # run_repro parses the command line
    mod, args = run_repro(g["mod"], g["load_args"], command="get_args", accuracy="accuracy",
                          save_dir=save_dir, tracing_mode="real", check_str=None)
    return mod, list(args)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--result", required=True)
    p.add_argument("--model")
    p.add_argument("--graph")
    p.add_argument("--tol", type=float, default=1e-4)
    p.add_argument("--backend", default="inductor")
    p.add_argument("--mode")
    p.add_argument("--no-variants", action="store_true")
    a = p.parse_args()
    res = {"ok": True}
    try:
        import torch
        res["torch_version"] = torch.__version__
        if a.model:
            sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
            from cdlib.run import target
            t = target.load(a.model)
            model, args, kwargs = t["model"], t["args"], t["kwargs"]
            res["training"] = bool(getattr(model, "training", False))
        else:
            model, args = load_graph(a.graph)
            kwargs = {}
        kw = {"backend": a.backend}
        if a.mode:
            kw["mode"] = a.mode
        res.update(evaluate(model, args, kwargs, a.tol, kw, variants=not a.no_variants))
    except Exception as e:
        res = {"ok": False, "error": f"{type(e).__name__}: {str(e).splitlines()[0][:400] if str(e) else ''}",
               "traceback": traceback.format_exc()[-3000:]}
    with open(a.result, "w") as f:
        json.dump(res, f, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
