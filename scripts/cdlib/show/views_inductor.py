"""Markdown of an inductor result (decide/inductor.py builds it): per graph the kernel table, the
fallbacks, the perf hints and the next command; one kernel's source (--code)."""
import os

from .. import cmdline
from ..run import inductor_run as IR
from . import output


def _loc_str(lines, n=3):
    if not lines:
        return ""
    out = [f"{os.path.basename(l['file'])}:{l['line']}" for l in lines[:n]]
    if len(lines) > n:
        out.append(f"+{len(lines) - n}")
    return ", ".join(out)


def _ops_str(ops, n=8):
    ops = [o.replace("aten.", "") for o in ops]
    s = ", ".join(ops[:n])
    return s + (f", +{len(ops) - n}" if len(ops) > n else "")


def markdown(res):
    s = res["summary"]
    lines = [f"# inductor: {s['graphs']} compiled graph(s), {s['kernels']} kernel launches "
             f"({s['generated']} generated, {s['extern']} extern, {s['fallback']} fallback)"]
    lines += output.target_header(res)
    if res["status"] == "no-inductor":
        lines.append(f"\nDynamo captured {res['dynamo_graphs']} graph(s) but none went through Inductor: the backend is not "
                     "inductor (e.g. backend=\"eager\"/\"aot_eager\") or compilation failed.")
    elif res["status"] in ("no-compile", "target-failed"):
        lines.append("\nNo compiled graph in the trace: torch.compile was never reached"
                     + (" (the target failed first)." if res["status"] == "target-failed" else "."))
    if s["fx_graph_cache_hits"] or s["fx_graph_cache_misses"]:
        lines.append(f"FX graph cache: {s['fx_graph_cache_hits']} hit(s), {s['fx_graph_cache_misses']} miss(es)")
    for g in res["graphs"]:
        head = f"\n## graph {g['id']}"
        if g["function"]:
            head += f" — {g['function']} ({IR.short_path(g['function_loc'])})"
        if g["cache"]:
            head += f" — cache {g['cache']}"
        lines.append(head)
        dd = f" · debug dir: {g['debug_dir']}" if g["debug_dir"] else \
            (" · no debug dir (cache hit: --fresh-cache to get ir_pre/post_fusion)" if g["cache"] == "hit" else "")
        lines.append(f"output code: {g['output_code']}{dd}")
        rows = []
        for k in g["kernels"][: res["max_kernels"]]:
            kind = "**fallback**" if k["kind"] == "fallback" else k["kind"]
            rows.append([k["name"], kind, f"{_ops_str(k['ops'])}" + (f" ({k['n_ops']})" if k["n_ops"] > 1 else ""),
                         _loc_str(k["user_lines"])])
        if rows:
            lines.append(output.table(["kernel", "kind", "ATen ops fused", "user lines"], rows))
        if len(g["kernels"]) > res["max_kernels"]:
            lines.append(f"... {len(g['kernels']) - res['max_kernels']} more (--max-kernels N, or --json)")
        if not g["provenance"]:
            lines.append("(no provenance in this trace: user lines come from the graph's source comments only)")
    if res["fallbacks"]:
        lines.append("\n## fallbacks to eager ATen")
        for f in res["fallbacks"][:15]:
            lines.append(f"- {f['op']} in graph {f['graph']}" + (f" at {_loc_str(f['user_lines'])}" if f["user_lines"] else ""))
        lines.append("A fallback runs the eager ATen kernel: no fusion across it, extra memory round-trips. "
                     "Rewrite with ops Inductor lowers, or accept it if it is not hot.")
    if res["perf_hints"] is not None:
        lines.append("\n## perf hints")
        if not res["perf_hints"]:
            lines.append("none logged")
        if s["graphs"] and s["fx_graph_cache_hits"] == s["graphs"]:
            lines.append("(every graph came from the FX graph cache: hints are only logged while compiling; "
                         "rerun with --fresh-cache to see them)")
        for h in res["perf_hints"][:20]:
            lines.append(f"- [{h['kind']}{' ' + h['compile_id'] if h['compile_id'] else ''}] {cmdline.clip(h['message'], 240)}")
    # next command
    if res["target_error"] and res["target"]:
        lines.append(f"\nThe target failed: triage the error first: "
                     f"`{cmdline.cli_command('triage', '--', *__import__('shlex').split(res['target']))}`")
    nxt = None
    gen = [(g, k) for g in res["graphs"] for k in g["kernels"] if k["kind"] not in ("extern", "fallback")]
    if gen:
        g, k = max(gen, key=lambda gk: gk[1]["n_ops"])
        nxt = cmdline.cli_command("inductor", "--from", res["run_dir"], "--graph", g["id"], "--code", k["name"])
        lines.append(f"\nNext: read the biggest fused kernel: `{nxt}`")
    if res["target"]:
        lines.append(f"Then: time it: `{cmdline.cli_command('perf', '--', *__import__('shlex').split(res['target']))}`")
    return "\n".join(lines)


def code_md(res):
    """One kernel (--code): its ATen ops, user lines and source."""
    md = [f"# kernel {res['kernel']} (graph {res['graph']}, {res['kind']})"]
    if res["ops"]:
        md.append(f"ATen ops: {_ops_str(res['ops'], 20)}")
    if res["user_lines"]:
        md.append("user lines: " + "; ".join(f"{os.path.basename(l['file'])}:{l['line']} `{l.get('code') or ''}`"
                                             for l in res["user_lines"][:6]))
    if res["also_in"]:
        md.append(f"same name also in graph(s) {', '.join(res['also_in'])} (pick with --graph)")
    if res["source"] is None:
        md.append("\nnot generated code: it calls an existing ATen/extern kernel; see the launch in " + str(res["output_code"]))
    else:
        lang = "python" if res["kind"] and res["kind"].startswith("triton") else "cpp"
        md.append(f"\n```{lang}\n{res['source'].rstrip()}\n```")
    md.append(f"\nfull output code: {res['output_code']}")
    return "\n".join(md)
