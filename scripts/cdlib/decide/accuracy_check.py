"""Miscompile or rounding? One run of a program under the minifier's accuracy check, measured.

TORCHDYNAMO_REPRO_AFTER=aot + TORCHDYNAMO_REPRO_LEVEL=4 make every compiled AOT graph compare its
result on its first inputs with eager's and with an fp64 reference (torch._dynamo.debug_utils.
same_two_models -> torch._dynamo.utils.same); the first graph that fails is written out as a
checkpoint and raises AccuracyError. same() first passes anything allclose at
torch._dynamo.config.repro_tolerance (default 1e-3: at float32 that passes a small miscompile), then
applies its RMSE rule: RMSE(compiled, fp64) <= multiplier * RMSE(eager, fp64) + tol/10. This run sets
repro_tolerance to 0 through the startup hook (torch has no env var for it), so the RMSE rule alone
decides at every dtype, and records the numbers of EVERY checked graph, passing ones too (same() and
same_two_models wrapped; torch's verdict is kept as is) in <run dir>/graphs.jsonl.
Used by `accuracy -- prog` and by triage when a failure happens only compiled and has no specific
class. No torch import here (the program does it)."""
import json
import os
import re

from ..run import proc

TOLERANCE = 0.0   # torch._dynamo.config.repro_tolerance in the check run: the RMSE rule decides
# torch.testing.assert_close's default (rtol, atol) per dtype
ASSERT_CLOSE = {"float32": (1.3e-6, 1e-5), "float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float64": (1e-7, 1e-7)}

# Runs in the program right after it imports torch (startup hook "code" step). Wraps torch's own
# check: same_two_models (one call per graph; the graph's name is a variable of its caller,
# after_aot's inner_debug_fn) and same (one call per output tensor, recursively). Writes one JSON
# line per checked graph. A graph whose compiled run raised inside the check is passed by torch
# without comparing ("Skipping this graph"): it is recorded with no outputs.
_RECORD = r'''
import json as _json, sys as _sys
import torch._dynamo.utils as _u
import torch._dynamo.repro.after_aot as _aa
_cd_path = %(path)r
_cd_state = {"graph": None}
_cd_same, _cd_stm, _cd_rmse = _u.same, _aa.same_two_models, _u.rmse
_cd_ac = %(assert_close)r


def _cd_leaf(ref, res, fp64_ref, said):
    rec = {"torch_says": said}
    if isinstance(ref, float):
        ref, res = torch.tensor(ref), torch.tensor(res) if isinstance(res, float) else res
        fp64_ref = torch.tensor(fp64_ref, dtype=torch.float64) if isinstance(fp64_ref, float) else fp64_ref
    if not isinstance(ref, torch.Tensor) or not isinstance(res, torch.Tensor):
        return rec
    rec["dtype"], rec["shape"] = str(res.dtype).replace("torch.", ""), list(res.shape)
    if not (ref.is_floating_point() and res.is_floating_point()) or ref.shape != res.shape:
        return rec
    with torch.no_grad():
        r, c = ref.detach(), res.detach()
        r, c = (r.to_dense(), c.to_dense()) if r.is_sparse else (r, c)
        if r.numel():
            d = (c.double() - r.double()).abs()
            fin = torch.isfinite(r)
            rec["max_abs_diff"] = float(d.nan_to_num(nan=float("inf")).max())
            rec["max_abs_eager"] = float(r.double().abs()[fin].max()) if fin.any() else None
            rec["nan_compiled"], rec["nan_eager"] = bool(c.isnan().any()), bool(r.isnan().any())
        ok = None
        if rec["dtype"] in _cd_ac and r.dtype == c.dtype:
            rt, at = _cd_ac[rec["dtype"]]
            ok = bool(torch.isclose(c, r, rtol=rt, atol=at, equal_nan=True).all())
        rec["assert_close_defaults"] = ok
        if isinstance(fp64_ref, torch.Tensor) and fp64_ref.dtype == torch.float64:
            f = fp64_ref.detach()
            f = f.to_dense() if f.is_sparse else f
            rec["rmse_eager_vs_fp64"] = float(_cd_rmse(f, r))
            rec["rmse_compiled_vs_fp64"] = float(_cd_rmse(f, c))
            if r.numel() and f.shape == c.shape == r.shape:
                # at the element where compiled and eager differ most: each one's distance from fp64 (an RMSE
                # averages one ill-conditioned element away; blind A/B batch 44: erfinv near 1)
                i = int(d.nan_to_num(nan=-1.0).flatten().argmax())
                fi = float(f.flatten()[i])
                rec["worst_eager_vs_fp64"] = abs(float(r.flatten()[i]) - fi)
                rec["worst_compiled_vs_fp64"] = abs(float(c.flatten()[i]) - fi)
                # and the largest difference where eager is NOT that far off (its error below 10x the difference):
                # what an ill-conditioned value cannot explain (a miscompile elsewhere in the output)
                ok = (r.double() - f.double()).abs() < 10 * d
                rec["max_abs_diff_eager_accurate"] = float(d[ok].nan_to_num(nan=float("inf")).max()) if ok.any() else 0.0
                # where eager is within a tenth of the difference from fp64: compiled alone is off there
                ex = (r.double() - f.double()).abs() < 0.1 * d
                rec["max_abs_diff_eager_exact"] = float(d[ex].nan_to_num(nan=float("inf")).max()) if ex.any() else 0.0
                # eager's typical distance from fp64 (an ill-conditioned output is far on most values, so a value
                # where eager happens to be close says nothing)
                rec["median_eager_vs_fp64"] = float((r.double() - f.double()).abs().nan_to_num(nan=float("inf")).median())
            ff = f.double()[torch.isfinite(f)] if f.numel() else f
            rec["max_abs_fp64"] = float(ff.abs().max()) if ff.numel() else None
            nf = ~torch.isfinite(f) if f.numel() and f.shape == c.shape == r.shape else None
            if nf is not None and nf.any():   # fp64 says inf/nan there: which run agrees (inf - inf is nan in RMSE)
                same = lambda x: (x.double()[nf] == f[nf]) | (x.double()[nf].isnan() & f[nf].isnan())  # noqa: E731
                rec["nonfinite_fp64"] = int(nf.sum())
                rec["nonfinite_match_compiled"] = int(same(c).sum())
                rec["nonfinite_match_eager"] = int(same(r).sum())
    return rec


def _cd_same_rec(ref, res, fp64_ref=None, *args, **kwargs):
    g = _cd_state["graph"]
    if g is None or not isinstance(ref, (torch.Tensor, float)):
        return _cd_same(ref, res, fp64_ref, *args, **kwargs)
    said, log_error = [], kwargs.pop("log_error", _u.log.error)

    def _log(msg, *a):
        try:
            said.append(msg %% a)
        except Exception:
            said.append(str(msg))
        return log_error(msg, *a)
    ok = _cd_same(ref, res, fp64_ref, *args, log_error=_log, **kwargs)
    try:
        rec = _cd_leaf(ref, res, fp64_ref, said)
    except Exception as e:
        rec = {"record_error": f"{type(e).__name__}: {e}"}
    rec["passed"] = bool(ok)
    g["outputs"].append(rec)
    return ok


def _cd_precision(inputs):
    """The float32 matmul precision the graph's eager and compiled runs use (fp64 has none): TF32 on CUDA,
    bf16 through oneDNN on a CPU with bf16 units (set_float32_matmul_precision("medium") and friends)."""
    try:
        dev = next((t.device.type for t in inputs if isinstance(t, torch.Tensor)), "cpu")
        b = torch.backends
        p = {"device": dev, "float32_matmul": torch.get_float32_matmul_precision()}
        if dev == "cuda":
            p["tf32_matmul"], p["tf32_conv"] = bool(b.cuda.matmul.allow_tf32), bool(b.cudnn.allow_tf32)
        elif dev == "cpu":
            p["cpu_matmul"] = getattr(getattr(b.mkldnn, "matmul", None), "fp32_precision", None)
            p["cpu_bf16"] = bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
        return p
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"[:200]}


def _cd_stm_rec(gm, opt_gm, example_inputs, *args, **kwargs):
    try:
        name = _sys._getframe(1).f_locals.get("graph_name")
    except Exception:
        name = None
    g = {"graph": name if isinstance(name, str) else None, "outputs": [], "precision": _cd_precision(example_inputs)}
    try:   # the program's line of the graph's first op with a stack trace (the name's number is AOTAutograd's counter)
        import re as _re
        for _n in gm.graph.nodes:
            _fr = _re.findall(r'File "([^"]+)", line (\d+), in (\S+)', _n.meta.get("stack_trace") or "")
            if _fr:
                g["where"] = [_fr[-1][0], int(_fr[-1][1]), _fr[-1][2]]
                break
    except Exception:
        pass
    _cd_state["graph"] = g
    try:
        ok = _cd_stm(gm, opt_gm, example_inputs, *args, **kwargs)
        g["passed"] = bool(ok)
        return ok
    except BaseException as e:
        g["passed"], g["error"] = None, f"{type(e).__name__}: {e}"[:300]
        raise
    finally:
        _cd_state["graph"] = None
        try:
            with open(_cd_path, "a", encoding="utf-8") as f:
                f.write(_json.dumps(g) + "\n")
        except OSError:
            pass


_u.same = _cd_same_rec
_aa.same_two_models = _cd_stm_rec
# same_two_models may call `same` through its own module's name (from torch._dynamo.utils import same:
# torch 2.11's debug_utils): rebind it there too, or no output is recorded
for _m in {_sys.modules.get(_cd_stm.__module__), _sys.modules.get("torch._dynamo.debug_utils"), _aa}:
    if _m is not None and getattr(_m, "same", None) is _cd_same:
        _m.same = _cd_same_rec
'''


def _record_code(path):
    return _RECORD % {"path": path, "assert_close": ASSERT_CLOSE}


_FAILED_RE = re.compile(r"Accuracy failed for the AOT Autograd graph (\S+)")
_RMSE_RE = re.compile(r"RMSE \(res-fp64\): ([\d.e+-]+|nan|inf), \(ref-fp64\): ([\d.e+-]+|nan|inf) and shape=(.+?)\. "
                      r"res\.dtype: (\S+), multiplier: ([\d.]+), tol: ([\d.e-]+)")
_CHECKPOINT_RE = re.compile(r"Writing checkpoint with (\d+) nodes to (\S+\.py)")


def run(argv, run_dir, *, timeout, env_add=None):
    """Run argv once under the accuracy check, in run_dir (level 4 writes repro.py into the working
    directory; file arguments are made absolute). Returns a dict: res (ProcResult), graphs (one record
    per checked graph: name, passed, outputs [{dtype, shape, rmse_compiled_vs_fp64, rmse_eager_vs_fp64,
    max_abs_diff, max_abs_eager, assert_close_defaults, passed, torch_says}]), failing_graph,
    graph_nodes, checkpoint, rmse [..] (torch's own failure lines), failed (exit != 0 or timeout),
    error_type / error (its last exception), dtypes, inductor."""
    from ..run.workers import bisect_step
    debug = os.path.join(run_dir, "debug")
    os.makedirs(debug, exist_ok=True)
    abs_argv = [os.path.abspath(a) if i > 0 and os.path.isfile(a) else a for i, a in enumerate(argv)]
    record = os.path.join(run_dir, "graphs.jsonl")
    env = dict(env_add or {})
    trace_dir = os.path.join(run_dir, "trace")
    env.update({"TORCHDYNAMO_REPRO_AFTER": "aot", "TORCHDYNAMO_REPRO_LEVEL": "4", "TORCH_COMPILE_DEBUG_DIR": debug,
                "TORCH_TRACE": trace_dir, "PYTHONUNBUFFERED": "1",
                # an AOTAutograd cache hit skips the compiler and with it torch's check (nothing measured);
                # a graph loaded from the FX graph cache cannot be deep-copied by the check on CUDA (torch
                # 2.11: run_fwd_maybe_bwd's deepcopy raises, "Skipping this graph"): compile both afresh
                "TORCHINDUCTOR_AUTOGRAD_CACHE": "0", "TORCHINDUCTOR_FX_GRAPH_CACHE": "0"})
    env.update(proc.startup_env(run_dir, [{"config": {"torch._dynamo.config.repro_tolerance": TOLERANCE}},
                                          {"code": _record_code(record)}], name="accuracy_check"))
    if (env_add or {}).get("PYTHONPATH"):  # keep the caller's PYTHONPATH after the startup hook's dir
        env["PYTHONPATH"] += os.pathsep + env_add["PYTHONPATH"]
    res = proc.run(abs_argv, env_add=env, cwd=run_dir, timeout=timeout,
                   stdout_path=os.path.join(run_dir, "target.stdout"), stderr_path=os.path.join(run_dir, "target.stderr"))
    err = res.read_stderr(limit=4_000_000)
    graph = _FAILED_RE.findall(err)
    ck = _CHECKPOINT_RE.findall(err)
    failed = res.returncode not in (0, None) or res.timed_out
    et, em = bisect_step.signature(err)
    out = {"res": res, "graphs": _read_records(record), "failing_graph": graph[0] if graph else None,
           "graph_nodes": int(ck[0][0]) if ck else None, "checkpoint": ck[0][1] if ck else None,
           "rmse": [{"rmse_compiled_vs_fp64": float(a), "rmse_eager_vs_fp64": float(b),
                     "shape": re.sub(r"^torch\.Size\((.*)\)$", r"\1", c), "dtype": d,
                     "multiplier": float(m), "tol": float(t)} for a, b, c, d, m, t in _RMSE_RE.findall(err)],
           "failed": failed, "error_type": bisect_step.short_type(et) if et else None,
           "error": f"{bisect_step.short_type(et)}: {em}" if failed and et else None,
           "last_words": bisect_step.last_words(res.read_stdout(limit=200_000), err) if failed and not et else None,
           "tolerance": TOLERANCE, "hook_failed": "[compile-debug startup]" in err}
    out["dtypes"], out["inductor"], out["rng"] = graph_dtypes(trace_dir), _inductor_ran(trace_dir), graph_rng(trace_dir)
    out["error_code"] = _failing_line(err) if failed and et else None
    return out


def _failing_line(stderr):
    """The source line of the innermost user frame of the last traceback (what a bare assert compares)."""
    from ..read.frames import innermost_user, parse_exception, src_line as _src_line
    exc = parse_exception(stderr)
    loc = innermost_user(exc["frames"]) if exc else None
    return _src_line(loc.file, loc.line) if loc is not None and loc.line else None


def _read_records(path):
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            for ln in f:
                try:
                    out.append(json.loads(ln))
                except ValueError:
                    pass
    except OSError:
        pass
    return out


def _inductor_ran(trace_dir):
    """Did Inductor compile (or load from its cache) a graph? Its output code is in the trace either way
    (compilation_metrics' inductor time is missing for cold compiles under TORCHDYNAMO_REPRO_AFTER=aot)."""
    from ..read import trace as tracemod
    tr = tracemod.parse(trace_dir)
    return bool(tr.of("inductor_output_code")) or any(
        isinstance(e.data, dict) and e.data.get("inductor_compile_time_s") for e in tr.of("compilation_metrics"))


def graph_dtypes(trace_dir):
    """Dtype tags of the compiled graphs' tensors in a TORCH_TRACE dir ("bf16[16, 64]" -> bf16)."""
    from ..read import trace as tracemod
    found = set()
    for path in tracemod.trace_files(trace_dir):
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                found.update(re.findall(r"\b(bf16|f16|f32|f64)\[", f.read(20_000_000)))
        except OSError:
            pass
    return found


_RNG_RE = re.compile(r"\baten\.(?:native_dropout|bernoulli|rand|randn|randint|randperm|rand_like|randn_like|normal|uniform|"
                     r"exponential|multinomial)\b|\binductor_(?:random|seeds)\b")


def graph_rng(trace_dir):
    """"all" / "some" / "none": how many of the compiled (AOT) graphs draw random numbers (dropout, bernoulli,
    rand*). Inductor's random numbers are not eager's (unless fallback_random), so a random mask differs by
    design; with "some", the graph being judged may be one without (review: a tie mask in another graph)."""
    from ..read import trace as tracemod
    tr = tracemod.parse(trace_dir)
    # (the minifier's own graphs are in that trace too: torch/utils/_content_store.py hashes storages with randint)
    seen = [bool(_RNG_RE.search(e.payload or "")) for key in ("aot_forward_graph", "aot_joint_graph", "aot_inference_graph")
            for e in tr.of(key) if "_content_store.py" not in (e.payload or "")]
    return "all" if seen and all(seen) else "some" if any(seen) else "none"


# a check that compares numbers: what an assert's line / message or a gate's last words say
