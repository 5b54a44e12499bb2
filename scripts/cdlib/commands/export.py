"""`export FILE.py:FACTORY`: why torch.export fails, where, and the concrete fix.

Runs (in a worker subprocess) non-strict export (the default since 2.9), strict export and
torch.export.draft_export; classifies each failure; applies PyTorch's own suggested Dim fix and
re-checks it; with --dynamic proposes a dynamic_shapes spec (Dim.AUTO, ranges read back) as code
and verifies it exports. tlparse --export HTML goes into the run dir when tlparse is installed."""
import glob
import json
import os
import re
import sys

from ..show import output
from .. import cmdline
from ..run import proc, rundir, target
from ..errors import CliError

HELP = "diagnose torch.export failures (strict, non-strict, draft_export) and propose dynamic_shapes"
ORDER = 40
TAKES_TARGET = False
DESCRIPTION = __doc__
EPILOG = """examples:
  compile_debug.py export model.py:make            # FACTORY() returns (model, args[, kwargs[, dynamic_shapes]])
  compile_debug.py export model.py:make --dynamic  # also propose a dynamic_shapes spec that exports
"""

# failure class -> (title, fix recipe). Class ids are stable (JSON `cls`, the export skill).
CLASSES = {
    "data_dependent_guard": (
        "data-dependent guard (GuardOnDataDependentSymNode)",
        "A Python branch/bool on a tensor VALUE. Real control flow: `torch.cond(pred, true_fn, false_fn, (x,))`. "
        "Only an assumption: state it with `torch._check(...)` before this line (sizes from .item()/nonzero: "
        "`torch._check(n >= 0)`). Or make it branchless with `torch.where`."),
    "constraint_violation": (
        "constraint violation: the code narrows a Dim's range",
        "Declare the range the code needs (PyTorch's suggested Dim, when it gives one), or use `Dim.AUTO` and let export "
        "infer it; `export --dynamic` writes a full working spec."),
    "specialized_dim": (
        "dynamic dim specialized to a constant",
        "The code forces this dim to one size (a literal shape, a size-fixed parameter, a view). Make the line "
        "shape-generic (e.g. `torch.ones(x.shape[0], ...)`, `x.new_ones(...)`), or declare the dim static "
        "(`Dim.STATIC`, or drop it from dynamic_shapes)."),
    "missing_fake_kernel": (
        "custom op without a fake kernel",
        "Register a fake (meta) kernel: `@torch.library.register_fake(\"ns::op\")` (or `myop.register_fake`) "
        "returning an empty tensor of the output's shape/dtype/device, e.g. `return torch.empty_like(x)`. "
        "Verify with `torch.library.opcheck(op, args)`."),
    "mismatched_fake_kernel": (
        "fake kernel does not match the real kernel",
        "The register_fake function returns a different shape/dtype/stride than the real op: make it match "
        "(draft_export compared them on the real inputs). Verify with `torch.library.opcheck(op, args)`."),
    "unsupported_python": (
        "unsupported Python in strict mode",
        "Strict export (Dynamo) cannot trace this construct. Use non-strict export (`strict=False`, the default "
        "since torch 2.9), or rewrite the construct in plain tensor code."),
    "graph_break": (
        "graph break in strict mode",
        "Strict export must capture one graph. Use non-strict export (`strict=False`), or remove the break "
        "(see the graph-break page in the message)."),
    "invalid_input": (
        "invalid input or dynamic_shapes spec",
        "Inputs must be tensors, ints/floats/bools or pytrees (tuple/list/dict/registered dataclass) of them; "
        "dynamic_shapes must mirror the inputs (same names/nesting)."),
    "invalid_output": (
        "invalid output",
        "Return tensors, ints/floats/bools/None or pytrees of them (no custom objects)."),
    "other": ("other export error", "Read the message; run with the full message in report.json."),
}


def class_info(cls, default="other"):
    """(title, fix) of a failure class: export's own, else a knowledge/triage.yaml row (the custom-op
    classes custom_op_no_autograd / custom_op_mutates_args are shared with triage and aoti)."""
    if cls in CLASSES:
        return CLASSES[cls]
    from ..decide import knowledge
    try:
        row = knowledge.triage_row(cls)
    except KeyError:
        return CLASSES[default] if default in CLASSES else (cls, "")
    return row["title"], " ".join(row.get("advice", "").split())


def add_arguments(p):
    p.add_argument("model", metavar="FILE.py:FACTORY",
                   help="model target; FACTORY() returns (model, args[, kwargs[, dynamic_shapes]])")
    p.add_argument("--dynamic", action="store_true",
                   help="propose a dynamic_shapes spec (Dim.AUTO, ranges read back) and verify it exports")
    p.add_argument("--no-strict", action="store_true", help="skip the strict-mode attempt")
    p.add_argument("--no-draft", action="store_true", help="skip torch.export.draft_export")
    p.add_argument("--timeout", type=float, default=600, metavar="SEC",
                   help="limit for the export worker (default 600)")


def check_model_spec(text, command):
    """parse_spec with a hint for scripts (the triage owner reports scripts that call torch.export)."""
    if text and text.endswith(".py") and ":" not in os.path.basename(text):
        if not os.path.isfile(text):
            raise CliError(f"{text}: no such file")
        raise CliError(f"{command} needs a model target `{text}:FACTORY`; for a script that calls torch.export "
                       f"itself run: {cmdline.cli_command('triage', '--', sys.executable, text)}")
    return target.parse_spec(text)


def load_error(err, spec):
    """Worker load failure -> CliError (exit 2): the user's factory or spec is wrong."""
    if err.get("kind") == "spec":
        return CliError(err["message"])
    loc = err.get("location")
    where = f" at {_short(loc)}" if loc else ""
    return CliError(f"{spec}: loading the target raised {err.get('type')}: {err.get('message')}{where}")


def _short(loc):
    if not loc:
        return ""
    f = loc.get("file") or ""
    try:
        rel = os.path.relpath(f)
        f = rel if not rel.startswith("..") else f
    except ValueError:
        pass
    return f"{f}:{loc.get('line')}" if loc.get("line") else f


def read_result(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def worker_problem(pr, res, run_dir, tag):
    """A one-line description when the worker itself did not finish, else None."""
    if pr.timed_out:
        return f"timed out after {pr.duration_s:.0f} s (raise --timeout)"
    if pr.signal:
        return f"worker died of {pr.signal}"
    if res is None or res.get("phase") != "done":
        tail = pr.read_stderr(3000).strip().splitlines()
        last = tail[-1] if tail else ""
        return f"worker exited {pr.returncode} ({cmdline.clip(last, 200)}; see {os.path.join(run_dir, tag + '.stderr')})"
    return None


_DRAFT_KEYS = ('"exported_program"', '"propagate_real_tensors_provenance"', '"missing_fake_kernel"',
               '"mismatched_fake_kernel"', '"guard_added"')


def _export_log_score(path):
    """draft_export's own log (its report: failures + exported_program) first, then the largest."""
    try:
        with open(path, errors="replace") as f:
            text = f.read()
    except OSError:
        return (0, 0, 0)
    return (int('"exported_program"' in text), sum(text.count(k) for k in _DRAFT_KEYS), len(text))


def run_tlparse(trace_dirs, run_dir, timeout=120):
    """tlparse --export on draft_export's trace log -> <run_dir>/tlparse/index.html (or None)."""
    exe = proc.find_tool("tlparse")
    logs = [p for d in trace_dirs for p in glob.glob(os.path.join(d, "*.log"))]
    logs.sort(key=_export_log_score, reverse=True)
    if not exe or not logs:
        return None, ("tlparse not installed (pip install tlparse)" if not exe else "no trace log written")
    out = os.path.join(run_dir, "tlparse")
    pr = proc.run([exe, logs[0], "--export", "-o", out, "--overwrite", "--no-browser"], timeout=timeout,
                  stdout_path=os.path.join(run_dir, "tlparse.stdout"),
                  stderr_path=os.path.join(run_dir, "tlparse.stderr"))
    index = os.path.join(out, "index.html")
    if pr.ok and os.path.exists(index):
        # tlparse 0.4.x cannot parse some draft_export records of newer torch: then its page under-reports
        bad = (pr.read_stdout() + pr.read_stderr()).count("Failed to parse metadata JSON")
        if bad:
            return index, (f"tlparse could not parse {bad} trace record(s) (a tlparse/torch version mismatch): "
                           f"its page may miss problems listed here")
        return index, None
    return None, f"tlparse failed (exit {pr.returncode}{', timed out' if pr.timed_out else ''})"


def problems_of(res):
    """Merge the failures of all attempts and draft_export into one list, one entry per (class, line)."""
    found = {}
    order = []

    def add(cls, loc, how, item):
        key = (cls, (loc or {}).get("file"), (loc or {}).get("line"))
        if key not in found:
            title, fix = class_info(cls)
            found[key] = {"cls": cls, "title": title, "location": loc, "found_by": [], "message": None,
                          "fix": fix, "details": {}}
            order.append(key)
        p = found[key]
        p["found_by"].append(how)
        if item.get("message") and not p["message"]:
            p["message"] = item["message"]
        for k, v in (item.get("details") or {}).items():
            p["details"].setdefault(k, v)
        for k in ("expr", "op", "reason"):
            if item.get(k):
                p["details"].setdefault(k, item[k])
        return p

    for name, att in (res.get("attempts") or {}).items():
        f = att.get("failure")
        if f:
            add(f["cls"], f.get("location"), name, f)
    def norm_op(op):
        m = re.match(r"^(\w+)(?:::|\.)(\w+)", op or "")
        return f"{m.group(1)}::{m.group(2)}" if m else None

    d = res.get("draft") or {}
    for item in d.get("failures") or []:
        loc = item.get("location")
        op = norm_op(item.get("op"))
        same_op = [found[k] for k in order if op and found[k]["cls"] == item["cls"]
                   and norm_op(found[k]["details"].get("op")) == op]
        if same_op:  # the export failure already names the call site: keep it, add the definition
            same_op[0]["found_by"].append("draft_export")
            if loc:
                same_op[0]["details"].setdefault("op_defined_at", loc)
            continue
        # draft reports a missing fake kernel without a stack: attach it to the export failure's line
        if not loc:
            for key in order:
                if key[0] == item["cls"] and found[key]["location"]:
                    loc = found[key]["location"]
                    break
        add(item["cls"], loc, "draft_export", item)
    if d.get("failure"):
        add(d["failure"]["cls"], d["failure"].get("location"), "draft_export", d["failure"])
    fx = res.get("suggested_fix_check")
    out = [found[k] for k in order]
    for p in out:
        if p["cls"] in ("constraint_violation", "specialized_dim") and fx:
            p["suggested_fix"] = {"code": fx.get("fixes"), "verified": fx.get("verified"),
                                  "new_dynamic_shapes": fx.get("new_dynamic_shapes"),
                                  "error": fx.get("error") or (fx.get("failure") or {}).get("message")}
    return out


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


def next_command(args, status, problems, result):
    if status == "exported":
        dyn = result.get("dynamic") or {}
        if args.dynamic and not dyn.get("verified"):
            return cmdline.cli_command("export", args.model, "--dynamic")
        return cmdline.cli_command("aoti", args.model)
    if status in ("timeout", "crashed"):
        return cmdline.cli_command("export", args.model, "--no-draft", "--timeout", int(args.timeout * 2))
    return cmdline.cli_command("export", args.model) + ("  # after applying the fix" if problems else "")


def render(r):
    st = r["status"]
    out = [f"# export {_short({'file': r['target']})}: {st.upper()} (torch {r.get('torch_version') or '?'})", ""]
    if r.get("worker_problem"):
        out += [f"Worker: {r['worker_problem']}", ""]
    rows = []
    for name, label in (("non_strict", "non-strict (default)"), ("strict", "strict")):
        a = r["attempts"].get(name)
        if a:
            f = a.get("failure")
            rows.append([label, "ok" if a["ok"] else f"FAIL {f['cls']}", f"{a['seconds']} s",
                         _short(f.get("location")) if f else ""])
    d = r.get("draft_export")
    if d:
        if d.get("ok"):
            n = len(d.get("failures") or [])
            rows.append(["draft_export", "no issues" if not n else f"{n} issue(s)", "", ""])
        else:
            rows.append(["draft_export", f"FAIL {cmdline.clip(d.get('error'), 80)}", "", ""])
    if rows:
        out += [output.table(["mode", "result", "time", "where"], rows), ""]
    for i, p in enumerate(r["problems"], 1):
        loc = p.get("location")
        where = f" at {_short(loc)}" if loc else ""
        only = " (strict only)" if p["found_by"] == ["strict"] else ""
        out.append(f"## {i}. {p['title']} [{p['cls']}]{where}{only}")
        if loc and loc.get("code"):
            out.append(f"    {loc['code']}")
        elif not loc and p["cls"] in ("constraint_violation", "specialized_dim") and "draft_export" not in p["found_by"]:
            out.append("    (the error names no line; draft_export records it: run without --no-draft)")
        if p.get("message"):
            out.append(f"Error: {cmdline.clip(p['message'], 240)}")
        det = p.get("details") or {}
        if det.get("expr"):
            out.append(f"Expression: `{det['expr']}`")
        if det.get("op"):
            out.append(f"Op: `{det['op']}`")
        if det.get("reason"):
            out.append(f"Reason: {cmdline.clip(det['reason'], 200)}")
        if det.get("gb_id"):
            out.append(f"Graph break: {det['gb_id']} {det.get('gb_type') or ''}")
        for v in (det.get("violations") or [])[:3]:
            out.append(f"- {cmdline.clip(v, 240)}")
        out.append(f"Found by: {', '.join(p['found_by'])}")
        sf = p.get("suggested_fix")
        if sf and sf.get("code"):
            ok = {True: "verified: export succeeds with it", False: "NOT verified: export still fails"}.get(
                sf.get("verified"), "not checked")
            out.append(f"PyTorch's suggested fix ({ok}): `{'; '.join(sf['code'])}`")
            if sf.get("new_dynamic_shapes"):
                out.append(f"  dynamic_shapes = {sf['new_dynamic_shapes']}")
            if sf.get("error"):
                out.append(f"  {cmdline.clip(sf['error'], 200)}")
        out.append(f"Fix: {p['fix']}")
        out.append("")
    if st == "exported" and r["problems"]:
        if all(p["found_by"] == ["strict"] for p in r["problems"]):
            out += ["Non-strict export (the default) succeeds; the problems above only affect strict=True: "
                    "ignore them unless strict mode is required.", ""]
        else:
            out += ["Export succeeds, but draft_export found problems that make the graph wrong for other "
                    "inputs (or unsound): fix them.", ""]
    if st == "exported" and not r["problems"]:
        out += ["Export succeeds in every mode tried; draft_export found no issues.", ""]
    dyn = r.get("dynamic")
    if dyn:
        out.append("## dynamic_shapes proposal (Dim.AUTO, ranges read back)")
        if dyn.get("code"):
            out += ["```python", dyn["code"].rstrip(), "```"]
            dims = [d for d in dyn.get("dims") or []]
            if dims:
                out.append(output.table(["input", "dim", "example", "dynamic", "range"],
                                        [[d["input"], d["dim"], d["example"], "yes" if d["dynamic"] else "static",
                                          f"[{d['min']}, {d['max'] if d['max'] is not None else 'inf'}]"
                                          if d["dynamic"] else ""] for d in dims]))
            out.append("Verified: export with this spec " + ("succeeds." if dyn.get("verified") else
                       f"FAILS: {cmdline.clip((dyn.get('verify_failure') or {}).get('message') or dyn.get('error'), 200)}"))
            oth = dyn.get("other_sizes") or {}
            if oth.get("checked"):
                out.append(f"Other sizes {oth.get('shapes')}: the exported program "
                           + ("runs and matches eager." if oth.get("ok") else
                              f"does NOT match eager: {cmdline.clip(oth.get('error') or 'different outputs', 200)}"))
            elif oth.get("why"):
                out.append(f"Other sizes not checked: {cmdline.clip(oth['why'], 160)}")
        else:
            f = dyn.get("failure") or {}
            out.append(f"Dim.AUTO export failed ({f.get('cls', '?')} at {_short(f.get('location'))}): fix the problems "
                       f"above first." if f else f"No proposal: {dyn.get('error')}")
        out.append("")
    a = r["artifacts"]
    arts = [f"report {a['report_json']}"]
    if a.get("tlparse_html"):
        arts.append(f"tlparse {a['tlparse_html']}")
    out.append("Artifacts: " + "; ".join(arts))
    for n in r.get("notes") or []:
        out.append(f"Note: {n}")
    out += ["", f"Next: `{r['next_command']}`"]
    return "\n".join(out)
