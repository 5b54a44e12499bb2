"""`aot -- <command...>`: what AOTAutograd did to each Dynamo graph: the joint / forward / backward
(or inference) graphs, what the partitioner saved for backward (count and bytes), functionalization
(in-place ops and input mutations) and decompositions (ops before vs after)."""
import os

from ..read import inductor_info as II
from ..run import inductor_run as IR
from ..show import output
from .. import cmdline
from ..errors import CliError

HELP = "AOTAutograd graphs: joint/forward/backward, saved activations, functionalization, decompositions"
ORDER = 41
TAKES_TARGET = True
DESCRIPTION = """Run the target once with TORCH_TRACE (plus Inductor provenance) into the run dir and
show, per compiled frame, the Dynamo graph and the AOTAutograd graphs (joint, forward, backward or
inference) in compact form: op counts before and after decomposition, what the partitioner saved for
backward (count and bytes, largest first), in-place ops and input mutations functionalized away.
Full graphs are written under <run dir>/aot/<compile id>/."""
EPILOG = """examples:
  compile_debug.py aot -- python train.py --steps 1
  compile_debug.py aot --from /tmp/compile-debug/inductor-...   (reuse an inductor/aot run)"""

GRAPH_FILES = {"dynamo_output_graph": "dynamo_graph.py", "aot_joint_graph": "joint_graph.py",
               "aot_forward_graph": "forward_graph.py", "aot_backward_graph": "backward_graph.py",
               "aot_inference_graph": "inference_graph.py"}


def add_arguments(p):
    IR.add_common(p)
    p.add_argument("--top", type=int, default=8, metavar="N", help="largest saved activations / ops listed (default 8)")


def _top_ops(counts, n):
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return [{"op": k, "count": v} for k, v in items[:n]]


def run(args):
    if args.top < 1:
        raise CliError("--top must be >= 1")
    r = IR.run(args, "aot")
    run_dir, tr = r["run_dir"], r["trace"]
    funcs = IR.compile_functions(tr)
    # post-grad graph + provenance per compile id (inference or forward graph first)
    prov = {}
    for g in II.compiled_graphs(tr):
        prov.setdefault(g["compile_id"], g)
    frames = []
    for cid, g in II.aot_graphs(tr):
        gdir = os.path.join(run_dir, "aot", str(cid).replace("/", "_"))
        paths = {}
        for key, fname in GRAPH_FILES.items():
            if g.get(key):
                p = os.path.join(gdir, fname)
                if not os.path.exists(p):
                    II.save_text(p, g[key])
                paths[key.replace("aot_", "").replace("dynamo_output_graph", "dynamo")] = p
        dyn = II.parse_graph(g.get("dynamo_output_graph"))
        training = "aot_forward_graph" in g or "aot_joint_graph" in g
        info = {"compile_id": cid, "function": (funcs.get(cid) or (None,))[0],
                "function_loc": (funcs.get(cid) or (None, None))[1],
                "mode": "training" if training else ("inference" if "aot_inference_graph" in g else "dynamo-only"),
                "graphs": paths, "ops": {}}
        info["ops"]["dynamo"] = len([n for n in dyn["nodes"] if n["op"] and n["op"] != "getitem"])
        counts_after = {}
        for key in ("aot_joint_graph", "aot_forward_graph", "aot_backward_graph", "aot_inference_graph"):
            if g.get(key):
                c = II.op_counts(II.parse_graph(g[key]))
                info["ops"][key.replace("aot_", "").replace("_graph", "")] = sum(c.values())
                if key in ("aot_forward_graph", "aot_inference_graph"):
                    counts_after = c
        info["top_aten_ops"] = _top_ops({II.short_op(k): v for k, v in counts_after.items()}, args.top)
        if training and g.get("aot_backward_graph"):
            sv = II.saved_activations(g.get("aot_forward_graph"), g["aot_backward_graph"])
            acts = sorted([i for i in sv["items"] if i["tensor"] and not i["is_input"]],
                          key=lambda i: -(i["bytes"] or 0))
            info["saved"] = {k: v for k, v in sv.items() if k != "items"}
            info["saved"]["largest"] = [{"name": i["name"], "type": i["type"], "bytes": i["bytes"],
                                          "op": i.get("op"), "loc": i.get("loc")} for i in acts[: args.top]]
            info["saved"]["inputs_saved"] = [i["name"] for i in sv["items"] if i["tensor"] and i["is_input"]]
        # functionalization
        inplace = II.inplace_ops(dyn)
        aot_text = g.get("aot_forward_graph") or g.get("aot_inference_graph") or ""
        copies = sum(1 for n in II.parse_graph(aot_text)["nodes"] if (n["op"] or "").startswith("aten.copy_"))
        info["functionalization"] = {"inplace_ops_in_dynamo_graph": inplace,
                                     "mutated_inputs": II.mutated_inputs(g.get("fw_metadata")),
                                     "copy_back_ops": copies}
        pg = prov.get(cid)
        info["decompositions"] = II.decompositions(g.get("dynamo_output_graph"), pg and pg.get("post_grad"),
                                                   pg and pg.get("node_mappings"))[: args.top * 2]
        frames.append(info)
    tstat, terr = IR.target_status(r)
    status = "ok" if frames else ("target-failed" if r["res"] is not None and not r["res"].ok else "no-compile")
    if frames and all(f["mode"] == "dynamo-only" for f in frames):
        status = "no-aot"
    result = {"command": "aot", "run_dir": run_dir, "status": status, "target": r["target_str"],
              "target_status": tstat, "target_error": terr, "torch_version": tr.torch_version(),
              "frames": frames, "artifacts": {"trace_dir": os.path.join(run_dir, "trace"),
                                              "aot_dir": os.path.join(run_dir, "aot")}}
    output.emit(args, result, _markdown(result))
    return 0


def _loc(loc):
    if not loc:
        return ""
    return f"{os.path.basename(loc['file'])}:{loc['line']}"


def _markdown(res):
    L = [f"# aot: {len(res['frames'])} compiled frame(s)"]
    L += output.target_header(res)
    if res["status"] == "no-aot":
        L.append("\nOnly Dynamo graphs: the backend does not use AOTAutograd (e.g. backend=\"eager\").")
    elif res["status"] in ("no-compile", "target-failed"):
        L.append("\nNo compiled graph in the trace: torch.compile was never reached"
                 + (" (the target failed first)." if res["status"] == "target-failed" else "."))
    for f in res["frames"]:
        head = f"\n## frame {f['compile_id']}"
        if f["function"]:
            head += f" — {f['function']} ({IR.short_path(f['function_loc'])})"
        L.append(head + f" — {f['mode']}")
        o = f["ops"]
        parts = [f"Dynamo {o.get('dynamo', 0)}"]
        for k in ("joint", "forward", "backward", "inference"):
            if k in o:
                parts.append(f"{k} {o[k]}")
        L.append("ops: " + " → ".join(parts[:1]) + (" · ATen: " + ", ".join(parts[1:]) if len(parts) > 1 else ""))
        if f["top_aten_ops"]:
            L.append("top ATen ops: " + ", ".join(f"{x['op'].replace('aten.', '')}×{x['count']}" for x in f["top_aten_ops"]))
        s = f.get("saved")
        if s:
            unk = f" (+{s['unknown_bytes']} symbolic-size)" if s["unknown_bytes"] else ""
            L.append(f"saved for backward: {s['count']} tensors, {II.human_bytes(s['bytes'])}{unk}; "
                     f"of which {s['activations']} activations = {II.human_bytes(s['activation_bytes'])}, "
                     f"{len(s['inputs_saved'])} inputs/params (already alive)"
                     + (f", {s['symints']} SymInts" if s["symints"] else ""))
            if s["largest"]:
                rows = [[a["name"], a["type"], II.human_bytes(a["bytes"]) if a["bytes"] is not None else "symbolic",
                         (a["op"] or "").replace("aten.", ""), _loc(a["loc"])] for a in s["largest"]]
                L.append(output.table(["saved activation", "type", "size", "made by", "user line"], rows))
        fn = f["functionalization"]
        if fn["inplace_ops_in_dynamo_graph"] or fn["mutated_inputs"] or fn["copy_back_ops"]:
            L.append(f"functionalization: {len(fn['inplace_ops_in_dynamo_graph'])} in-place op(s) in the Dynamo graph "
                     f"({', '.join(sorted(set(fn['inplace_ops_in_dynamo_graph']))[:6]) or '-'}) rewritten out-of-place; "
                     f"{fn['mutated_inputs'] or 0} mutated input(s) written back ({fn['copy_back_ops']} copy_)")
        if f["decompositions"]:
            L.append("decomposed: " + "; ".join(
                f"{d['op']} → {', '.join(x.replace('aten.', '') for x in d['aten'][:6])}"
                + (f" (+{len(d['aten']) - 6})" if len(d["aten"]) > 6 else "") for d in f["decompositions"][:6]))
        L.append("graphs: " + ", ".join(f"{k} {p}" for k, p in f["graphs"].items()))
    nxt = cmdline.cli_command("inductor", "--from", res["run_dir"])
    L.append(f"\nNext: the kernels these graphs became (no rerun): `{nxt}`")
    return "\n".join(L)
