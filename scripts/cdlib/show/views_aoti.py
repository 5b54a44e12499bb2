"""Markdown of an `aoti` result (commands/aoti.py builds it): the phases table, the failure with its
fix, the --debug-crash and --minify sections, artifacts and the next command."""
from . import output
from .. import cmdline
from ..decide.export import short


def _size(n):
    if n is None:
        return "?"
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.0f} kB"


def render(r):
    out = [f"# aoti {short({'file': r['target']})} on {r['device']}: {r['status'].upper()} "
           f"(torch {r.get('torch_version') or '?'})", ""]
    rows = []
    for name, ph in r["phases"].items():
        if ph.get("ok"):
            info = ""
            if name == "compile":
                info = f"{_size(ph.get('size_bytes'))} {ph.get('package')}"
            elif name == "compare":
                errs = [o.get("max_abs_err") for o in ph.get("outputs") or [] if o.get("max_abs_err") is not None]
                info = f"{ph.get('count')} output(s), max abs err {max(errs) if errs else 0:.3g} (tol {ph.get('tol')})"
            elif name == "export":
                info = f"{ph.get('nodes')} nodes"
            rows.append([name, "ok", f"{ph.get('seconds', '')} s", info])
        elif ph.get("ok") is None:
            rows.append([name, "not finished", "", ""])
        else:
            rows.append([name, f"FAIL {ph.get('cls')}", f"{ph.get('seconds', '')} s", cmdline.clip(ph.get("message"), 120)])
    if rows:
        out += [output.table(["phase", "result", "time", "detail"], rows), ""]
    if r.get("inputs"):
        out.append(f"Run inputs from {short({'file': r['inputs']})}: shapes {r.get('run_inputs')}")
    out.append(f"Input check (AOTI_RUNTIME_CHECK_INPUTS=1): {'on' if r['check_inputs'] else 'off'}")
    if r.get("package"):
        out.append(f"Package: {r['package']} ({_size(r.get('package_size_bytes'))})"
                   + (f", compiled in {r['compile_seconds']} s" if r.get("compile_seconds") else ""))
    if r.get("worker_problem"):
        out.append(f"Worker: {r['worker_problem']}")
    f = r.get("failure")
    if f:
        loc = f.get("location")
        out += ["", f"## {f['phase']} failed: {f['title']} [{f['cls']}]" + (f" at {short(loc)}" if loc else "")]
        if loc and loc.get("code"):
            out.append(f"    {loc['code']}")
        if f.get("message"):
            out.append(f"Error: {cmdline.clip(f['message'], 300)}")
        if f.get("excerpt") and f["phase"] == "compile":
            out += ["```", cmdline.clip(f["excerpt"], 1200), "```"]
        if f.get("error_file"):
            out.append(f"Full error: {f['error_file']}")
        if f["phase"] == "compare":
            bad = [o for o in r["phases"]["compare"].get("outputs") or [] if not o.get("ok")]
            for o in bad[:5]:
                out.append(f"- output {o['index']} {o.get('shape')}: " + (o.get("problem") or
                           f"max abs err {o.get('max_abs_err'):.3g}, max rel err {o.get('max_rel_err'):.3g}"))
        out.append(f"Fix: {f['fix']}")
    dc = r.get("debug_crash")
    if dc:
        out += ["", "## --debug-crash (kernel-name printer, CUDA_LAUNCH_BLOCKING=1, input check)",
                f"Kernels launched: {dc['kernels_launched']}, finished: {dc['kernels_finished']}"]
        if dc.get("first_failing_kernel"):
            out.append(f"First failing kernel: `{dc['first_failing_kernel']}`")
        out.append(f"Verdict: {dc['verdict']}")
        out.append(f"Kernel log: {dc['log']}")
    mn = r.get("minify")
    if mn:
        out += ["", "## --minify (AOTI minifier)"]
        if mn.get("repro"):
            nodes = f"{mn.get('nodes_before', '?')} -> {mn.get('nodes_after', '?')} nodes"
            out.append(f"Minimal repro: {mn['repro']} ({nodes}, {mn.get('queries', '?')} compiles, {mn.get('seconds')} s)")
            out.append(f"Verified: `{mn['repro_command']}` " + ("fails the same way." if mn.get("verified") else
                       f"does NOT reproduce (exit {mn.get('repro_exit')}: {mn.get('repro_error')})"))
        else:
            out.append(mn.get("note") or "no repro")
    out += ["", f"Artifacts: report {r['artifacts']['report_json']}; worker log {r['artifacts']['worker_stderr']}",
            "", f"Next: `{r['next_command']}`"]
    return "\n".join(out)
