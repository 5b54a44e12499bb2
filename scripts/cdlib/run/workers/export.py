"""Worker for `export`: non-strict export, strict export, draft_export, suggested-fix check,
and (--dynamic) a dynamic_shapes proposal. Writes one JSON result file.

    python -m cdlib.run.workers.export --spec file.py:factory --result R.json [--dynamic] [--no-strict] [--no-draft]
"""
import argparse
import inspect
import re
import sys
import time
import traceback

from cdlib.decide.export import size_one_guard
from cdlib.run.workers import export_common as ec


def _attempt(fn):
    t0 = time.monotonic()
    try:
        ep = fn()
        return ep, {"ok": True, "seconds": round(time.monotonic() - t0, 2)}, None
    except Exception as e:  # noqa: BLE001
        return None, {"ok": False, "seconds": round(time.monotonic() - t0, 2)}, e


def _fail_info(exc, strict):
    info = ec.classify_exception(exc, strict)
    info["location"] = ec.location_from_exc(exc)
    info["full_message"] = str(exc)[:4000]
    return info


def _graph_summary(ep):
    try:
        ops = {}
        for n in ep.graph.nodes:
            if n.op == "call_function":
                ops[str(n.target)] = ops.get(str(n.target), 0) + 1
        rc = {str(k): [_bound(v.lower), _bound(v.upper)] for k, v in ep.range_constraints.items()}
        return {"nodes": len(ep.graph.nodes), "call_function": sum(ops.values()), "range_constraints": rc,
                "inputs": _input_shapes(ep)}
    except Exception as e:  # noqa: BLE001
        return {"error": ec.first_line(e)}


def _bound(v):
    try:
        iv = int(v)
        return iv
    except Exception:  # int_oo and friends
        return None if "oo" in str(v) else str(v)


def _input_shapes(ep):
    out = []
    user_inputs = list(ep.graph_signature.user_inputs)
    nodes = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    for name in user_inputs:
        n = nodes.get(name)
        val = n.meta.get("val") if n is not None else None
        if hasattr(val, "shape"):
            out.append({"name": name, "shape": [str(s) for s in val.shape], "dtype": str(val.dtype)})
        else:
            out.append({"name": name, "value": str(val)})
    return out


def _export(torch, tgt, strict, dynamic_shapes):
    return torch.export.export(tgt["model"], tgt["args"], tgt["kwargs"], dynamic_shapes=dynamic_shapes,
                               strict=strict)


def _eager_off_multiple(torch, tgt, ds, fixes):
    """When PyTorch's suggested fix makes dims multiples (`height = 8*_height`): run the model eagerly once
    with each such dim one larger than the example's (not a multiple) and say whether it runs. Decides
    whether the model itself needs the multiple, or only the export does. None when no such fix or the
    dims cannot be found in the dynamic_shapes given."""
    want = {m.group(1): int(m.group(2)) for m in (re.match(r"(\w+) = (\d+)\*_\1$", x.strip()) for x in fixes) if m}
    if not want or not isinstance(ds, dict):
        return None
    names = _param_names(tgt["model"], tgt["args"], tgt["kwargs"]) or []
    args, kwargs, sizes = list(tgt["args"]), dict(tgt["kwargs"] or {}), {}
    for key, spec in ds.items():
        if not isinstance(spec, dict):
            continue
        for dim, d in spec.items():
            dname = getattr(d, "__name__", None)
            if dname not in want:
                continue
            holder, idx = (args, names.index(key)) if key in names else (kwargs, key) if key in kwargs else (None, None)
            if holder is None or not isinstance(holder[idx], torch.Tensor):
                continue
            t = holder[idx]
            shape = list(t.shape)
            shape[dim] += 1
            make = torch.randn if t.is_floating_point() else torch.zeros
            holder[idx] = make(shape, dtype=t.dtype, device=t.device)
            sizes[dname] = shape[dim]
    if not sizes:
        return None
    try:
        with torch.no_grad():
            tgt["model"](*args, **kwargs)
        return {"sizes": sizes, "ok": True}
    except Exception as e:  # noqa: BLE001
        return {"sizes": sizes, "ok": False, "error": f"{type(e).__name__}: {ec.first_line(e)}"[:300]}


# ---------------------------------------------------------------------- --dynamic: propose a spec

def _param_names(model, args, kwargs):
    """Positional-arg index -> forward() parameter name (None when it cannot be named)."""
    try:
        fwd = model.forward if hasattr(model, "forward") else model
        sig = inspect.signature(fwd)
        bound = sig.bind(*args, **kwargs)
    except (TypeError, ValueError):
        return None
    names = []
    for pname, p in sig.parameters.items():
        if pname not in bound.arguments:
            continue
        if p.kind == p.VAR_POSITIONAL:
            return None
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and len(names) < len(args):
            names.append(pname)
    return names if len(names) == len(args) else None


def _auto_spec(torch, value):
    from torch.utils import _pytree as pytree
    from torch.export import Dim

    def leaf(x):
        if isinstance(x, torch.Tensor) and x.dim() > 0:
            return {i: Dim.AUTO for i in range(x.dim())}
        return None
    return pytree.tree_map(leaf, value, is_leaf=lambda x: isinstance(x, torch.Tensor))


def propose_dynamic(torch, tgt, result_dims):
    """Export with Dim.AUTO on every tensor dim, read the ranges back and write the spec as code."""
    import sympy
    from torch.utils import _pytree as pytree
    args, kwargs, model = tgt["args"], tgt["kwargs"], tgt["model"]
    names = _param_names(model, args, kwargs)
    if names is not None:
        auto = {n: _auto_spec(torch, a) for n, a in zip(names, args)}
        auto.update({k: _auto_spec(torch, v) for k, v in kwargs.items()})
    else:
        if kwargs:
            return {"ok": False, "error": "cannot name forward()'s arguments (uses *args?) and kwargs are given"}
        auto = tuple(_auto_spec(torch, a) for a in args)
    ep, att, exc = _attempt(lambda: torch.export.export(model, args, kwargs, dynamic_shapes=auto, strict=False))
    if exc is not None:
        info = _fail_info(exc, False)
        return {"ok": False, "stage": "auto", "failure": info}

    # placeholder values in export's own (args, kwargs) structure
    ph = {n.name: n.meta.get("val") for n in ep.graph.nodes if n.op == "placeholder"}
    flat = [ph.get(nm) for nm in ep.graph_signature.user_inputs]
    try:
        p_args, p_kwargs = pytree.tree_unflatten(flat, ep.call_spec.in_spec)
    except Exception as e:  # noqa: BLE001
        return {"ok": False, "stage": "read-back", "error": ec.first_line(e)}
    ranges = {}
    for sym, vr in ep.range_constraints.items():
        ranges[str(sym)] = (_bound(vr.lower), _bound(vr.upper))

    dims = {}        # symbol name -> python variable name
    dim_decl = []    # code lines declaring Dims
    rows = []

    def var_for(sym, hint):
        s = str(sym)
        if s not in dims:
            base = re.sub(r"\W", "_", hint)
            used = set(dims.values())
            nm = base
            i = 2
            while nm in used:
                nm = f"{base}_{i}"
                i += 1
            dims[s] = nm
            lo, hi = ranges.get(s, (None, None))
            kw = []
            if isinstance(lo, int) and lo > 0:
                kw.append(f"min={lo}")
            if isinstance(hi, int):
                kw.append(f"max={hi}")
            dim_decl.append(f"{nm} = Dim({nm!r}{', ' if kw else ''}{', '.join(kw)})")
        return dims[s]

    def spec_code(val, real, path):
        """Code for one argument's spec (mirrors its pytree)."""
        if isinstance(real, torch.Tensor):
            if real.dim() == 0 or not hasattr(val, "shape"):
                return "None"
            entries = []
            for i, s in enumerate(val.shape):
                size = int(real.shape[i])
                expr = s.node.expr if isinstance(s, torch.SymInt) else None
                if expr is not None and not getattr(expr, "is_number", False):
                    syms = sorted(expr.free_symbols, key=str)
                    if len(syms) == 1 and expr == syms[0]:
                        code = var_for(syms[0], f"{path}_dim{i}")
                    elif len(syms) == 1:
                        v = var_for(syms[0], f"{path}_dim{i}")
                        code = str(expr.subs(syms[0], sympy.Symbol(v)))
                        if not re.fullmatch(r"[\w\s*+\-]+", code):
                            code = "Dim.AUTO"
                    else:
                        code = "Dim.AUTO"
                    lo, hi = ranges.get(str(syms[0]), (None, None)) if syms else (None, None)
                    rows.append({"input": path, "dim": i, "example": size, "dynamic": True,
                                 "symbol": str(expr), "min": lo, "max": hi, "spec": code})
                    entries.append(f"{i}: {code}")
                else:
                    rows.append({"input": path, "dim": i, "example": size, "dynamic": False, "symbol": None,
                                 "min": None, "max": None, "spec": "static"})
            return "{" + ", ".join(entries) + "}" if entries else "None"
        if isinstance(real, (list, tuple)):
            parts = [spec_code(v, r, f"{path}_{j}") for j, (v, r) in enumerate(zip(val, real))]
            if isinstance(real, tuple):
                return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
            return "[" + ", ".join(parts) + "]"
        if isinstance(real, dict):
            return "{" + ", ".join(f"{k!r}: {spec_code(val[k], real[k], f'{path}_{k}')}" for k in real) + "}"
        return "None"

    if names is not None:
        items = [f"{n!r}: {spec_code(v, r, n)}" for n, v, r in zip(names, p_args, args)]
        items += [f"{k!r}: {spec_code(p_kwargs[k], kwargs[k], k)}" for k in kwargs]
        spec_line = "dynamic_shapes = {" + ", ".join(items) + "}"
    else:
        parts = [spec_code(v, r, f"arg{j}") for j, (v, r) in enumerate(zip(p_args, args))]
        spec_line = "dynamic_shapes = (" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    code = "from torch.export import Dim\n" + "".join(d + "\n" for d in dim_decl) + spec_line + "\n"
    out = {"ok": True, "auto_seconds": att["seconds"], "code": code, "dims": rows,
           "range_constraints": {k: list(v) for k, v in ranges.items()}}
    # verify: exec the emitted code and export with it
    ns = {}
    try:
        exec(compile(code, "<dynamic_shapes>", "exec"), ns)
    except Exception as e:  # noqa: BLE001
        out.update(ok=False, verified=False, error=f"emitted code does not run: {ec.first_line(e)}")
        return out
    ep2, att2, exc2 = _attempt(lambda: torch.export.export(model, args, kwargs,
                                                           dynamic_shapes=ns["dynamic_shapes"], strict=False))
    out["verified"] = exc2 is None
    out["verify_seconds"] = att2["seconds"]
    if exc2 is not None:
        out["verify_failure"] = _fail_info(exc2, False)
    else:
        out["graph"] = _graph_summary(ep2)
        try:
            out["other_sizes"] = _check_other_sizes(torch, ep2, model, args, kwargs, rows)
        except Exception as e:  # noqa: BLE001 - a best-effort extra check
            out["other_sizes"] = {"checked": False, "why": f"{type(e).__name__}: {ec.first_line(e)}"}
    return out


def _check_other_sizes(torch, ep, model, args, kwargs, rows):
    """Run the exported program and eager on inputs whose dynamic dims have another size
    (example+1, or -1 at the top of the range); both must run and agree."""
    new_size = {}
    for r in rows:
        if not r["dynamic"]:
            continue
        if not re.fullmatch(r"s\d+|u\d+|[a-z]\d+", r["symbol"] or ""):
            return {"checked": False, "why": f"derived dim {r['symbol']}: not varied"}
        hi, lo, ex = r["max"], r["min"] or 0, r["example"]
        n = ex + 1 if hi is None or ex + 1 <= hi else ex - 1
        if n < max(lo, 2):
            return {"checked": False, "why": f"no other size in the range of {r['input']} dim {r['dim']}"}
        new_size[r["symbol"]] = n
    if not new_size:
        return {"checked": False, "why": "no dynamic dims"}
    return _check_at_sizes(torch, ep, model, args, kwargs, new_size)


def _check_at_sizes(torch, ep, model, args, kwargs, new_size):
    """Run the exported program and eager on the example inputs with the dims of these symbols ({"s27": 2}) set to
    those sizes; both must run and agree."""
    import copy
    from torch.utils import _pytree as pytree
    ph = {n.name: n.meta.get("val") for n in ep.graph.nodes if n.op == "placeholder"}
    vals = [ph.get(nm) for nm in ep.graph_signature.user_inputs]
    p_args, p_kwargs = pytree.tree_unflatten(vals, ep.call_spec.in_spec)
    flat_real, spec = pytree.tree_flatten((args, kwargs))
    flat_fake, _ = pytree.tree_flatten((p_args, p_kwargs))
    if len(flat_real) != len(flat_fake):
        return {"checked": False, "why": "input structure differs"}
    gen = torch.Generator().manual_seed(0)
    new_flat = []
    for real, fake in zip(flat_real, flat_fake):
        if isinstance(real, torch.Tensor) and hasattr(fake, "shape"):
            shape = [new_size.get(str(d.node.expr), int(real.shape[i])) if isinstance(d, torch.SymInt) else int(d)
                     for i, d in enumerate(fake.shape)]
            if real.is_floating_point():
                t = torch.randn(shape, generator=gen, dtype=real.dtype)
            else:  # indices/masks: values from the example, tiled to the new shape
                t = real.flatten()[:1].expand(shape).clone() if real.numel() else torch.zeros(shape, dtype=real.dtype)
            new_flat.append(t.to(real.device))
        else:
            new_flat.append(real)
    nargs, nkwargs = pytree.tree_unflatten(new_flat, spec)
    shapes = [list(t.shape) for t in new_flat if isinstance(t, torch.Tensor)]
    try:
        with torch.no_grad():
            ref = model(*copy.deepcopy(nargs), **copy.deepcopy(nkwargs))
    except Exception as e:  # noqa: BLE001
        return {"checked": False, "shapes": shapes, "why": f"eager fails on these sizes: {ec.first_line(e)}"}
    try:
        with torch.no_grad():
            res = ep.module()(*nargs, **nkwargs)
    except Exception as e:  # noqa: BLE001
        return {"checked": True, "ok": False, "shapes": shapes,
                "error": f"{type(e).__name__}: {ec.first_line(e)}"}
    rl, sl = pytree.tree_leaves(ref), pytree.tree_leaves(res)
    ok = len(rl) == len(sl) and all(
        (not isinstance(a, torch.Tensor)) or (a.shape == b.shape and torch.allclose(a, b, rtol=1e-4, atol=1e-4))
        for a, b in zip(rl, sl))
    # the graph's own output shapes at these sizes: ep.module() runs some ops eagerly (a squeeze), a package runs
    # the graph as traced (review of batch 66: under backed_size_oblivious a squeeze of a size-1 dim was traced away)
    meta = _graph_output_shapes(ep, new_size)
    eager_shapes = [list(a.shape) for a in rl if isinstance(a, torch.Tensor)]
    if ok and meta is not None and len(meta) == len(eager_shapes) and meta != eager_shapes:
        return {"checked": True, "ok": False, "shapes": shapes,
                "error": f"the exported graph's output shapes at these sizes are {meta}, eager's {eager_shapes}"}
    return {"checked": True, "ok": bool(ok), "shapes": shapes}


def _graph_output_shapes(ep, new_size):
    """The exported graph's output tensor shapes with its size symbols set ({"s27": 2}), or None."""
    try:
        out = next(n for n in ep.graph.nodes if n.op == "output")
        shapes = []
        for a in out.args[0]:
            val = getattr(a, "meta", {}).get("val")
            if hasattr(val, "shape"):
                dims = []
                for d in val.shape:
                    if isinstance(d, int):
                        dims.append(d)
                    else:
                        expr = d.node.expr
                        dims.append(int(expr.xreplace({s: new_size[str(s)] for s in expr.free_symbols
                                                        if str(s) in new_size})))
                shapes.append(dims)
        return shapes
    except Exception:  # noqa: BLE001
        return None


# ---------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", required=True)
    ap.add_argument("--result", required=True)
    ap.add_argument("--dynamic", action="store_true")
    ap.add_argument("--no-strict", action="store_true")
    ap.add_argument("--no-draft", action="store_true")
    a = ap.parse_args()
    res = {"phase": "start"}
    ec.write_result(a.result, res)
    import torch
    res["torch_version"] = torch.__version__
    loaded = ec.load_target(a.spec)
    if "error" in loaded:
        res["load_error"] = loaded["error"]
        ec.write_result(a.result, res)
        return 0
    tgt = loaded["target"]
    ds = tgt["dynamic_shapes"]
    res["has_dynamic_shapes"] = ds is not None
    res["dynamic_shapes_given"] = repr(ds) if ds is not None else None
    res["attempts"] = {}

    def record(name, strict, dyn):
        print(f"[worker] {name} export", file=sys.stderr, flush=True)
        ep, att, exc = _attempt(lambda: _export(torch, tgt, strict, dyn))
        if exc is not None:
            att["failure"] = _fail_info(exc, strict)
        else:
            att["graph"] = _graph_summary(ep)
        res["attempts"][name] = att
        ec.write_result(a.result, res)
        return ep, exc

    ep, exc = record("non_strict", False, ds)
    if not a.no_strict:
        record("strict", True, ds)

    # PyTorch's own suggested Dim fix, applied and re-checked
    for name, att in list(res["attempts"].items()):
        f = att.get("failure")
        if f and f["cls"] in ("constraint_violation", "specialized_dim") and ds is not None \
                and f["details"].get("suggested_fixes"):
            from torch.export.dynamic_shapes import refine_dynamic_shapes_from_suggested_fixes
            try:
                msg = "Suggested fixes:\n" + "\n".join("  " + x for x in f["details"]["suggested_fixes"])
                new_ds = refine_dynamic_shapes_from_suggested_fixes(msg, ds)
            except Exception as e:  # noqa: BLE001
                res["suggested_fix_check"] = {"applied": False, "error": ec.first_line(e)}
                break
            _, att2, exc2 = _attempt(lambda: _export(torch, tgt, name == "strict", new_ds))
            res["suggested_fix_check"] = {"applied": True, "mode": name, "fixes": f["details"]["suggested_fixes"],
                                          "new_dynamic_shapes": repr(new_ds), "verified": exc2 is None,
                                          "seconds": att2["seconds"],
                                          "eager_off_multiple": _eager_off_multiple(torch, tgt, ds,
                                                                                    f["details"]["suggested_fixes"])}
            if exc2 is not None:
                res["suggested_fix_check"]["failure"] = _fail_info(exc2, name == "strict")
            break

    # a guard that compares a size made from a Dim with 1 and no suggested fix: export again under
    # backed_size_oblivious (such 0/1 checks then add no guard), with the ranges read back and the exported program
    # run against eager at the ranges' low ends, the size the guard excluded (blind A/B batch 66)
    for name, att in list(res["attempts"].items()):
        f = att.get("failure")
        guard = re.search(r"satisfy the generated guard (.+?)\.?\s*$", (f or {}).get("full_message") or "", re.M)
        if f and f["cls"] == "constraint_violation" and ds is not None and guard and size_one_guard(guard.group(1)) \
                and not f["details"].get("suggested_fixes"):
            print("[worker] export under backed_size_oblivious=True", file=sys.stderr, flush=True)
            from torch.fx.experimental import _config as fx_config
            with fx_config.patch(backed_size_oblivious=True):
                ep2, att2, exc2 = _attempt(lambda: _export(torch, tgt, name == "strict", ds))
            chk = {"mode": name, "verified": exc2 is None, "seconds": att2["seconds"]}
            if exc2 is not None:
                chk["failure"] = _fail_info(exc2, name == "strict")
            else:
                chk["range_constraints"] = _graph_summary(ep2).get("range_constraints")
                low = {str(k): int(v.lower) for k, v in ep2.range_constraints.items()
                       if re.fullmatch(r"s\d+", str(k)) and _bound(v.lower) is not None}
                chk["at_low_end"] = _check_at_sizes(torch, ep2, tgt["model"], tgt["args"], tgt["kwargs"], low)
            res["size_oblivious_check"] = chk
            ec.write_result(a.result, res)
            break

    if not a.no_draft:
        print("[worker] draft_export", file=sys.stderr, flush=True)
        dep, att, exc = _attempt(lambda: torch.export.draft_export(tgt["model"], tgt["args"], tgt["kwargs"],
                                                                   dynamic_shapes=ds))
        if exc is not None:
            att["failure"] = _fail_info(exc, False)
        else:
            att["failures"] = ec.draft_failures(dep)
        res["draft"] = att
        ec.write_result(a.result, res)

    # constraint violations carry no user frame: borrow it from draft_export's matching failure
    dfs = [d for d in (res.get("draft") or {}).get("failures") or [] if d.get("location")]
    for att in res["attempts"].values():
        f = att.get("failure")
        if f and not f.get("location"):
            same = [d for d in dfs if d["cls"] == f["cls"]] or \
                   [d for d in dfs if f["cls"] in ("constraint_violation", "specialized_dim")
                    and d["failure_type"] == "GUARD_ADDED"]
            if same:
                f["location"] = same[0]["location"]
                f["location_from"] = "draft_export"
    ec.write_result(a.result, res)

    if a.dynamic:
        print("[worker] proposing dynamic_shapes (Dim.AUTO)", file=sys.stderr, flush=True)
        try:
            res["dynamic"] = propose_dynamic(torch, tgt, None)
        except Exception as e:  # noqa: BLE001
            res["dynamic"] = {"ok": False, "error": f"{type(e).__name__}: {ec.first_line(e)}",
                              "traceback": traceback.format_exc()[-2000:]}
    res["phase"] = "done"
    ec.write_result(a.result, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
