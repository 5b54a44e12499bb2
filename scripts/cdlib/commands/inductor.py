"""`inductor -- <command...>`: per compiled graph, the kernels Inductor generated (Triton / C++ /
extern / fallback), the ATen ops fused into each, the user lines behind them (provenance), the
output code path and cache hits. One run; `--from RUN_DIR` re-reads a previous run."""
import os
import re

from ..read import inductor_info as II
from ..run import inductor_run as IR
from ..show import output
from .. import cmdline
from ..errors import CliError

HELP = "kernels Inductor generated per graph: fusion, fallbacks, output code, user lines"
ORDER = 40
TAKES_TARGET = True
DESCRIPTION = """Run the target once with TORCH_TRACE, Inductor provenance tracking and
TORCH_COMPILE_DEBUG into the run dir, and list per compiled graph the generated kernels (Triton / C++
/ extern such as mm / fallback to an eager ATen op), the ATen ops fused into each kernel, the user
source lines behind it, the output code file, and FX graph cache hits."""
EPILOG = """examples:
  compile_debug.py inductor -- python train.py --steps 2
  compile_debug.py inductor --perf-hints -- python train.py
  compile_debug.py inductor --from /tmp/compile-debug/inductor-... --code cpp_fused_add_relu_0"""

PERF_LINE = re.compile(r"^[VIWEC]\d{4} [\d:.]+ \d+ \S+\] (?:\[([^\]]*)\] )?\[__(perf_hints|cudagraphs)\] (.*)$")


def add_arguments(p):
    IR.add_common(p)
    p.add_argument("--perf-hints", action="store_true",
                   help="also capture Inductor's perf hints and cudagraph skips (TORCH_LOGS=perf_hints,cudagraphs)")
    p.add_argument("--code", metavar="KERNEL", help="print only this kernel's source (a name from the kernel table)")
    p.add_argument("--graph", metavar="ID", help="only this graph, e.g. 0/0 or 1/0-backward")
    p.add_argument("--max-kernels", type=int, default=25, metavar="N", help="kernels listed per graph (default 25)")


def _perf_hints(path):
    hints = []
    if not path or not os.path.exists(path):
        return hints
    seen = set()
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = PERF_LINE.match(line.rstrip("\n"))
            if not m:
                continue
            cid, kind, msg = m.groups()
            msg = msg.strip()
            if not msg or (kind, msg) in seen:
                continue
            seen.add((kind, msg))
            hints.append({"compile_id": cid, "kind": kind, "message": msg[:500]})
    return hints[:100]


def _gid(g):
    return f"{g['compile_id']}-{g['kind']}" if g.get("kind") else str(g["compile_id"])


def _match_graph(g, sel):
    return not sel or sel == g["compile_id"] or sel == _gid(g)


def run(args):
    if args.code is not None and not re.match(r"^[\w.]+$", args.code):
        raise CliError(f"--code {args.code!r}: expected a kernel name such as cpp_fused_add_relu_0")
    if args.max_kernels < 1:
        raise CliError("--max-kernels must be >= 1")
    extra = {}
    if args.perf_hints and not args.from_dir:
        user = os.environ.get("TORCH_LOGS")
        extra["TORCH_LOGS"] = (user + "," if user else "") + "perf_hints,cudagraphs"
        extra["TORCH_LOGS_OUT"] = "__RUN_DIR__/torch_logs.txt"
    r = _run(args, extra)
    run_dir, tr = r["run_dir"], r["trace"]
    funcs = IR.compile_functions(tr)
    graphs = II.compiled_graphs(tr)
    ddirs = II.debug_dirs(run_dir)
    out_root = os.path.join(run_dir, "inductor")
    results = []
    for g in graphs:
        gid = _gid(g)
        gdir = os.path.join(out_root, gid.replace("/", "_"))
        code_path = None if r["reused"] and not os.path.isdir(gdir) else os.path.join(gdir, "output_code.py")
        if code_path and not os.path.exists(code_path):
            II.save_text(code_path, g["code"])
            if g.get("post_grad"):
                II.save_text(os.path.join(gdir, "post_grad_graph.py"), g["post_grad"])
        kernels = II.analyze_graph(g)
        fn = funcs.get(g["compile_id"])
        results.append({
            "id": gid, "compile_id": g["compile_id"], "kind": g.get("kind"), "function": fn[0] if fn else None,
            "function_loc": fn[1] if fn else None, "cache": g.get("cache"),
            "output_code": code_path or g.get("code_path"), "inductor_output_code": g.get("code_path"),
            "debug_dir": (ddirs.get(g.get("aot_id")) or [None])[-1],
            "provenance": bool(g.get("node_mappings") or g.get("stack_traces")),
            "kernels": kernels,
            "counts": {k: sum(1 for x in kernels if x["kind"] == k) for k in sorted({x["kind"] for x in kernels})},
            "_code": g["code"],
        })
    hints = _perf_hints(os.path.join(run_dir, "torch_logs.txt"))
    tstat, terr = IR.target_status(r)

    if args.code is not None:
        return _show_code(args, r, results)

    sel = [g for g in results if _match_graph(g, args.graph)]
    if args.graph and not sel:
        raise CliError(f"--graph {args.graph}: no such compiled graph (have: {', '.join(g['id'] for g in results) or 'none'})")
    all_k = [k for g in sel for k in g["kernels"]]
    fallbacks = [{"graph": g["id"], "op": k["name"], "user_lines": k["user_lines"]}
                 for g in sel for k in g["kernels"] if k["kind"] == "fallback"]
    n_dynamo = len(tr.of("dynamo_output_graph"))
    if results:
        status = "ok"
    elif r["res"] is not None and not r["res"].ok and not n_dynamo:
        status = "target-failed"
    elif n_dynamo:
        status = "no-inductor"
    else:
        status = "no-compile"
    summary = {
        "graphs": len(sel),
        "kernels": len(all_k),
        "generated": sum(1 for k in all_k if k["kind"] not in ("extern", "fallback")),
        "extern": sum(1 for k in all_k if k["kind"] == "extern"),
        "fallback": len(fallbacks),
        "fx_graph_cache_hits": sum(1 for g in sel if g["cache"] == "hit"),
        "fx_graph_cache_misses": sum(1 for g in sel if g["cache"] == "miss"),
    }
    result = {
        "command": "inductor", "run_dir": run_dir, "status": status, "target": r["target_str"],
        "target_status": tstat, "target_error": terr, "torch_version": tr.torch_version(),
        "summary": summary, "graphs": [{k: v for k, v in g.items() if k != "_code"} for g in sel],
        "fallbacks": fallbacks, "perf_hints": hints if args.perf_hints or hints else None,
        "artifacts": {"trace_dir": os.path.join(run_dir, "trace"), "inductor_dir": out_root,
                      "torch_logs": os.path.join(run_dir, "torch_logs.txt") if hints else None},
    }
    output.emit(args, result, _markdown(args, result, n_dynamo))
    return 0


def _run(args, extra):
    if "TORCH_LOGS_OUT" in extra:
        # make the run dir first so the log file lands inside it
        from ..run import rundir
        if not args.from_dir:
            args.out = rundir.make(args.out, "inductor")
            extra["TORCH_LOGS_OUT"] = os.path.join(args.out, "torch_logs.txt")
    return IR.run(args, "inductor", extra)


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


def _markdown(args, res, n_dynamo):
    s = res["summary"]
    lines = [f"# inductor: {s['graphs']} compiled graph(s), {s['kernels']} kernel launches "
             f"({s['generated']} generated, {s['extern']} extern, {s['fallback']} fallback)"]
    lines += output.target_header(res)
    if res["status"] == "no-inductor":
        lines.append(f"\nDynamo captured {n_dynamo} graph(s) but none went through Inductor: the backend is not "
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
        for k in g["kernels"][: args.max_kernels]:
            kind = "**fallback**" if k["kind"] == "fallback" else k["kind"]
            rows.append([k["name"], kind, f"{_ops_str(k['ops'])}" + (f" ({k['n_ops']})" if k["n_ops"] > 1 else ""),
                         _loc_str(k["user_lines"])])
        if rows:
            lines.append(output.table(["kernel", "kind", "ATen ops fused", "user lines"], rows))
        if len(g["kernels"]) > args.max_kernels:
            lines.append(f"... {len(g['kernels']) - args.max_kernels} more (--max-kernels N, or --json)")
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


def _show_code(args, r, results):
    hits = []
    for g in results:
        if not _match_graph(g, args.graph):
            continue
        src = II.kernel_source(g["_code"], args.code)
        kinds = {k["name"]: k for k in g["kernels"]}
        if src is not None:
            hits.append((g, src, kinds.get(args.code)))
        elif args.code in kinds:
            hits.append((g, None, kinds[args.code]))
    if not hits:
        names = sorted({k["name"] for g in results for k in g["kernels"]})
        raise CliError(f"--code {args.code}: no such kernel" + (f" (have: {', '.join(names[:12])})" if names else " (no compiled graphs)"))
    g, src, k = hits[0]
    result = {"command": "inductor", "run_dir": r["run_dir"], "status": "ok", "graph": g["id"], "kernel": args.code,
              "kind": k["kind"] if k else None, "ops": k["ops"] if k else None,
              "user_lines": k["user_lines"] if k else None, "source": src, "output_code": g["output_code"],
              "also_in": [h[0]["id"] for h in hits[1:]]}
    md = [f"# kernel {args.code} (graph {g['id']}, {result['kind']})"]
    if k and k["ops"]:
        md.append(f"ATen ops: {_ops_str(k['ops'], 20)}")
    if k and k["user_lines"]:
        md.append("user lines: " + "; ".join(f"{os.path.basename(l['file'])}:{l['line']} `{l.get('code') or ''}`"
                                             for l in k["user_lines"][:6]))
    if result["also_in"]:
        md.append(f"same name also in graph(s) {', '.join(result['also_in'])} (pick with --graph)")
    if src is None:
        md.append("\nnot generated code: it calls an existing ATen/extern kernel; see the launch in " + str(g["output_code"]))
    else:
        lang = "python" if result["kind"] and result["kind"].startswith("triton") else "cpp"
        md.append(f"\n```{lang}\n{src.rstrip()}\n```")
    md.append(f"\nfull output code: {g['output_code']}")
    output.emit(args, result, "\n".join(md))
    return 0
