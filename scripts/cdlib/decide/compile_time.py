"""Compile time and caches from a TORCH_TRACE: per compiled frame and per phase, recompiles' share,
what the FX graph / AOTAutograd caches did (hits, misses, bypasses with PyTorch's reason), autotuning,
repeated blocks (candidates for regional compilation). No torch import: works on recorded traces.

summarize(trace) -> a JSON-safe dict; compare(cold, warm) -> the cold/warm difference; for the
compile-time command's result: status(summary), suggestions(...) (what would help, with its saving) and notes."""
import json
import re

from . import analyze, analyze_recompiles, knowledge
from ..read.frames import is_user_file
from ..read import trace as tracemod

# Phases, in pipeline order. Each timed region (chromium_event B/E pair) is attributed to the phase of
# its name; regions with an unknown name belong to their parent's phase. A region's self time (its
# duration minus its children's) goes to its phase, so the phases partition the compile time.
PHASES = [
    ("dynamo", "Dynamo tracing (bytecode)"),
    ("guards", "Dynamo guards"),
    ("aot", "AOTAutograd (tracing, partitioning)"),
    ("passes", "Inductor FX passes"),
    ("lowering", "Inductor lowering"),
    ("scheduling", "Inductor scheduling/fusion"),
    ("codegen", "Inductor code generation"),
    ("kernel_compile", "C++/Triton kernel compile"),
    ("autotune", "autotuning/benchmarking"),
    ("cache", "cache keys/loading"),
    ("other", "other (gc, pgo)"),
]
PHASE_LABEL = dict(PHASES)
_EXACT = {
    "dynamo": "dynamo", "entire_frame_compile": "dynamo", "bytecode_tracing": "dynamo",
    "insert_deferred_runtime_asserts": "dynamo", "fullgraph_capture": "dynamo",
    "build_guards": "guards", "precompile_build_guards": "guards", "precompile_load_guards": "guards",
    "backend_compile": "aot", "create_aot_dispatcher_function": "aot", "aot_collect_metadata": "aot",
    "aot_trace_joint_graph": "aot", "min_cut_rematerialization_partition": "aot",
    "entire_backward_compile": "aot",
    "_recursive_pre_grad_passes": "passes", "_recursive_joint_graph_passes": "passes",
    "_recursive_post_grad_passes": "passes",
    "inductor_compile": "lowering", "compile_fx.<locals>.fw_compiler_base": "lowering",
    "compile_fx.<locals>.bw_compiler": "lowering", "fx_codegen_and_compile": "lowering",
    "GraphLowering.run": "lowering", "additional_fake_tensor_prop": "lowering",
    "Scheduler.codegen": "codegen", "code_gen": "codegen", "GraphLowering.codegen": "codegen",
    "GraphLowering.compile_to_fn": "codegen", "PythonWrapperCodegen.generate": "codegen",
    "CppWrapperCpu.generate": "codegen", "CppWrapperGpu.generate": "codegen",
    "generate_kernel_code_from_nodes": "codegen", "GraphLowering.codegen_subgraph": "codegen",
    "compile_file": "kernel_compile", "async_compile.wait": "kernel_compile",
    "async_compile.precompile": "kernel_compile", "PyCodeCache.load_by_key_path": "kernel_compile",
    "cpp_wrapper_compile": "kernel_compile", "AotCodeCompiler.compile": "kernel_compile",
    "CachingAutotuner.slow_precompile_config": "kernel_compile",
    "StaticAutotunerFuture.warm_precompile": "kernel_compile", "reload_kernel_in_parent": "kernel_compile",
    "CachingAutotuner.benchmark_all_configs": "autotune", "CachingAutotuner.coordinate_descent_tuning": "autotune",
    "CachingAutotuner.combo_sequential_autotune": "autotune", "benchmark_codegened_module": "autotune",
    "autotune_select_algorithm": "autotune",
    "inductor_codecache_torch_key": "cache", "CacheBase.get_system.triton_key": "cache",
    "AOTAutogradCache.inductor_load": "cache", "GraphPickler.loads": "cache",
    "gc": "other",
}
_PREFIX = [("pass.", "passes"), ("compile_attempt_", "dynamo"), ("Scheduler.", "scheduling"),
           ("TritonBundler.", "cache"), ("CompiledArtifact.", "cache"), ("remote_", "cache"),
           ("pgo.", "other")]
_SUFFIX = [("_template_autotuning", "autotune"), ("_template_precompiling", "autotune")]


def phase_of(name):
    """The phase of a timed region's name, or None (then it belongs to its parent's phase)."""
    if name in _EXACT:
        return _EXACT[name]
    for p, ph in _PREFIX:
        if name.startswith(p):
            return ph
    for s, ph in _SUFFIX:
        if name.endswith(s):
            return ph
    return None


def _r(x, n=3):
    return round(x, n) if isinstance(x, (int, float)) else None


CONCURRENT = {"compile_file"}   # may run on compile worker threads: overlapping, not nested


def _regions(tr):
    """Matched timed regions: [(start_s, end_s, name, compile_id, seq)]. seq orders nesting: a region
    opened later is inside the ones open at that time. compile_file regions come back separately."""
    main, conc, stacks, open_conc, seq = [], [], {}, {}, 0
    for e in tr.of("chromium_event"):
        j = e.payload_json()
        if not isinstance(j, dict) or j.get("ph") not in ("B", "E") or not isinstance(j.get("ts"), (int, float)):
            continue
        key = (e.pid, j.get("pid"), j.get("tid"))
        name = j.get("name") or "?"
        cid = (j.get("args") or {}).get("compile_id")
        ts = j["ts"] / 1e6
        if name in CONCURRENT:   # pair LIFO per name; sums and unions do not depend on the pairing
            lst = open_conc.setdefault(key, [])
            if j["ph"] == "B":
                lst.append((ts, cid))
            elif lst:
                b, bcid = lst.pop()
                conc.append((b, ts, name, bcid or cid))
            continue
        st = stacks.setdefault(key, [])
        if j["ph"] == "B":
            parent = st[-1] if st else None
            seq += 1
            st.append((ts, name, cid or (parent[2] if parent else None), seq))
            continue
        idx = next((i for i in range(len(st) - 1, -1, -1) if st[i][1] == name), None)
        if idx is None:
            continue
        b, _, rcid, rseq = st[idx]
        del st[idx:]
        main.append((b, ts, name, rcid, rseq))
    return main, conc


# What a cache hit skips: an AOTAutograd cache hit skips everything inside these regions (AOT tracing,
# joint-graph passes, partitioning, the Inductor compile of the forward and of the lazy backward); an FX
# graph cache hit skips fx_codegen_and_compile (post-grad passes, lowering, scheduling, codegen). Not
# skipped: Dynamo tracing, guards, pre-grad passes, cache keys, and the kernels: a hit loads the compiled
# kernels, and C++/Triton kernels have their own cache keyed by source (a bypassed graph's kernels
# still come from it on a warm start). Region names from torch 2.14.1's dynamo_timed calls.
CACHE_COVER = {"create_aot_dispatcher_function": "aot", "entire_backward_compile": "aot",
               "fx_codegen_and_compile": "fx"}
SKIPPED_PHASES = ("aot", "passes", "lowering", "scheduling", "codegen")


def _phase_times(tr):
    """({compile_id or "runtime": {phase: seconds}}, {compile_id: {"aot"|"fx": {phase: seconds}}}): a sweep
    over the timed regions; each instant goes to the phase of the innermost open region (unknown names
    inherit their parent's phase). While a C++/Triton compile_file is open, Inductor-side instants count
    as kernel compile (the compile runs or is waited for then), so the phases partition the wall-clock
    compile time without double counting. The second dict: the instants inside the regions that an
    AOTAutograd / FX graph cache hit would skip (CACHE_COVER), per phase."""
    main, conc = _regions(tr)
    # phase of each main region: its own, else its innermost enclosing region's
    main.sort(key=lambda r: r[4])
    phase, cover, stack = {}, {}, []
    for b, en, name, cid, sq in main:
        while stack and not (stack[-1][0] <= b and en <= stack[-1][1]):
            stack.pop()
        phase[sq] = phase_of(name) or (phase[stack[-1][3]] if stack else "other")
        if name in CACHE_COVER:
            cover[sq] = CACHE_COVER[name]
        stack.append((b, en, name, sq))
    points = []
    for b, en, name, cid, sq in main:
        points += [(b, 1, ("m", sq, cid)), (en, 0, ("m", sq, cid))]
    for i, (b, en, name, cid) in enumerate(conc):
        points += [(b, 1, ("c", i, cid)), (en, 0, ("c", i, cid))]
    points.sort(key=lambda p: (p[0], p[1]))
    out, covered, open_m, open_c, last = {}, {}, {}, {}, None
    for t, is_start, (kind, ident, cid) in points:
        if last is not None and t > last and (open_m or open_c):
            if open_m:
                sq = max(open_m)
                ph, c = phase[sq], open_m[sq]
                if open_c and ph in ("passes", "lowering", "scheduling", "codegen", "other"):
                    ph = "kernel_compile"
            else:
                ph, c = "kernel_compile", next(iter(open_c.values()))
            d = out.setdefault(c or "runtime", {})
            d[ph] = d.get(ph, 0.0) + (t - last)
            for cv in {cover[s] for s in open_m if s in cover}:
                d = covered.setdefault(c or "runtime", {}).setdefault(cv, {})
                d[ph] = d.get(ph, 0.0) + (t - last)
        last = t
        target = open_m if kind == "m" else open_c
        if is_start:
            target[ident] = cid
        else:
            target.pop(ident, None)
    return out, covered


CACHE_ARTIFACTS = re.compile(r"^(fx_graph_cache|aotautograd_cache)_(hit|miss|bypass|disabled)$")
CACHE_NAMES = {"fx_graph_cache": "FX graph cache (Inductor)", "aotautograd_cache": "AOTAutograd cache"}


def _caches(tr):
    """{cache: {hit, miss, bypass, disabled, reasons: [{reason, count, compile_ids, fix}], time_saved_s}}."""
    out = {}
    for e in tr.events:
        m = CACHE_ARTIFACTS.match(e.artifact_name or "")
        if not m:
            continue
        cache, state = m.groups()
        c = out.setdefault(cache, {"hit": 0, "miss": 0, "bypass": 0, "disabled": 0, "reasons": [], "time_saved_s": 0.0})
        c[state] += 1
        j = e.payload_json() or {}
        if state == "hit" and isinstance(j.get("time_saved_ms"), (int, float)):
            c["time_saved_s"] = round(c["time_saved_s"] + j["time_saved_ms"] / 1000, 3)
        if state in ("bypass", "miss"):
            reason = j.get("cache_bypass_reason") or (None if state == "miss" else "unknown")
            if state == "miss" and j.get("cache_status_detailed") not in (None, "full_miss"):
                reason = f"miss: {j['cache_status_detailed']}"
            if reason:
                r = next((x for x in c["reasons"] if x["reason"] == reason and x["state"] == state), None)
                if r is None:
                    r = {"state": state, "reason": reason, "count": 0, "compile_ids": [], "fix": bypass_fix(reason)}
                    c["reasons"].append(r)
                r["count"] += 1
                if e.compile_id and e.compile_id not in r["compile_ids"]:
                    r["compile_ids"].append(e.compile_id)
    effects = _effect_ops(tr) if any("with_effects" in r["reason"] for c in out.values() for r in c["reasons"]) else {}
    for r in (r for c in out.values() for r in c["reasons"] if "with_effects" in r["reason"] and effects):
        r["effects"], r["fix"] = effects, effects_fix(effects)
    for e in tr.artifacts("aotautograd_cache_pickle_failure"):
        c = out.setdefault("aotautograd_cache", {"hit": 0, "miss": 0, "bypass": 0, "disabled": 0, "reasons": [],
                                                 "time_saved_s": 0.0})
        j = e.payload_json() or {}
        reason = f"Unable to serialize: {j.get('error')}" + (f" (field {j['field']})" if j.get("field") else "")
        c["reasons"].append({"state": "save failed", "reason": reason, "count": 1, "compile_ids": [e.compile_id],
                             "fix": bypass_fix(reason)})
    return out


def bypass_fix(reason):
    """The knowledge/compile_time.yaml row for a bypass reason: {id, fix, docs} or a 'not known' row."""
    for row in knowledge.load("compile_time")["bypass_reasons"]:
        if re.search(row["pattern"], reason or "", re.I):
            fix = " ".join(row["fix"].split())
            if row.get("name"):   # the op the reason names, in the fix ({name}; {{ }} are literal braces)
                m = re.search(row["name"], reason)
                name = next((g for g in (m.groups() if m else ()) if g), None)
                how = " ".join(((row.get("how") or {}).get(name) or "").split())
                mod = re.search(row["module"], reason) if row.get("module") else None   # its module, as PyTorch names it
                fix = fix.format(name=name or "named in the reason", how=how,
                                 module=mod.group(1) if mod else "<its module>")
            return {"id": row["id"], "fix": fix, "docs": row.get("docs")}
    return {"id": None, "fix": "not in our table; PyTorch's reason is quoted as is (search it in "
            "torch/_inductor/codecache.py or torch/_functorch/_aot_autograd/autograd_cache.py)", "docs": None}


# with_effects(token, torch.ops.aten._linalg_check_errors.default, x, 'linalg.cholesky', is_matrix = True)
_WITH_EFFECTS_RE = re.compile(r"with_effects\([^,()]+, torch\.ops\.([\w.]+?)\.\w+((?:, [^()]*)?)\)")


def _effect_ops(tr):
    """{op: the first quoted argument (the calling API, e.g. 'linalg.cholesky') or None} of the ops wrapped in
    with_effects in the trace's graphs."""
    found = {}
    for e in tr.events:
        p = e.payload if isinstance(e.payload, str) else ""
        for op, args in _WITH_EFFECTS_RE.findall(p) if "with_effects(" in p else []:
            api = re.search(r"'([\w.]+)'", args)
            found.setdefault(op, api.group(1) if api else None)
    return found


def effects_fix(effects):
    """The bypass fix for graphs with ops wrapped in with_effects: a known op's own (knowledge/compile_time.yaml,
    higher_order_op's effects), else the general one naming the ops."""
    row = next(r for r in knowledge.load("compile_time")["bypass_reasons"] if r["id"] == "higher_order_op")
    for op, api in effects.items():
        known = next((k for k in row.get("effects") or [] if k["op"] == op), None)
        if known:
            return {"id": "higher_order_op", "docs": None,
                    "fix": " ".join(known["fix"].split()).format(api=api or "linalg")}
    ops = ", ".join(f"{op}" + (f" (from {api})" if api else "") for op, api in effects.items())
    return {"id": "higher_order_op", "docs": None, "fix": " ".join(row["effects_fix"].split()).format(ops=ops)}


_MOD_SPLIT = "_modules_"


def repeated_blocks(tr):
    """Containers whose numbered children appear as graph inputs (e.g. l_self_modules_layers_modules_3_...):
    [{container, count, compile_ids}], largest first. A model of repeated layers compiled whole. Children that
    are single layers (one or two tensors, no layers of their own) are not blocks."""
    found = {}
    for e in tr.of("compilation_metrics"):
        shapes = e.data.get("graph_node_shapes") if isinstance(e.data, dict) else None
        if not isinstance(shapes, str):
            continue
        for name, shape in re.findall(r"'([A-Za-z_][A-Za-z0-9_]*)': (\[[^\]]*\]|[^,}]*)", shapes):
            parts = name.split(_MOD_SPLIT)
            for i in range(1, len(parts)):
                m = re.match(r"^(\d+)(?:_|$)", parts[i])
                if not m:
                    continue
                path = ".".join(p for p in parts[1:i]) or "(the model itself)"
                f = found.setdefault(path, {"children": {}, "cids": set()})
                # a child's signature: its own inputs (parameter/buffer names below it) and their shapes
                rest = _MOD_SPLIT.join(parts[i:])[len(m.group(1)):]
                f["children"].setdefault(int(m.group(1)), set()).add((rest, shape.strip()))
                f["cids"].add(e.compile_id or "?")
    out = []
    for k, v in found.items():
        # repeated layers have the same signature (a Sequential of Linear, GELU, Linear does not)
        groups = {}
        for sig in v["children"].values():
            # a block has layers of its own or several tensors; one torch.nn layer (an Embedding's weight, a
            # Linear's weight and bias) is one op: compiling each alone saves nothing (blind A/B batch 33: a
            # ModuleList of 8 Embeddings was named, and its "measured" saving left the model's compute eager)
            if any(_MOD_SPLIT in rest for rest, _ in sig) or len(sig) > 2:
                groups[frozenset(sig)] = groups.get(frozenset(sig), 0) + 1
        count = max(groups.values(), default=0)
        if count >= 2:
            out.append({"container": k, "count": count, "compile_ids": sorted(v["cids"])})
    return sorted(out, key=lambda x: -x["count"])


_NODE_SRC = re.compile(r"# File: (\S+?):(\d+) in (\w+)")


def _defs(path, cache):
    """[(first, last, name)] of the functions defined in a source file (innermost last), or []."""
    if path not in cache:
        import ast
        try:
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read())
            cache[path] = sorted(((n.lineno, n.end_lineno, n.name) for n in ast.walk(tree)
                                  if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), key=lambda d: d[0])
        except (OSError, SyntaxError, ValueError):
            cache[path] = []
    return cache[path]


def repeated_code(tr, least=8):
    """Code of the program traced many times into one graph: a Python loop that calls the same cell or
    function every step is unrolled (the graph, and its compile time, grow with the loop's length). Per
    Dynamo graph, each user function's lines are counted in the node comments; a function's count is its
    least-used line (a line makes at least one node each time the function is traced). Functions are told
    apart by their definition in the file (two classes' `forward` in one file are two functions).
    [{compile_id, function, file, lines: [first, last], times, nodes}], most repeated first."""
    from ..read.frames import is_user_file
    out, defs = [], {}
    for e in tr.of("dynamo_output_graph"):
        if not e.payload:
            continue
        counts = {}
        found = _NODE_SRC.findall(e.payload)
        for path, line, fn in found:
            if not is_user_file(path):
                continue
            line = int(line)
            inner = [d for d in _defs(path, defs) if d[0] <= line <= d[1] and d[2] == fn]
            key = (path, fn, inner[-1][0] if inner else None)
            f = counts.setdefault(key, {})
            f[line] = f.get(line, 0) + 1
        for (path, fn, _), lines in counts.items():
            times = min(lines.values())
            if times >= least:
                out.append({"compile_id": e.compile_id, "function": fn, "file": path,
                            "lines": [min(lines), max(lines)], "times": times, "nodes": len(found)})
    return sorted(out, key=lambda r: -r["times"])


def _config_flag(tr, key, name):
    for e in tr.of("compilation_metrics"):
        cfg = e.data.get(key) if isinstance(e.data, dict) else None
        if isinstance(cfg, str):
            try:
                return json.loads(cfg).get(name)
            except ValueError:
                return None
    return None


def summarize(tr, wall_s=None, top=5):
    """A trace (path or trace.Trace) -> the compile-time summary (JSON-safe dict)."""
    if isinstance(tr, str):
        tr = tracemod.parse(tr)
    phase_by_cid, covered = _phase_times(tr)
    recs = analyze_recompiles._recompiles(tr, "")
    whys, kinds = analyze_recompiles.recompile_whys(recs), analyze_recompiles.recompile_kinds(recs)
    statics = analyze_recompiles.recompile_static(recs)
    frames = {}
    autotune_compile_us = autotune_runtime_us = triton_us = 0
    restart_s = 0.0
    for e in tr.of("compilation_metrics") + tr.of("bwd_compilation_metrics"):
        d = e.data if isinstance(e.data, dict) else {}
        cid = e.compile_id or d.get("compile_id")
        if not cid:
            continue
        f = frames.setdefault(cid, {"compile_id": cid, "frame_compile_time_s": 0.0, "backward_compile_time_s": 0.0,
                                    "ops": None, "failed": None})
        if e.key == "compilation_metrics":
            f["frame_compile_time_s"] = _r(d.get("entire_frame_compile_time_s")) or 0.0
            f["ops"] = d.get("graph_op_count")
            f["failed"] = d.get("fail_type")
            restart_s += d.get("dynamo_time_before_restart_s") or 0.0
        autotune_compile_us += d.get("compile_time_autotune_time_us") or 0
        autotune_runtime_us += d.get("runtime_triton_autotune_time_us") or 0
        triton_us += d.get("triton_compile_time_us") or 0
    for cid, s in analyze.backward_compile_s(tr).items():
        if cid in frames:
            frames[cid]["backward_compile_time_s"] = _r(s)
    for cid in phase_by_cid:
        if cid != "runtime" and cid not in frames and re.match(r"^!?[\d/]+$", cid):
            frames[cid] = {"compile_id": cid, "frame_compile_time_s": 0.0, "backward_compile_time_s": 0.0,
                           "ops": None, "failed": None}
    caches_by_cid = {}
    for e in tr.events:
        m = CACHE_ARTIFACTS.match(e.artifact_name or "")
        if m and e.compile_id:
            caches_by_cid.setdefault(e.compile_id, []).append(f"{'fx' if m.group(1).startswith('fx') else 'aot'} {m.group(2)}")
    rows, totals = [], {}
    for cid, f in frames.items():
        ph = {k: _r(v) for k, v in sorted(phase_by_cid.get(cid, {}).items(), key=lambda kv: -kv[1]) if v >= 0.0005}
        for k, v in ph.items():
            totals[k] = totals.get(k, 0.0) + v
        total = f["frame_compile_time_s"] + f["backward_compile_time_s"]
        if not total and ph:
            total = sum(ph.values())
        frame_id = int(cid.lstrip("!").split("/")[-2]) if cid.count("/") else None
        name, loc, wrapper = analyze_recompiles.function_info(tr, frame_id) if frame_id is not None else (cid, None, None)
        cfile = analyze_recompiles.frame_code(tr, frame_id)[1] if frame_id is not None else None
        rows.append({"compile_id": cid, "function": name, "location": loc.short() if loc else None,
                     "code": loc.code if loc else None, "user_code": bool(loc and is_user_file(loc.file)),
                     "total_s": _r(total), "frame_s": f["frame_compile_time_s"], "backward_s": f["backward_compile_time_s"],
                     "ops": f["ops"], "failed": f["failed"], "recompile": not cid.endswith("/0"),
                     # torch's own code compiled as a frame (an optimizer's step): its path, else None
                     "torch_code": analyze_recompiles._short_torch_path(cfile) if analyze_recompiles.is_torch_work(cfile)
                     else None,
                     "phases": ph, "caches": sorted(set(caches_by_cid.get(cid, []))),
                     # what a cache hit would skip of this frame's compile (see CACHE_COVER)
                     "cache_skippable": {cv: {k: _r(v) for k, v in d.items() if k in SKIPPED_PHASES and v >= 0.0005}
                                         for cv, d in covered.get(cid, {}).items()},
                     "recompile_expected": whys.get(cid) if not cid.endswith("/0") else None,
                     "recompile_kind": kinds.get(cid) if not cid.endswith("/0") else None,
                     # a new size of a function compiled with dynamic=False: a graph per size by design
                     "recompile_static": bool(statics.get(cid)) and not cid.endswith("/0")})
    costly = costly_dynamic(rows)
    rows.sort(key=lambda r: -(r["total_s"] or 0))
    compile_s = round(sum(r["total_s"] or 0 for r in rows), 3)
    recompile_s = round(sum(r["total_s"] or 0 for r in rows if r["recompile"]), 3)
    phase_total = sum(totals.values())
    phases = [{"phase": k, "label": PHASE_LABEL[k], "seconds": _r(totals[k]),
               "share": _r(totals[k] / phase_total, 3) if phase_total else None}
              for k, _ in PHASES if totals.get(k)]
    runtime = phase_by_cid.get("runtime", {})
    return {
        "torch_version": tr.torch_version(),
        "compiled_frames": len(rows),
        "compile_time_s": compile_s,
        "wall_time_s": _r(wall_s),
        "compile_share_of_wall": _r(compile_s / wall_s, 3) if wall_s else None,
        "recompiles": sum(1 for r in rows if r["recompile"]),
        "recompile_time_s": recompile_s,
        "recompile_share": _r(recompile_s / compile_s, 3) if compile_s else None,
        # recompiles torch expects (triage's rule: automatic dynamic, one mode switch): nothing to fix
        "expected_recompiles": sum(1 for r in rows if r["recompile_expected"]),
        "expected_recompile_time_s": _r(sum(r["total_s"] or 0 for r in rows if r["recompile_expected"])),
        "costly_dynamic": costly,
        "restart_time_s": _r(restart_s),
        "phases": phases,
        "runtime_regions_s": {k: _r(v) for k, v in runtime.items() if v >= 0.0005},
        "frames": rows,
        "top_frames": [r["compile_id"] for r in rows[:top]],
        "caches": _caches(tr),
        # mode="max-autotune" patches the config per compile, which the recorded global inductor_config
        # does not show (seen on torch 2.11, H100): time spent autotuning is the evidence then
        "autotune": {"max_autotune": bool(_config_flag(tr, "inductor_config", "max_autotune"))
                     or bool(totals.get("autotune")) or autotune_compile_us > 0,
                     "max_autotune_gemm": bool(_config_flag(tr, "inductor_config", "max_autotune_gemm")),
                     "compile_time_autotune_s": _r(autotune_compile_us / 1e6),
                     "runtime_triton_autotune_s": _r(autotune_runtime_us / 1e6)},
        "triton_compile_time_s": _r(triton_us / 1e6),
        "repeated_blocks": repeated_blocks(tr),
        "repeated_code": repeated_code(tr),
    }


# the phases that symbolic sizes make dearer (tracing, functionalization, lowering, fusion, guards); code generation
# and kernel compile are left out: a process's first compile also pays one-time costs there (its CPU ISA probes, the
# compile workers' start), seen as 40 s of the first compile's codegen on a 16-core machine
SYMBOLIC_PHASES = ("dynamo", "aot", "lowering", "scheduling", "guards")


def costly_dynamic(rows, ratio=2.0, least_s=5.0):
    """Recompiles on a new size (automatic dynamic makes the sizes symbolic) whose tracing and lowering cost at least
    `ratio` times the function's first, static compile's and `least_s` more: the symbolic sizes are the cost, and a
    static graph per size would compile like the first (blind A/B batch 31: HF Swin at 64, 80 and 96 px, the 80 px
    dynamic recompile 340 s vs 114 s, its window padding a nest of floor/mod size expressions; it was called
    "expected, nothing to fix")."""
    def traced(r):
        return round(sum((r.get("phases") or {}).get(k, 0.0) for k in SYMBOLIC_PHASES), 3)
    first = {r["compile_id"].rsplit("/", 1)[0]: r for r in rows if r["compile_id"].endswith("/0")}
    out = []
    for r in rows:
        f = first.get(r["compile_id"].rsplit("/", 1)[0])
        if not (r["recompile"] and r.get("recompile_kind") == "shape" and f
                and not (r.get("recompile_expected") or "").startswith("dynamic=False")):
            continue
        t, t0 = traced(r), traced(f)
        if t >= ratio * t0 and t - t0 >= least_s:
            out.append({"compile_id": r["compile_id"], "function": r["function"], "location": r["location"],
                        "s": r["total_s"], "first_s": f["total_s"], "trace_s": t, "first_trace_s": t0})
    return out


def compare(cold, warm):
    """Two summaries (cold cache, then warm) -> the saving and what changed per cache."""
    def hits(s, c):
        return (s["caches"].get(c) or {}).get("hit", 0)
    out = {"cold_compile_s": cold["compile_time_s"], "warm_compile_s": warm["compile_time_s"],
           "cold_wall_s": cold.get("wall_time_s"), "warm_wall_s": warm.get("wall_time_s"),
           "compile_saving_s": _r(cold["compile_time_s"] - warm["compile_time_s"]),
           "compile_ratio": _r(warm["compile_time_s"] / cold["compile_time_s"], 3) if cold["compile_time_s"] else None,
           "warm_cache_hits": {c: hits(warm, c) for c in CACHE_NAMES},
           "warm_cache_misses": {c: (warm["caches"].get(c) or {}).get("miss", 0) for c in CACHE_NAMES},
           "warm_cache_bypasses": {c: (warm["caches"].get(c) or {}).get("bypass", 0) for c in CACHE_NAMES}}
    if cold.get("wall_time_s") and warm.get("wall_time_s"):
        out["wall_saving_s"] = _r(cold["wall_time_s"] - warm["wall_time_s"])
    return out
