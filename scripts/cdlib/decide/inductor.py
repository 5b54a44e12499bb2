"""inductor's analysis: per compiled graph of a run (its trace) the kernels Inductor generated, the perf
hints it logged, and the result the views render; one kernel's source (--code)."""
import os
import re

from ..errors import CliError
from ..read import inductor_code
from ..read import inductor_info as II
from ..run import inductor_run as IR

PERF_LINE = re.compile(r"^[VIWEC]\d{4} [\d:.]+ \d+ \S+\] (?:\[([^\]]*)\] )?\[__(perf_hints|cudagraphs)\] (.*)$")


def perf_hints(path):
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


def per_graph(r):
    """One record per compiled graph of the run r (inductor_run.run's dict): kernels, function, cache,
    output code (saved under <run dir>/inductor/), and the graph's code under "_code"."""
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
    return results


def inductor_result(args, r, results, hints):
    """The kernel listing: the graphs --graph selects, their fallbacks, the perf hints, status and summary."""
    run_dir, tr = r["run_dir"], r["trace"]
    out_root = os.path.join(run_dir, "inductor")
    tstat, terr = IR.target_status(r)
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
    result.update(dynamo_graphs=n_dynamo, max_kernels=args.max_kernels)
    return result


def code_result(args, r, results):
    """One kernel (--code KERNEL, in the graph --graph selects): its kind, ops, user lines and source."""
    hits = []
    for g in results:
        if not _match_graph(g, args.graph):
            continue
        src = inductor_code.kernel_source(g["_code"], args.code)
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
    return result
