"""Worker for `aoti`: export -> aoti_compile_and_package -> aoti_load_package -> run -> compare
with eager. Writes one JSON result file, updated before each phase (so a crash names its phase).

    python -m cdlib.run.workers.aoti --spec F.py:fac --result R.json --package P.pt2 [--device cpu|cuda]
        [--existing] [--inputs F.py:fac2] [--config KEY=JSON ...] [--tol 1e-4] [--kernel-names]
"""
import argparse
import copy
import json
import os
import re
import sys
import time
import traceback

from cdlib.run.workers import export_common as ec


def _line_buffer_c_stdout():
    """printf() from the AOTI .so goes through C stdio: make it line-buffered so a crash keeps it."""
    try:
        import ctypes
        libc = ctypes.CDLL(None)
        stdout = ctypes.c_void_p.in_dll(libc, "stdout")
        libc.setvbuf(stdout, None, 1, 0)  # _IOLBF
        return True
    except Exception:  # noqa: BLE001
        return False


def _parse_config(items):
    cfg = {}
    for it in items or []:
        k, _, v = it.partition("=")
        try:
            cfg[k] = json.loads(v)
        except ValueError:
            cfg[k] = v
    return cfg


def classify_compile(exc):
    text = f"{type(exc).__name__}: {exc}"
    names = {type(e).__name__ for e in ec._chain(exc)}
    tc = ec.custom_op_class("\n".join(f"{type(e).__name__}: {e}" for e in ec._chain(exc)))
    if tc:  # same custom-op classes as triage and export
        return tc
    if "InvalidCxxCompiler" in text or "InvalidCxxCompiler" in names:
        return "no_cxx_compiler"
    if "CppCompileError" in names or "CppCompileError" in text or "C++ compile error" in text:
        return "cpp_compile_error"
    if "CompilationError" in names and "triton" in text.lower() or "triton" in text.lower() and "compil" in text.lower():
        return "triton_compile_error"
    if "LoweringException" in names or "LoweringException" in text:
        return "lowering_error"
    # on CUDA, AOTInductor runs the generated kernels while compiling (autotuning/benchmarking):
    # a kernel that asserts or reads out of bounds fails the compile phase
    if re.search(r"device-side assert|illegal memory access|cudaErrorAssert", text, re.I):
        return classify_run_text(text)
    return "compile_error"


_INPUT_CHECK = re.compile(r"unmatched (dim value|dtype|stride value|device type)|expected it to be >=|"
                          r"expected to be <=|Expected \d+ inputs?", re.I)


def classify_run(exc):
    return classify_run_text(str(exc))


def classify_run_text(text):
    """Shared with commands/aoti.py (which re-classifies from stderr on older torch)."""
    tc = ec.custom_op_class(text)
    if tc:
        return tc
    if _INPUT_CHECK.search(text):
        return "input_check"
    low = text.lower()
    if "illegal memory access" in low:
        return "illegal_memory_access"
    if "device-side assert" in low or "cuda_error_assert" in low or "assert" in low and "device" in low:
        return "device_assert"
    if "out of memory" in low:
        return "out_of_memory"
    return "runtime_error"


def _to_device(torch, obj, device):
    from torch.utils import _pytree as pytree
    return pytree.tree_map(lambda x: x.to(device) if isinstance(x, torch.Tensor) else x, obj)


def _flat_tensors(torch, out):
    from torch.utils import _pytree as pytree
    leaves, _ = pytree.tree_flatten(out)
    return leaves


def compare(torch, ref, res, fp64_ref, tol):
    """allclose, then torch._dynamo.utils.same (fp64 RMSE) - the accuracy command's rule."""
    from torch._dynamo.utils import same
    rl, sl = _flat_tensors(torch, ref), _flat_tensors(torch, res)
    fl = _flat_tensors(torch, fp64_ref) if fp64_ref is not None else [None] * len(rl)
    outs = []
    ok_all = len(rl) == len(sl)
    for i, (r, s) in enumerate(zip(rl, sl)):
        f = fl[i] if i < len(fl) else None
        row = {"index": i}
        if isinstance(r, torch.Tensor) and isinstance(s, torch.Tensor):
            row.update(shape=list(r.shape), dtype=str(r.dtype).replace("torch.", ""))
            if r.shape != s.shape:
                row.update(ok=False, problem=f"shape {list(s.shape)} != eager {list(r.shape)}")
                ok_all = False
                outs.append(row)
                continue
            rd, sd = r.detach().double().cpu(), s.detach().double().cpu()
            diff = (rd - sd).abs()
            row["max_abs_err"] = float(diff.max()) if diff.numel() else 0.0
            row["max_rel_err"] = float((diff / rd.abs().clamp_min(1e-12)).max()) if diff.numel() else 0.0
            row["nan_mismatch"] = bool((rd.isnan() != sd.isnan()).any())
            row["allclose"] = bool(torch.allclose(r.detach().cpu(), s.detach().cpu(), rtol=tol, atol=tol, equal_nan=True)) \
                if r.dtype.is_floating_point else bool(torch.equal(r.cpu(), s.cpu()))
            if row["allclose"]:
                row["ok"] = True
            else:
                try:
                    row["ok"] = bool(same(r, s, f, tol=tol, equal_nan=True, log_error=lambda *a, **k: None))
                    row["rule"] = "fp64 RMSE (torch._dynamo.utils.same)"
                except Exception as e:  # noqa: BLE001
                    row["ok"] = False
                    row["rule_error"] = ec.first_line(e)
        else:
            row.update(ok=(r == s), value=str(s)[:80], eager=str(r)[:80])
        ok_all = ok_all and row["ok"]
        outs.append(row)
    return {"ok": ok_all, "tol": tol, "outputs": outs, "count": len(sl), "eager_count": len(rl)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", required=True)
    ap.add_argument("--result", required=True)
    ap.add_argument("--package", required=True)
    ap.add_argument("--existing", action="store_true", help="--package exists: skip export and compile")
    ap.add_argument("--inputs", help="another target whose (model, args) are the run inputs and eager reference")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--config", action="append", default=[])
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--kernel-names", action="store_true", help="debug-crash: C stdout line-buffered")
    a = ap.parse_args()
    res = {"phase": "start", "phases": {}, "device": a.device}
    ec.write_result(a.result, res)
    if a.kernel_names:
        res["c_stdout_line_buffered"] = _line_buffer_c_stdout()

    def begin(name):
        res["phase"] = name
        res["phases"][name] = {"ok": None}
        ec.write_result(a.result, res)
        print(f"[worker] {name}", file=sys.stderr, flush=True)
        return time.monotonic()

    def end(name, t0, **kw):
        res["phases"][name].update(ok=True, seconds=round(time.monotonic() - t0, 2), **kw)
        ec.write_result(a.result, res)

    def fail(name, t0, exc, cls, location=None):
        text = str(exc)
        err_path = os.path.join(os.path.dirname(os.path.abspath(a.result)), f"{name}_error.txt")
        try:
            with open(err_path, "w") as f:
                f.write(f"{type(exc).__name__}: {text}\n\n")
                traceback.print_exception(exc, file=f)
        except OSError:
            err_path = None
        # compiler diagnostics (gcc/clang/triton), not the header warnings around them
        errs = [l.strip() for l in text.splitlines()
                if re.search(r"(^|: )(fatal )?error:|Error:|^E\s|CompilationError", l) and "warning:" not in l]
        res["phases"][name].update(ok=False, seconds=round(time.monotonic() - t0, 2), cls=cls,
                                   type=type(exc).__name__, message=ec.first_line(exc),
                                   errors=errs[:8], error_file=err_path,
                                   full_message=text[-6000:], location=location)
        res["failed_phase"] = name
        res["phase"] = "done"
        ec.write_result(a.result, res)
        return 0

    import torch
    res["torch_version"] = torch.__version__
    if a.device == "cuda" and not torch.cuda.is_available():
        res["setup_error"] = "--device cuda: torch.cuda.is_available() is False on this machine"
        res["phase"] = "done"
        ec.write_result(a.result, res)
        return 0
    loaded = ec.load_target(a.spec)
    if "error" in loaded:
        res["load_error"] = loaded["error"]
        ec.write_result(a.result, res)
        return 0
    tgt = loaded["target"]
    run_tgt = tgt
    if a.inputs:
        l2 = ec.load_target(a.inputs)
        if "error" in l2:
            res["load_error"] = dict(l2["error"], target=a.inputs)
            ec.write_result(a.result, res)
            return 0
        run_tgt = l2["target"]
    dev = a.device
    model = tgt["model"]
    if isinstance(model, torch.nn.Module):
        model = model.to(dev).eval()
    args = _to_device(torch, tgt["args"], dev)
    kwargs = _to_device(torch, tgt["kwargs"], dev)
    rmodel = run_tgt["model"].to(dev).eval() if isinstance(run_tgt["model"], torch.nn.Module) else run_tgt["model"]
    rargs = _to_device(torch, run_tgt["args"], dev)
    rkwargs = _to_device(torch, run_tgt["kwargs"], dev)
    if a.inputs:
        res["run_inputs"] = [list(x.shape) if isinstance(x, torch.Tensor) else repr(x)[:40]
                             for x in _flat_tensors(torch, (rargs, rkwargs))]

    # eager reference (and an fp64 one for the RMSE rule), on copies of the inputs
    t0 = begin("eager")
    try:
        with torch.no_grad():
            ref = rmodel(*copy.deepcopy(rargs), **copy.deepcopy(rkwargs))
    except Exception as e:  # noqa: BLE001
        return fail("eager", t0, e, "eager_error", ec.location_from_exc(e))
    fp64_ref = None
    try:
        from torch._dynamo.debug_utils import cast_to_fp64
        m64, in64 = cast_to_fp64(copy.deepcopy(rmodel), copy.deepcopy(list(rargs)))
        with torch.no_grad():
            fp64_ref = m64(*in64, **copy.deepcopy(rkwargs))
    except Exception:  # noqa: BLE001
        fp64_ref = None
    end("eager", t0)

    cfg = _parse_config(a.config)
    if not a.existing:
        t0 = begin("export")
        try:
            ep = torch.export.export(model, args, kwargs, dynamic_shapes=tgt["dynamic_shapes"], strict=False)
        except Exception as e:  # noqa: BLE001
            info = ec.classify_exception(e, False)
            return fail("export", t0, e, info["cls"], ec.location_from_exc(e))
        end("export", t0, nodes=len(ep.graph.nodes))

        t0 = begin("compile")
        try:
            pkg = torch._inductor.aoti_compile_and_package(ep, package_path=a.package, inductor_configs=cfg or None)
        except Exception as e:  # noqa: BLE001
            return fail("compile", t0, e, classify_compile(e))
        end("compile", t0, package=os.path.abspath(pkg), size_bytes=os.path.getsize(pkg), inductor_configs=cfg)
    pkg = a.package

    t0 = begin("load")
    try:
        compiled = torch._inductor.aoti_load_package(pkg)
    except Exception as e:  # noqa: BLE001
        return fail("load", t0, e, "load_error")
    end("load", t0)

    t0 = begin("run")
    try:
        with torch.no_grad():
            out = compiled(*copy.deepcopy(rargs), **copy.deepcopy(rkwargs))
        if dev == "cuda":
            torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001
        return fail("run", t0, e, classify_run(e))
    end("run", t0, env_check_inputs=os.environ.get("AOTI_RUNTIME_CHECK_INPUTS"))

    t0 = begin("compare")
    try:
        cmp = compare(torch, ref, out, fp64_ref, a.tol)
    except Exception as e:  # noqa: BLE001
        return fail("compare", t0, e, "compare_error")
    res["phases"]["compare"].update(cmp)
    res["phases"]["compare"]["seconds"] = round(time.monotonic() - t0, 2)
    if not cmp["ok"]:
        res["failed_phase"] = "compare"
        res["phases"]["compare"]["cls"] = "mismatch"
    res["phase"] = "done"
    ec.write_result(a.result, res)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SystemExit:
        raise
    except BaseException:  # our bug: leave the traceback on stderr for the parent
        traceback.print_exc()
        sys.exit(3)
