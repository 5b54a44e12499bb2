"""Structured events of a target run -> report.Report: graphs, breaks, recompiles, errors, stats and
next steps. analyze() works on an existing trace (a run's, a recorded fixture, another torch's);
apply_verdict() refines a failed run with its eager re-run. The runs themselves are in runs.py (and vs_eager.py).
No torch import here."""
import os
import re

from . import knowledge, semantics, verdict
from ..read import trace as tracemod
from .analyze_dynamo import aten_op_without_fake, breaks_from_errors, fake_kernel_errors, _graph_breaks
from .dynamo_steps import next_steps as _dynamo_next_steps
from .analyze_recompiles import RESUME_RE, function_info as _function_info, _recompiles
from .analyze_errors import _eager_printed_lines, _error_steps
from .error_rows import _errors
from .custom_op_code import unimported_fakes
from .custom_op_source import custom_op_mutation, shared_outputs
from .program_code import (script_calls, explain_calls, export_advice, export_calls, export_guard_sites,
                           limit_not_applied, marks_not_on_input, program_files)
from ..run import proc
from ..read.frames import display_path, innermost_user, is_user_file, loc as _loc, parse_exception, strip_rank_prefix
from ..cmdline import (cli_command, local_imports as _local_imports, script_of as _script_of, script_source, scripts_of,
                       template_command)
from ..report import GraphInfo, Report, raised_break

# functorch's wrapper reaching storage, or autograd off: what autograd inside a custom op's kernel raises compiled
_AUTOGRAD_OFF_RE = re.compile(r"Cannot access storage of TensorWrapper|does not require grad and does not have a grad_fn")


def apply_verdict(rep, stderr, *, target_str=None, run_eager_fn=None, eager_res=None, eager_stderr=None):
    """Decide the verdict of a failed compiled run (an eager re-run through run_eager_fn, or a recorded
    eager_res/eager_stderr), refine the first error with it and redo the next steps."""
    if not rep.errors or rep.timed_out or rep.exit_code in (0, None):
        return rep
    exc = parse_exception(stderr)
    err = rep.errors[0]
    base = os.getcwd()

    def where(loc):
        p = loc.file
        p = os.path.relpath(p, base) if p.startswith(base + os.sep) else os.path.basename(p)
        return f"{p}:{loc.line}" if loc.line else p

    if err.category in ("stdin_eof", "torch_missing"):  # not a bug in the program, and no eager re-run
        at = where(err.location) if err.location else None
        rep.verdict = verdict.needs_input(at) if err.category == "stdin_eof" else \
            verdict.no_torch(proc.target_python(rep.command) if rep.command else None, at)
        rep.next_steps = _next_steps(rep, target_str, cli_command())
        return rep
    rep.verdict = verdict.decide(err, exc if err.source != "signal" or rep.signal == "SIGABRT" else None,
                                 used_compile=rep.used_compile, run_eager_fn=run_eager_fn, eager_res=eager_res,
                                 eager_stderr=eager_stderr, parse_exception=parse_exception,
                                 innermost_user=innermost_user, where=where)
    ev = rep.verdict.get("eager") or {}
    exported = export_calls(rep, err) if rep.verdict["kind"] == "before_compile" else []
    if exported:
        # the program exports, never compiles: its failure is its own (blind A/B batch 19: an exported-vs-eager check
        # failing for a model exported in train mode was "failed before torch.compile ran" with a generic Next)
        path, line, call = exported[0]
        rep.verdict["export_call"] = f"{os.path.basename(path)}:{line} `{call}(...)`"
        rep.verdict["summary"] = (f"torch.compile never ran: the program uses torch.export ({rep.verdict['export_call']}); "
                                  "the failure is the program's own" + (f", at {rep.verdict['location']}"
                                                                       if rep.verdict.get("location") else ""))
        if knowledge.triage_row_of(err.category).get("fix_at_export"):   # raised in torch's generated check (batch 58)
            rep.verdict["summary"] = (f"torch.compile never ran: the program uses torch.export ({rep.verdict['export_call']}); "
                                      "the exported module's generated input check raised it"
                                      + (f" when called at {rep.verdict['location']}" if rep.verdict.get("location") else "")
                                      + ": the fix is in what is exported, not at that line")
    explain = explain_calls(program_files(rep)) if rep.verdict["kind"] == "fails_eager_too" and rep.graph_breaks else []
    if explain:
        # the program's own check traces with Dynamo (torch._dynamo.explain ignores the compile stance), so the run
        # without torch.compile ran Dynamo too (blind A/B batch 39: a CI gate counting graph breaks in ELECTRA's loss
        # was "a bug in your program; torch.compile is not the cause")
        at = f"{os.path.basename(explain[0][0])}:{explain[0][1]}"
        rep.verdict.update(kind="not_sure", explain_call=at, summary=(
            f"not decided by the eager re-run: the program calls torch._dynamo.explain ({at}), which traces "
            "with Dynamo under any compile stance, so the run without torch.compile ran Dynamo too; the graph breaks "
            "below are what that check sees"))
    if rep.verdict["kind"] == "different_failure_eager" and ev.get("type") and err.side == "user" \
            and ev.get("location") and ev["location"] == rep.verdict.get("location") \
            and knowledge.classify_error(f"{ev['type']}: {ev.get('message') or ''}")["id"] == err.category:
        # worded differently (fake tensors got further than the real op) but the same class at the same line
        rep.verdict.update(kind="fails_eager_too", summary="fails without torch.compile too, with the same kind of "
                           f"error at the same line: a bug in your program at {ev['location']}")
    if rep.verdict["kind"] == "different_failure_eager" and ev.get("type") and rep.artifacts.get("eager_check_stdout") \
            and not re.match(r"SIG|exit |[Tt]ime", ev["type"]):   # (a native crash's faulthandler lines are no progress)
        more = _eager_printed_lines(rep, ev) - (rep.printed_lines or 0)
        if more > 0:
            rep.verdict["eager_further"] = more
            # the run without torch.compile got past the compiled failure and failed later (blind A/B batch 32: the
            # compiled run stopped at a graph break under fullgraph, eager ran on into the program's own IndexError)
            rep.verdict["summary"] += (f"; that run got further ({more} more printed line(s)) before failing: the "
                                       "compiled failure comes first, the other is a second problem further on")
    if rep.verdict["kind"] == "fails_eager_too" and ev.get("type") and not re.match(r"SIG|exit ", ev["type"]) and (
            err.side not in ("user", "custom_op") or err.category == "user_error"):
        # not the compiler's: classify by the eager failure, which names the problem plainly
        row = knowledge.classify_error(f"{ev['type']}: {ev.get('message') or ''}")
        if row.get("side", "compiler") != "compiler" and not (row["id"] == "user_error" and err.side in ("user", "custom_op")):
            err.category, err.title, err.skill = row["id"], row["title"], row.get("skill")
            err.side = row.get("side", "user")
            err.advice, err.next_command = " ".join(row["advice"].split()), None
    if rep.verdict["kind"] == "fails_eager_too" and ev.get("frame"):  # the line that really fails
        err.location = _loc(ev["frame"]["file"], ev["frame"]["line"], ev["frame"].get("function"))
    if rep.verdict["kind"] in ("compile_only", "not_checked") and err.category in (
            "accuracy_mismatch", "compiled_runtime_error", "user_error"):
        files = list(dict.fromkeys(f.file for f in (exc or {}).get("frames", []) if is_user_file(f.file)))
        if not files and rep.command:
            files = scripts_of(rep.command)[:1]
        hit = custom_op_mutation(files + [m for f in files for m in _local_imports(f) if m not in files])
        if hit:
            row = knowledge.triage_row("custom_op_mutates_args")
            err.category, err.title, err.skill, err.side = row["id"], row["title"], row.get("skill"), "custom_op"
            err.advice = " ".join(row["advice"].split()) + (f" Here: {hit[0]} changes `{hit[2]}` in place at "
                                                            f"{where(hit[1])} but declares mutates_args=().")
            err.next_command = None
            err.inner = {"type": err.type, "message": err.message.splitlines()[0] if err.message else "",
                         "op": hit[0]}
        shared = shared_outputs(program_files(rep)) if not hit and err.category != "compiled_runtime_error" else []
        if shared:
            path, line, op, how = shared[0]
            row = knowledge.triage_row("custom_op_shared_output")
            err.category, err.title, err.skill, err.side = row["id"], row["title"], row.get("skill"), "custom_op"
            err.advice = (f"Here: {op} ({os.path.basename(path)}:{line}) returns {how}. "
                          + " ".join(row["advice"].split()))
            err.next_command = None
            err.inner = {"type": err.type, "message": err.message.splitlines()[0] if err.message else "", "op": op}
    frames = (exc or {}).get("frames") or []
    if rep.verdict["kind"] == "compile_only" and _AUTOGRAD_OFF_RE.search(err.message or "") \
            and any(f.file.replace(os.sep, "/").endswith("torch/_library/custom_ops.py") for f in frames):
        # autograd inside a custom op's kernel, which compiled code calls with autograd's keys off (blind A/B batch 40:
        # torch.func.vjp in the kernel; "Runtime error inside compiled code" sent it to minify)
        row = knowledge.triage_row("custom_op_kernel_autograd")
        err.category, err.title, err.skill, err.side = row["id"], row["title"], row.get("skill"), "custom_op"
        err.advice, err.next_command = " ".join(row["advice"].split()), None
    raised = _torch_compile_frame(exc) if rep.verdict["kind"] == "compile_only" and err.category == "user_error" else None
    if raised is not None:
        # raised by torch's compiler code, not by a check of the program's (a fresh DDP program: DDPOptimizer's
        # AssertionError on a small bucket_cap_mb read "Your check failed only when compiled")
        row = knowledge.triage_row("torch_internal_error")
        err.category, err.skill, err.side = row["id"], row.get("skill"), row.get("side", "compiler")
        known = next((k for k in row.get("known") or [] if re.search(k["pattern"], err.message or "")), None)
        at = f"{display_path(raised.file)}:{raised.line}" + (f" in {raised.function}" if raised.function else "")
        err.title = f"{known['title']} (torch raised it at {at})" if known else f"{row['title']}: raised at {at}"
        err.advice = " ".join((known["fix"] if known else row["advice"]).split())
        err.next_command = None
        err.inner = dict(err.inner or {}, raised_at=at, known=bool(known))
    elif rep.verdict["kind"] == "compile_only" and err.category == "user_error":
        # raised by the program's own code (or a bare non-zero exit), but only when compiled: rounding that a
        # tight check catches, or a compiled graph that computes differently? run_and_analyze measures it
        # (accuracy_check); until then it is not measured. Never "not from torch.compile".
        if err.type == "AssertionError":
            row = knowledge.triage_row("accuracy_mismatch")
            err.category, err.skill, err.side = row["id"], row.get("skill"), row.get("side", "compiler")
        err.title = ("Your check failed only when compiled" if err.type == "AssertionError" else
                     f"Your program {err.type.replace('exit', 'exited with')} only when compiled" if err.type.startswith("exit ")
                     else "Raised by your code, but only when compiled") + " (not measured yet: rounding or a miscompile?)"
        acc = knowledge.triage_row("accuracy_mismatch")
        err.advice = " ".join(acc["advice"].split())
        err.next_command = knowledge.render_command(acc, cli_command(), target_str)
        if verdict.python_value_error(err):   # a None or a wrong type: no numbers to measure
            err.title = "Raised by your code, but only when compiled, on a Python value (not on numbers)"
            err.advice = ("Rounding cannot turn a value into None or another type: a compiled function returns or "
                          "does something else in Python than eagerly (a generator run to its end, a side effect "
                          "that ran once while tracing, a global or attribute it did not update). Run the compiled "
                          "function with backend=\"eager\" (Dynamo alone): failing there, it is Dynamo's handling of "
                          "that construct; compiling the numeric work inside that function instead is the workaround.")
            err.next_command = template_command("{cli} bisect -- {target}", target_str) if target_str else None
        gb = _break_at(rep, err.location) if verdict.python_value_error(err) else None
        if gb is not None:
            # blind A/B batch 12: torch._shape_as_tensor traced as x.size(); torch's GB0112 hint ("may result
            # in an error when running in eager") pointed at the user's code, which the eager re-run passed
            what = " ".join(filter(None, [gb.gb_id, gb.gb_type])) or "a graph break"
            err.advice = knowledge.advice("traced_differently_at_break", what=what)
            err.next_command = None
    rep.next_steps = _next_steps(rep, target_str, cli_command())
    return rep


# torch's compiler packages: an exception raised in their own frames is torch.compile's, not the program's
_COMPILER_RE = re.compile(r"^torch/(?:_dynamo|_inductor|_functorch|_subclasses|fx|_export|export|_higher_order_ops|"
                          r"_prims|_prims_common|_decomp|_refs|utils/_sympy)/|^torch/_guards\.py$")


def _torch_compile_frame(exc):
    """The innermost traceback frame when it is in torch's compiler packages, else None."""
    frames = (exc or {}).get("frames") or []
    last = frames[-1] if frames else None
    return last if last is not None and _COMPILER_RE.search(display_path(last.file) or "") else None


def _break_at(rep, loc):
    """The graph break whose user line is the failing line, if any."""
    if loc is None or not loc.line:
        return None
    for b in rep.graph_breaks:
        bl = b.location
        if bl is not None and bl.line == loc.line and bl.file and loc.file and (
                bl.file == loc.file or os.path.realpath(bl.file) == os.path.realpath(loc.file)):
            return b
    return None


# ---- graphs and stats ---------------------------------------------------------------------

def _graphs(tr):
    graphs = []
    for e in tr.of("compilation_metrics"):
        d = e.data
        if d.get("graph_op_count") is None and not d.get("fail_type"):
            continue
        if "RecompileLimit" in (d.get("fail_type") or "") or re.search(r"recompile.?limit", d.get("fail_reason") or "", re.I):
            continue
        name = d.get("co_name") or "?"
        loc = _loc(d["co_filename"], d.get("co_firstlineno"), name) if d.get("co_filename") else None
        if (loc and not is_user_file(loc.file)) or RESUME_RE.match(name):
            name, loc, _ = _function_info(tr, e.meta.get("frame_id"))
        graphs.append(GraphInfo(compile_id=e.compile_id or d.get("compile_id") or "?", function=name, location=loc,
                                ops=d.get("graph_op_count"), nodes=d.get("graph_node_count"),
                                compile_time_s=_r(d.get("entire_frame_compile_time_s")),
                                backend_time_s=_r(d.get("backend_compile_time_s")),
                                inductor_time_s=_r(d.get("inductor_compile_time_s")), failed=d.get("fail_type")))
    bwd = backward_compile_s(tr)   # a training graph's compile time includes its lazy backward compile
    for g in graphs:
        if bwd.get(g.compile_id):
            g.compile_time_s = _r((g.compile_time_s or 0) + bwd[g.compile_id])
    return graphs


def backward_compile_s(tr):
    """{compile_id: seconds} of the lazy backward compiles (bwd_compilation_metrics, logged at the first
    backward, outside the frame's entire_frame_compile_time_s)."""
    out = {}
    for e in tr.of("bwd_compilation_metrics"):
        d = e.data if isinstance(e.data, dict) else {}
        cid = e.compile_id or d.get("compile_id")
        s = (d.get("duration_us") or 0) / 1e6 or d.get("inductor_compile_time_s") or 0.0
        if cid and s:
            out[cid] = out.get(cid, 0.0) + s
    return out


def _r(x):
    return round(x, 3) if isinstance(x, (int, float)) else None


def _stats(tr, graphs, breaks, recompiles, res):
    names = [e.artifact_name for e in tr.events if e.key == "artifact"]
    compile_s = round(sum(g.compile_time_s or 0 for g in graphs), 3)
    st = {
        "graphs": sum(1 for g in graphs if not g.failed),
        "ops": sum(g.ops or 0 for g in graphs),
        "graph_break_sites": len(breaks),
        "graph_breaks": sum(b.count for b in breaks),
        "functions_recompiling": sum(1 for f in recompiles if f.recompiles),
        "recompiles": sum(len(f.recompiles) for f in recompiles),
        "recompile_limit_hit": sum(1 for f in recompiles if f.limit_hit),
        "compile_time_s": compile_s,
        "fx_graph_cache_hits": names.count("fx_graph_cache_hit"),
        "fx_graph_cache_misses": names.count("fx_graph_cache_miss"),
        "aotautograd_cache_hits": names.count("aotautograd_cache_hit"),
        "aotautograd_cache_misses": names.count("aotautograd_cache_miss"),
    }
    if not st["graphs"]:   # Dynamo traced a function and captured nothing (an early return): it stays eager
        st["empty_frames"] = list(dict.fromkeys(
            f"`{d.get('co_name')}` ({os.path.basename(d.get('co_filename') or '?')}:{d.get('co_firstlineno')})"
            for d in (e.data for e in tr.of("compilation_metrics") if isinstance(e.data, dict))
            if not d.get("graph_op_count") and not d.get("fail_type") and d.get("co_name")))
    if res is not None and res.duration_s:
        st["wall_time_s"] = res.duration_s
        st["compile_share"] = round(compile_s / res.duration_s, 3) if res.duration_s else None
    return st


# ---- next steps ---------------------------------------------------------------------------

_FLAG_RE = re.compile(r"""add_argument\(\s*(?:["']-\w["']\s*,\s*)?["'](--[\w-]*compil[\w-]*)["']""")
_ENV_RE = re.compile(r"""(?:environ(?:\.get)?[\[(]|getenv\()\s*["'](\w*COMPIL\w*)["']""")


# on/off switches only: --compile, --no-compile, --no-torch-compile, --eager, --use-compile, --disable-compile;
# the program's own variables read with os.environ / getenv (not torch's TORCH* ones, not assignments)
_SWITCH_RE = re.compile(r"^--(?:(?:no|use|enable|disable)[-_])?(?:torch[-_])?compile$|^--eager$")
_ENV_READ_RE = re.compile(r"""(?:environ\.get\(|getenv\(|environ\[)\s*["'](\w*COMPIL\w*)["']\s*[\],)](?!\s*=[^=])""")


def compile_switches(command):
    """The switches the program's own source offers to turn torch.compile on or off (argparse flags and
    environment variables it reads): ['--compile', '--no-compile'], ['USE_COMPILE']."""
    src = script_source(command)
    flags = [f for f in dict.fromkeys(_FLAG_RE.findall(src)) if _SWITCH_RE.match(f)]
    flags += [f for f in dict.fromkeys(re.findall(r"""add_argument\(\s*["'](--eager)["']""", src))]
    return flags + [v for v in dict.fromkeys(_ENV_READ_RE.findall(src)) if not v.startswith("TORCH")]


def compile_flags(command):
    """Command-line flags (argparse) and environment variables the program's own source offers to turn
    torch.compile on: ['--compile', 'USE_COMPILE'] (for a run that never reached torch.compile)."""
    src = script_source(command)
    if not src:
        return []
    given = set(command or [])
    flags = [f for f in dict.fromkeys(_FLAG_RE.findall(src)) if f not in given]
    return flags + [v for v in dict.fromkeys(_ENV_RE.findall(src)) if v not in os.environ]


def empty_frames(rep):
    """The functions Dynamo traced without capturing a graph, when no graph at all was compiled and nothing
    failed or broke: "`forward` (gate.py:10)"; "" otherwise."""
    if rep.graphs or rep.errors or rep.graph_breaks or not rep.stats.get("empty_frames"):
        return ""
    return ", ".join(rep.stats["empty_frames"][:3])


_TIMING_RE = re.compile(r"\bperf_counter\b|\btime\.time\(|\btimeit\b|\bmonotonic\(|\blatency\b|"
                        r"\bthroughput\b|\bbenchmark|Timer\(|cuda\.Event\(", re.I)


def _times_itself(command):
    """The program's own source measures time (a benchmark, a latency or throughput check, a server)."""
    return bool(_TIMING_RE.search(script_source(command)))


def _expected_recompile_step(rep):
    """The one step for a run whose only finding is an expected recompile: it is still a compile, paid by
    the call that first meets the new value (blind A/B batch 14: a latency benchmark warmed up at one
    length, its first timed request recompiled and took seconds; "nothing to fix" sent the agent on)."""
    exp = [f for f in rep.recompiles if f.expected_only and f.recompiles]
    if not exp or not _times_itself(rep.command):   # a program that times nothing: the section's note is enough
        return None
    f = exp[0]
    ids = {cid for c in f.causes for cid in c["compile_ids"]}
    secs = sum(g.compile_time_s or 0 for g in rep.graphs if g.compile_id in ids)
    c = f.causes[0]
    m = re.match(r"shape of `(\w+)` dim (\d+)$", c["cause"])
    mark = (f"mark the dim dynamic on the warm-up input (torch._dynamo.mark_dynamic(t, {m.group(2)}) on the tensor t "
            f"passed as `{m.group(1)}`, before the first call) so that the first graph already serves every size"
            if m and c["kind"] == "shape" else None)
    if mark and (c.get("why") or "").startswith("dynamic=False"):   # a graph per size: a second size is no help
        how = f"{mark}, or drop dynamic=False (with it, each size is a graph of its own)"
    elif mark:
        how = f"call it at a second size during the warm-up, or {mark}"
    else:
        how = "make the warm-up calls look like what you time or serve (the same modes, sizes and arguments)"
    return {"why": f"the recompile is expected ({c['cause']}), but it is a compile ({secs:.1f} s here) paid by the "
                   f"call that first meets the new value, not by the warm-up: if that call is timed or served (a "
                   f"slow first request or step), {how}", "skill": "trace-dynamo", "command": None}


def _compiled_again(rep, tr):
    """One function compiled from scratch more than once in one process (its compile id, e.g. 0/0, repeated: Dynamo's
    state was reset between, so these are not recompiles and no recompile reason names them; blind A/B batch 26: a
    server calling torch._dynamo.reset() on every checkpoint reload paid seconds per reload), with the program's
    reset calls. Only when the same graph comes back each time (op count and shapes): a sweep over configs
    compiles other graphs, and resetting between them is right."""
    seen = {}   # per process: programs that start other compiling processes share one trace directory
    for e in tr.of("compilation_metrics"):
        d = e.data if isinstance(e.data, dict) else {}
        if d.get("graph_op_count") is not None and not d.get("fail_type") and e.compile_id:
            seen.setdefault((e.pid, e.rank, e.compile_id, d.get("co_name")), []).append(d)
    (_, _, cid, fn), ds = max(seen.items(), key=lambda kv: len(kv[1]), default=((None, None, None, None), []))
    if len(ds) < 2 or len({(d.get("graph_op_count"), d.get("graph_node_shapes")) for d in ds}) > 1:
        return None   # other graphs each time: a sweep over models or configs, where a reset between is right
    loc = next((g.location for g in rep.graphs if g.compile_id == cid and g.function.split(" ")[0] == fn), None)
    from ..read import never_ran
    script = _script_of(rep.command)
    resets = never_ran.reset_calls([script] + _local_imports(script)) if script else []
    return {"function": fn, "compile_id": cid, "times": len(ds), "location": loc,
            "compile_s": round(sum(d.get("entire_frame_compile_time_s") or 0 for d in ds[1:]), 1),
            "resets": [f"{os.path.basename(p)}:{ln} `{code}`" for p, ln, code in resets[:3]]}


def _next_steps(rep, target_str, cli):
    sem, errs = semantics.steps(rep), _error_steps(rep, target_str, cli)
    # a failure the run without torch.compile shares comes before a silent by-design difference (a real program:
    # DDP's "Expected to have finished reduction" in a SimCSE loop was Next 2, under collective_grad_compiled)
    first = (rep.verdict or {}).get("kind") in verdict.USER_SIDE and not any(f["explains_error"] for f in rep.semantics)
    steps = errs + sem if first else sem + errs
    if (rep.verdict or {}).get("explain_call"):   # the program's explain check fails on the graph breaks: those first
        steps = _dynamo_next_steps(rep) + sem
    else:
        steps += _dynamo_next_steps(rep)
    if rep.compiled_again:
        ca = rep.compiled_again
        where = ("; the program resets it at " + ", ".join(ca["resets"])) if ca["resets"] else \
            " (torch._dynamo.reset() or torch.compiler.reset(), in your code or a library's)"
        steps.append({"why": knowledge.advice("compiled_again", function=ca["function"], times=ca["times"],
                                              cid=ca["compile_id"], s=ca["compile_s"], where=where),
                      "skill": "trace-dynamo", "command": None})
    if rep.used_compile and not rep.interrupted:   # compiled frames ran, but some compile call goes unused
        from ..read import never_ran
        script = _script_of(rep.command)
        for _, _, what in never_ran.findings([script] + _local_imports(script) if script else [], compiled_ran=True)[:2]:
            steps.append({"why": "this part runs uncompiled: " + what, "skill": "overview", "command": None})
    if rep.interrupted:  # nothing below is a conclusion about the whole program
        steps.append({"why": f"interrupted after {rep.duration_s or 0:.0f} s: the findings above are what it did "
                             "until then; run it to the end", "skill": "overview",
                      "command": template_command("{cli} triage -- {target}", target_str) if target_str else None})
    elif rep.used_compile and not steps and empty_frames(rep):
        steps.append({"why": knowledge.advice("no_graph", frames=empty_frames(rep)), "skill": "overview", "command": None})
    elif rep.used_compile and not steps:
        late = _expected_recompile_step(rep)
        if late:
            steps.append(late)
        if rep.vs_eager is None:   # a clean run says nothing about its results: wrong numbers are not slowness
            steps.append({"why": "compiles cleanly; if its results look wrong, compare what it prints compiled "
                                 "and eager", "skill": "overview",
                          "command": template_command("{cli} triage --vs-eager -- {target}", target_str)
                          if target_str else None})
        steps.append({"why": "if it is slow: check the speedup and kernels", "skill": "trace-inductor",
                      "command": template_command("{cli} perf -- {target}", target_str) if target_str else None})
    if not rep.used_compile and not rep.errors and not rep.interrupted:
        # flags that turn compile on (not --no-compile / --eager: blind A/B batch 36 was told to "run it with
        # --no-compile to compile")
        flags = [f for f in compile_flags(rep.command) if not re.match(r"--(?:no|disable)[-_]|--eager$", f)]
        script = _script_of(rep.command)
        from ..read import never_ran
        files = [script] + _local_imports(script) if script else []
        found = never_ran.findings(files)
        exported = never_ran.exports(files)
        loads = never_ran.aoti_loads(files)
        if loads and not found:
            # a serving program that runs an AOTInductor package and exits 0 (batch 38's review: "never reached
            # torch.compile (not called, or TORCH_COMPILE_DISABLE set)" for a gateway replay with garbage results)
            path, line, call = loads[0]
            steps.append({"why": knowledge.advice("aoti_program_ran", load=f"{os.path.basename(path)}:{line} `{call}(...)`"),
                          "skill": "aoti", "command": f"AOTI_RUNTIME_CHECK_INPUTS=1 {target_str}" if target_str else None})
        if exported and not found:
            path, line, call = exported[0]
            steps.append({"why": f"the program uses torch.export, not torch.compile (`{call}(...)` at "
                                 f"{os.path.basename(path)}:{line}): this report watches torch.compile only. For a "
                                 f"failing export, the export command; {export_advice(files, (path, line))}",
                          "skill": "export", "command": None})
        elif found:
            for _, _, what in found[:3]:
                steps.append({"why": "no compiled frame ran: " + what, "skill": "overview", "command": None})
        elif not loads:
            steps.append({"why": "the program never reached torch.compile (not called, or TORCH_COMPILE_DISABLE set)"
                                 + (f"; its source has {' / '.join(flags)}: run it with that to compile" if flags else ""),
                          "skill": "overview", "command": None})
    # dedupe
    seen, out = set(), []
    for s in steps:
        k = (s["skill"], s["command"], s["why"])
        if k not in seen:
            seen.add(k)
            out.append(s)
    return out


# ---- entry points -------------------------------------------------------------------------

def _no_upgrade_past_newest(rep):
    """A break inside torch on the newest torch release: no newer torch to suggest (blind A/B batch 55: 2.15's
    nn.init.trunc_normal_ loop got "a newer torch may trace this" where 2.15 introduced the loop)."""
    from ..run.torch_versions import TESTED, release_tuple
    have = release_tuple(rep.torch_version)
    if have is None or have < release_tuple(TESTED[-1]):
        return
    for b in rep.graph_breaks:
        b.workarounds = [w for w in b.workarounds if w.get("kind") != "upgrade_torch"]


def analyze(trace_dir, *, command=None, run_dir=None, res=None, stdout="", stderr="", target_str=None):
    tr = tracemod.parse(trace_dir) if trace_dir else tracemod.Trace([], {}, [])
    cli = cli_command()
    stderr = strip_rank_prefix(stderr)   # one process with a process group: torch prefixes its excepthook's lines
    rep = Report(command=list(command or []), run_dir=run_dir or "")
    if res is not None:
        rep.exit_code, rep.signal, rep.timed_out, rep.duration_s = res.returncode, res.signal, res.timed_out, res.duration_s
        rep.interrupted = res.interrupted
    rep.torch_version = tr.torch_version()
    rep.used_compile = bool(tr.of("dynamo_start"))
    rep.graph_breaks = _graph_breaks(tr)
    rep.recompiles = _recompiles(tr, stderr)
    marks_not_on_input(rep, tr)
    limit_not_applied(rep)
    rep.graphs = _graphs(tr)
    rep.errors = _errors(tr, res, stdout, stderr, target_str, cli)
    export_guard_sites(rep, tr)
    breaks_from_errors(rep, stderr)
    if any(raised_break(e) for e in rep.errors):
        # under fullgraph=True a function run eagerly through torch.compiler.disable is still a graph break, so an
        # error ("Skip calling torch.compiler.disable()d function"): not a way around it (blind A/B batch 47: the
        # patch offered for torch.random.fork_rng cost a probe)
        for b in rep.graph_breaks:
            b.workarounds = [w for w in b.workarounds if "torch.compiler.disable(" not in (w.get("code") or "")]
            if "torch.compiler.disable" in str((b.fix or {}).get("escape") or ""):   # (blind A/B batch 50: GB0007's)
                b.fix = {k: v for k, v in b.fix.items() if k != "escape"}
    _no_upgrade_past_newest(rep)
    fake_kernel_errors(rep, stderr)
    aten_op_without_fake(rep)
    unimported_fakes(rep)
    if rep.errors and rep.errors[0].category == "export_script_module":   # where the program scripts a module
        at = script_calls(program_files(rep))
        if at:
            rep.errors[0].advice += " torch.jit.script is called at " + ", ".join(
                f"{os.path.basename(p)}:{ln}" for p, ln in at[:3]) + "."
    # by-design compiled-vs-eager differences (knowledge/semantics.yaml)
    semantics.apply(rep, tr, stdout, stderr, live_trace=bool(trace_dir))
    rep.stats = _stats(tr, rep.graphs, rep.graph_breaks, rep.recompiles, res)
    rep.compiled_again = _compiled_again(rep, tr)
    rep.next_steps = _next_steps(rep, target_str, cli)
    if tr.ranks and len(tr.ranks) > 1:
        rep.notes.append(f"trace has {len(tr.ranks)} ranks; this report merges them")
    return rep
