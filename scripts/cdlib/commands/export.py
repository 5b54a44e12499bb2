"""`export FILE.py:FACTORY`: why torch.export fails, where, and the concrete fix.

Runs (in a worker subprocess) non-strict export (the default since 2.9), strict export and
torch.export.draft_export; classifies each failure; applies PyTorch's own suggested Dim fix and
re-checks it; with --dynamic proposes a dynamic_shapes spec (Dim.AUTO, ranges read back) as code
and verifies it exports. tlparse --export HTML goes into the run dir when tlparse is installed."""
import os

from ..show import output
from ..show.views_export import render
from ..decide.export import load_error, next_command, problems_of, worker_problem
from ..run import proc, rundir
from ..run.export_run import check_model_spec, read_result, run_tlparse

HELP = "diagnose torch.export failures (strict, non-strict, draft_export) and propose dynamic_shapes"
ORDER = 40
TAKES_TARGET = False
DESCRIPTION = __doc__
EPILOG = """examples:
  compile_debug.py export model.py:make            # FACTORY() returns (model, args[, kwargs[, dynamic_shapes]])
  compile_debug.py export model.py:make --dynamic  # also propose a dynamic_shapes spec that exports
"""


def add_arguments(p):
    p.add_argument("model", metavar="FILE.py:FACTORY",
                   help="model target; FACTORY() returns (model, args[, kwargs[, dynamic_shapes]])")
    p.add_argument("--dynamic", action="store_true",
                   help="propose a dynamic_shapes spec (Dim.AUTO, ranges read back) and verify it exports")
    p.add_argument("--no-strict", action="store_true", help="skip the strict-mode attempt")
    p.add_argument("--no-draft", action="store_true", help="skip torch.export.draft_export")
    p.add_argument("--timeout", type=float, default=600, metavar="SEC",
                   help="limit for the export worker (default 600)")


def run(args):
    path, factory = check_model_spec(args.model, "export")
    spec = f"{path}:{factory}"
    run_dir = rundir.make(args.out, "export")
    trace_dir = os.path.join(run_dir, "trace")
    os.makedirs(trace_dir, exist_ok=True)
    draft_trace_dir = os.path.join(run_dir, "draft_trace")
    result_path = os.path.join(run_dir, "export_result.json")
    wargs = ["--spec", spec, "--result", result_path]
    for flag in ("dynamic", "no_strict", "no_draft"):
        if getattr(args, flag):
            wargs.append("--" + flag.replace("_", "-"))
    proc.progress(f"export {os.path.basename(path)}:{factory}: non-strict, "
                  f"{'' if args.no_strict else 'strict, '}{'' if args.no_draft else 'draft_export'}"
                  f"{', --dynamic' if args.dynamic else ''} (run dir {run_dir})")
    pr = proc.run_worker("export", wargs, run_dir=run_dir, timeout=args.timeout, tag="export_worker",
                         env_add={"TORCH_TRACE": trace_dir,
                                  # draft_export logs to TORCH_DTRACE (else /tmp/export_<user>): keep it here
                                  "TORCH_DTRACE": draft_trace_dir})
    res = read_result(result_path) or {}
    if res.get("load_error"):
        raise load_error(res["load_error"], args.model)
    problem = worker_problem(pr, res, run_dir, "export_worker")

    html, tl_note = None, None
    if not problem or res.get("attempts"):
        proc.progress("tlparse --export")
        html, tl_note = run_tlparse([draft_trace_dir, trace_dir], run_dir)

    attempts = res.get("attempts") or {}
    ns = attempts.get("non_strict") or {}
    if problem and not attempts:
        status = "timeout" if pr.timed_out else "crashed"
    elif ns.get("ok"):
        status = "exported"
    else:
        status = "failed"
    problems = problems_of(res)
    draft = res.get("draft") or {}
    result = {
        "command": "export", "run_dir": run_dir, "status": status, "target": spec,
        "torch_version": res.get("torch_version"),
        "attempts": {k: {kk: vv for kk, vv in v.items() if kk != "failure"} | (
            {"failure": {kk: vv for kk, vv in v["failure"].items() if kk != "full_message"}} if v.get("failure") else {})
            for k, v in attempts.items()},
        "draft_export": {"ok": draft.get("ok"), "failures": draft.get("failures"),
                         "error": (draft.get("failure") or {}).get("message")} if draft else None,
        "problems": problems,
        "suggested_fix_check": res.get("suggested_fix_check"),
        "size_oblivious_check": res.get("size_oblivious_check"),
        "dynamic": res.get("dynamic"),
        "worker_problem": problem,
        "artifacts": {"report_json": os.path.join(run_dir, "report.json"),
                      "export_result": result_path,
                      "tlparse_html": html,
                      "trace_dir": trace_dir,
                      "draft_trace_dir": draft_trace_dir if os.path.isdir(draft_trace_dir) else None,
                      "worker_stderr": os.path.join(run_dir, "export_worker.stderr")},
        "notes": [n for n in [tl_note] if n],
    }
    nxt = next_command(args, status, problems, result)
    result["next_command"] = nxt
    output.emit(args, result, render(result))
    return 0
