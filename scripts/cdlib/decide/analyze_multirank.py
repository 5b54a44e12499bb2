"""Multi-rank triage, analysis side: per-rank facts from traces, stacks and logs (what a hung rank was
doing, which rank failed first and why), and what differs between ranks (divergence). No torch import here."""
import hashlib
import os
import re
import signal

from ..read.frames import innermost_user, is_user_file, parse_exception, src_line

COLLECTIVES = ("all_reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor",
               "broadcast", "barrier", "all_to_all", "all_to_all_single", "reduce", "gather", "scatter", "send",
               "recv", "monitored_barrier", "wait", "_wait_tensor", "wait_tensor", "batch_isend_irecv",
               "broadcast_object_list", "all_gather_object", "new_group", "init_process_group")
# a frame in one of these files means the rank was compiling (not running a compiled graph)
COMPILER_FILES = ("/torch/_dynamo/convert_frame.py", "/torch/_dynamo/symbolic_convert.py",
                  "/torch/_dynamo/output_graph.py", "/torch/_inductor/compile_fx.py", "/torch/_inductor/graph.py",
                  "/torch/_inductor/scheduler.py", "/torch/_inductor/codecache.py",
                  "/torch/_inductor/async_compile.py", "/torch/_functorch/aot_autograd.py",
                  "/torch/_functorch/_aot_autograd/jit_compile_runtime_wrappers.py")
COLLECTIVE_OP = re.compile(r"\b(?:_c10d_functional|c10d_functional|c10d)\.(\w+)")


PEER_LOSS = re.compile(r"Connection (?:closed|reset) by peer|remote (?:worker|process)|Broken pipe|"
                       r"ProcessGroupNCCL.*(?:abort|watchdog|timeout)|NCCL (?:communicator was aborted|error: remote)|"
                       r"DistNetworkError|DistBackendError", re.I)


COLLECTIVE_TIMEOUT = re.compile(r"Timed out waiting \d+ ?ms|Watchdog caught collective operation timeout|"
                                r"ran for \d+ milliseconds before timing out|collective operation timeout|"
                                r"DistBackendError.*[Tt]imeout|wait timeout after \d+ ?ms", re.S)


def collective_timeout(rep):
    """The rank's error is its own collective timing out (it waited; the culprit is elsewhere)."""
    return any(COLLECTIVE_TIMEOUT.search((e.message or "") + " " + (e.type or "")) for e in rep.errors)


def root_cause(ranks, launcher_root=None):
    """The rank that failed first (by the shim's end time; else torchrun's "Root Cause" rank, e.g. a
    rank killed by SIGKILL/SIGSEGV) when several failed: (rank, [consequence ranks])."""
    failed = [r for r in ranks if r["status"] in ("failed", "killed")]
    if not failed:
        return None, []
    ended = [r for r in failed if r.get("_end")]
    sig_dead = [r for r in failed if r["status"] == "killed" and r.get("exit_code") not in (None, -signal.SIGTERM)]
    if ended:
        first = min(ended, key=lambda r: r["_end"])
    else:
        first = next((r for r in failed if r["rank"] == launcher_root), sig_dead[0] if sig_dead else failed[0])
    if sig_dead and launcher_root is not None and launcher_root != first["rank"] and \
            any(r["rank"] == launcher_root for r in sig_dead):
        first = next(r for r in sig_dead if r["rank"] == launcher_root)  # died of a signal before the others
    if collective_timeout(first["_rep"]) and not any(r["status"] == "failed" and not collective_timeout(r["_rep"])
                                                     for r in failed if r is not first):
        return first["rank"], []  # it waited for peers that torchrun then killed: see their state_when_killed
    if collective_timeout(first["_rep"]):
        # it gave up waiting: the culprit is a peer that was elsewhere (compiling, another collective)
        others = [r for r in failed if r is not first and not collective_timeout(r["_rep"])
                  and r["status"] == "failed"]
        if others:
            first = min(others, key=lambda r: r.get("_end") or 1e18)
    conseq = []
    for r in failed:
        if r is first:
            continue
        errs = r["_rep"].errors
        # no exception of its own (killed while printing it: only "exit N" with a last line) is no evidence
        # of another cause either: a loaded machine's race (CI, stop 32)
        if (r["status"] == "killed" and r.get("exit_code") in (None, -signal.SIGTERM)) or not errs \
                or any(PEER_LOSS.search(e.message or "") for e in errs) or all(_no_exception(e) for e in errs):
            conseq.append(r["rank"])
    return first["rank"], conseq


def _no_exception(e):
    """An error made from a failed exit without a traceback (error_rows._errors: type "exit N")."""
    return (e.type or "").startswith("exit ")


FAILURE_RE = re.compile(r"rank\s*:\s*(\d+)\s*\(local_rank:\s*\d+\)\s*\n\s*exitcode\s*:\s*(-?\d+)")


ROOT_RE = re.compile(r"Root Cause \(first observed failure\):\s*\n\[\d+\]:.*?rank\s*:\s*(\d+)", re.S)


def torchrun_root_rank(text):
    m = ROOT_RE.search(text or "")
    return int(m.group(1)) if m else None


def torchrun_exit_codes(text):
    """rank -> exit code from torchrun's failure summary (covers ranks killed by a signal)."""
    return {int(m.group(1)): int(m.group(2)) for m in FAILURE_RE.finditer(text or "")}


def _signame(code):
    if code is not None and code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return None


# ---- trace facts not in the Report: last event, open compile, graph hashes ----------------

GLOG_TIME = re.compile(r"^[VIWEC](\d{4}) ([\d:.]+) ")


def last_trace_line_time(files):
    """The glog time of the last event line of a rank's trace (HH:MM:SS.ffffff)."""
    best = None
    for fn in files:
        try:
            with open(fn, "rb") as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                f.seek(max(0, size - 200_000))
                lines = f.read().decode("utf-8", "replace").splitlines()
        except OSError:
            continue
        for ln in reversed(lines):
            m = GLOG_TIME.match(ln)
            if m:
                best = max(best or "", m.group(2))
                break
    return best


# each rank computes on its own GPU: the same graph names cuda:0 on rank 0 and cuda:1 on rank 1
_DEVICE_INDEX = re.compile(r"\b(cuda|xpu|hpu|mps|mtia)(:\d+|', index=\d+)")


def same_on_every_rank(graph_text):
    """A graph's text without what differs between ranks by design (the device index), so that a
    different hash means the ranks traced different code."""
    return _DEVICE_INDEX.sub(lambda m: m.group(1) + (":N" if m.group(2).startswith(":") else "', index=N"),
                             graph_text or "")


def trace_facts(tr):
    """Per-rank facts straight from the trace: compile ids with their graph hash, the last event,
    and a compile that started (dynamo_start) but has no compilation_metrics yet."""
    graphs, collectives = {}, {}
    for e in tr.of("dynamo_output_graph"):
        if e.compile_id:
            h = hashlib.sha1(same_on_every_rank(e.payload).encode()).hexdigest()[:12] if e.payload else None
            graphs[e.compile_id] = h
            ops = []
            for m in COLLECTIVE_OP.finditer(e.payload or ""):
                op = m.group(1)
                if op not in ops and op not in ("wait_tensor", "wait"):
                    ops.append(op)
            if ops:
                collectives[e.compile_id] = ops
    begun = {}  # compile id -> epoch seconds its compile began (chromium "B" events carry a timestamp)
    for e in tr.of("chromium_event"):
        j = e.payload_json()
        if isinstance(j, dict) and j.get("ph") == "B" and isinstance(j.get("ts"), (int, float)):
            cid = (j.get("args") or {}).get("compile_id") or e.compile_id
            if cid and cid not in begun:
                begun[cid] = j["ts"] / 1e6
    started = [e for e in tr.of("dynamo_start") if e.compile_id]
    done = {e.compile_id for e in tr.of("compilation_metrics") if e.compile_id}
    open_compiles = []
    for e in started:
        if e.compile_id not in done and e.compile_id not in [o["compile_id"] for o in open_compiles]:
            frames = tr.frames(e.data.get("stack") if isinstance(e.data, dict) else None)
            user = [f for f in frames if is_user_file(f[0]) and "rank_shim.py" not in f[0]]
            where = user[-1] if user else (frames[-1] if frames else None)
            open_compiles.append({"compile_id": e.compile_id, "started_at": begun.get(e.compile_id),
                                  "function": where[2] if where else None,
                                  "location": f"{where[0]}:{where[1]}" if where else None})
    splits = {}  # DDP optimizer: a graph compiled in pieces at DDP's gradient-bucket boundaries
    for e in tr.of("optimize_ddp_split_child"):
        if e.compile_id:
            splits.setdefault(e.compile_id, []).append((e.data or {}).get("name") if isinstance(e.data, dict) else None)
    last = None
    for e in reversed(tr.events):
        if e.key in ("chromium_event", "str"):
            continue
        last = {"event": e.artifact_name or e.key, "compile_id": e.compile_id}
        break
    return {"graph_hashes": graphs, "collectives": collectives, "compiles_started": len({e.compile_id for e in started}),
            "open_compiles": open_compiles, "last_event": last, "ddp_splits": splits,
            "last_event_time": last_trace_line_time(tr.files)}


STACK_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+) in (\S+)')


def parse_stack_dump(text, shim_path=None):
    """faulthandler dump -> the main thread's frames, innermost first: [(file, line, func)]."""
    threads, cur = [], None
    for ln in (text or "").splitlines():
        if ln.startswith("Thread ") or ln.startswith("Current thread "):
            cur = {"current": ln.startswith("Current thread "), "frames": []}
            threads.append(cur)
            continue
        m = STACK_FRAME.match(ln)
        if m and cur is not None:
            cur["frames"].append((m.group(1), int(m.group(2)), m.group(3)))
    if not threads:
        return []
    # the thread that runs the user's script: it has the shim (runpy) at its bottom; the file may
    # hold several dumps (SIGUSR1 before the timeout, SIGTERM at the kill): the last one wins
    for t in reversed(threads):
        if shim_path and any(f[0] == shim_path for f in t["frames"]):
            return t["frames"]
    cur = [t for t in threads if t["current"]]
    return (cur or threads)[-1]["frames"]


def _short_path(path):
    p = path.replace("\\", "/")
    i = p.find("/site-packages/")
    return p[i + len("/site-packages/"):] if i >= 0 else p


def classify_stack(frames, shim_path=None):
    """(state, detail, user Location-ish dict) of a hung rank from its stack (innermost first)."""
    if not frames:
        return None, None, None
    user = next((f for f in frames if is_user_file(f[0]) and f[0] != shim_path), None)
    uloc = {"file": user[0], "line": user[1], "function": user[2],
            "code": src_line(user[0], user[1])} if user else None
    imp = next((i for i, f in enumerate(frames) if f[0].startswith("<frozen importlib")), None)
    if imp is not None and not any(f[2] in COLLECTIVES for f in frames[:imp]):
        mod = next((f[0] for f in frames[:imp] if f[2] == "<module>"), None)  # innermost module being imported
        return "importing", _short_path(mod) if mod else "a module", uloc
    for f in frames:
        p = f[0].replace("\\", "/")
        if "/torch/distributed/" in p and f[2] in COLLECTIVES:
            return "waiting_collective", f[2], uloc
        if any(p.endswith(c) for c in COMPILER_FILES):
            return "compiling", os.path.basename(p), uloc
    for f in frames:
        p = f[0].replace("\\", "/")
        if p.startswith("<eval_with_key>") or "/torchinductor_" in p or "/_inductor/" in p and "output_code" in p:
            return "running_compiled", "compiled graph", uloc
    if any("/torch/distributed/" in f[0] for f in frames):
        inner = next(f for f in frames if "/torch/distributed/" in f[0])
        return "waiting_collective", inner[2], uloc
    return "running", frames[0][2], uloc


# ---- divergence ---------------------------------------------------------------------------

def _site_key(b):
    loc = b["location"] or {}
    return f"{loc.get('file')}:{loc.get('line')}|{b.get('gb_id') or b.get('gb_type')}"


def _func_key(f):
    loc = f["location"] or {}
    return f"{f['function']}|{loc.get('file')}:{loc.get('line')}"


def _where(loc):
    if not loc:
        return None
    return f"{loc.get('file')}:{loc.get('line')}" if loc.get("line") else loc.get("file")


def divergence(ranks):
    """ranks: [{rank, status, report (dict), facts}] -> the divergence section (JSON-safe)."""
    analyzed = [r for r in ranks if r["report"] is not None]
    all_ranks = [r["rank"] for r in analyzed]
    div = {"divergent": False, "ranks_compared": all_ranks, "graphs": {}, "collectives": [], "graph_breaks": [], "recompiles": [],
           "compile_time": {}, "failed_ranks": [], "timed_out_ranks": [], "summary": []}

    # graphs compiled per rank, compile ids present on some ranks only, different graph hashes
    per = {r["rank"]: r["facts"]["graph_hashes"] for r in analyzed}
    counts = {r["rank"]: r["report"]["stats"].get("graphs", 0) for r in analyzed}
    ids = sorted({c for h in per.values() for c in h}, key=lambda c: [int(x) if x.isdigit() else 0 for x in re.split(r"[/!]", c) if x])
    only, differ = [], []
    for cid in ids:
        have = [rk for rk in all_ranks if cid in per[rk]]
        if len(have) != len(all_ranks):
            fn = None
            for r in analyzed:
                for g in r["report"]["graphs"]:
                    if g["compile_id"] == cid:
                        fn = {"function": g["function"], "location": _where(g["location"]), "ops": g["ops"]}
                        break
                if fn:
                    break
            only.append({"compile_id": cid, "ranks": have, "missing_on": [rk for rk in all_ranks if rk not in have],
                         **(fn or {})})
        else:
            hs = {rk: per[rk][cid] for rk in have}
            if len(set(hs.values())) > 1:
                groups = {}
                for rk, h in hs.items():
                    groups.setdefault(h, []).append(rk)
                differ.append({"compile_id": cid, "groups": [{"hash": h, "ranks": g} for h, g in groups.items()]})
    # collectives inside compiled graphs: a graph that has them on some ranks only is a hang waiting to happen
    coll = {r["rank"]: r["facts"].get("collectives", {}) for r in analyzed}
    coll_diff = []
    for cid in ids:
        ops = {rk: coll[rk].get(cid, []) for rk in all_ranks if cid in per[rk]}
        if any(ops.values()) and (len({tuple(v) for v in ops.values()}) > 1 or len(ops) != len(all_ranks)):
            coll_diff.append({"compile_id": cid, "ops_per_rank": {str(k): v for k, v in ops.items()},
                              "missing_on": [rk for rk in all_ranks if cid not in per[rk]]})
            div["summary"].append(f"compile {cid}: collectives in the graph differ: "
                                  + ", ".join(f"rank {k}: {', '.join(v) or 'none'}" for k, v in ops.items())
                                  + (f", rank(s) {_ranks([rk for rk in all_ranks if cid not in per[rk]])}: graph not compiled"
                                     if len(ops) != len(all_ranks) else ""))
    div["collectives"] = coll_diff
    div["graphs"] = {"per_rank": {str(k): v for k, v in counts.items()},
                     "compile_ids_per_rank": {str(k): sorted(v) for k, v in per.items()},
                     "only_on_some_ranks": only, "different_graphs": differ}
    if len(set(counts.values())) > 1:
        div["summary"].append("graphs compiled per rank differ: " + ", ".join(f"rank {k}: {v}" for k, v in counts.items()))
    for o in only:
        div["summary"].append(f"compile {o['compile_id']} ({o.get('function') or '?'}) only on rank(s) {_ranks(o['ranks'])}")
    for d in differ:
        div["summary"].append(f"compile {d['compile_id']}: ranks traced different graphs ("
                              + "; ".join(f"rank(s) {_ranks(g['ranks'])}" for g in d["groups"]) + ")")

    # graph breaks: sites not hit on every rank, or hit a different number of times
    sites = {}
    for r in analyzed:
        for b in r["report"]["graph_breaks"]:
            k = _site_key(b)
            s = sites.setdefault(k, {"site": _where(b["location"]), "code": (b["location"] or {}).get("code"),
                                     "gb_id": b.get("gb_id"), "gb_type": b.get("gb_type"),
                                     "category": b.get("category"), "fix": (b.get("fix") or {}).get("fix"),
                                     "wrapper": (b.get("fix") or {}).get("wrapper"), "counts": {}, "frames": {}})
            s["counts"][r["rank"]] = s["counts"].get(r["rank"], 0) + b.get("count", 0)
            s["frames"][r["rank"]] = b.get("frames", [])
    for k, s in sites.items():
        have = sorted(s["counts"])
        if len(have) != len(all_ranks) or len(set(s["counts"].values())) > 1:
            item = dict(s, ranks=have, missing_on=[rk for rk in all_ranks if rk not in have],
                        counts={str(a): b for a, b in s["counts"].items()},
                        frames={str(a): b for a, b in s["frames"].items()})
            div["graph_breaks"].append(item)
            if item["missing_on"]:
                div["summary"].append(f"graph break at {s['site']} ({s['gb_id'] or s['gb_type']}) only on rank(s) {_ranks(have)}")
            else:
                div["summary"].append(f"graph break at {s['site']} hit a different number of times: "
                                      + ", ".join(f"rank {a} ×{b}" for a, b in item["counts"].items()))

    # recompiles: functions that recompile on some ranks only or a different number of times (guards compared
    # without the object ids in them: each process has its own)
    funcs = {}
    for r in analyzed:
        for f in r["report"]["recompiles"]:
            k = _func_key(f)
            e = funcs.setdefault(k, {"function": f["function"], "location": _where(f["location"]), "per_rank": {}})
            e["per_rank"][r["rank"]] = {
                "compiles": f["compiles"], "recompiles": len(f["recompiles"]), "limit_hit": f["limit_hit"],
                "reasons": [{"compile_id": rc["compile_id"],
                             "guard": rc["failures"][0]["guard"] if rc["failures"] else None,
                             "kind": rc["failures"][0]["kind"] if rc["failures"] else None,
                             "location": _where(rc["failures"][0]["location"]) if rc["failures"] else None}
                            for rc in f["recompiles"]]}
    for k, e in funcs.items():
        n = {rk: e["per_rank"].get(rk, {}).get("recompiles", 0) for rk in all_ranks}
        lim = {rk: e["per_rank"].get(rk, {}).get("limit_hit", False) for rk in all_ranks}
        guards = {rk: [_same_in_every_process(x["guard"]) for x in e["per_rank"].get(rk, {}).get("reasons", [])]
                  for rk in all_ranks}
        if len(set(n.values())) > 1 or len(set(lim.values())) > 1 or len({tuple(g) for g in guards.values()}) > 1:
            item = {"function": e["function"], "location": e["location"],
                    "recompiles_per_rank": {str(a): b for a, b in n.items()},
                    "limit_hit_ranks": [rk for rk, v in lim.items() if v],
                    "per_rank": {str(a): b for a, b in e["per_rank"].items()}}
            div["recompiles"].append(item)
            most = max(all_ranks, key=lambda rk: n[rk])
            first = next(((most, x) for x in e["per_rank"].get(most, {}).get("reasons", [])), None)
            s = f"{e['function']} ({e['location']}) recompiles " + ", ".join(f"rank {a}: {b}" for a, b in n.items())
            if first:
                s += f"; rank {first[0]} {first[1]['compile_id']}: `{first[1]['guard']}` [{first[1]['kind']}]"
                if first[1]["location"]:
                    s += f" at {first[1]['location']}"
            div["summary"].append(s)

    # compile-time skew
    ct = {r["rank"]: round(r["report"]["stats"].get("compile_time_s", 0.0)
                           + sum(oc.get("running_s") or 0 for oc in r["facts"].get("open_compiles", [])), 3)
          for r in analyzed}
    still = [r["rank"] for r in analyzed if r["facts"].get("open_compiles")]
    if ct:
        lo, hi = min(ct.values()), max(ct.values())
        slow = max(ct, key=ct.get)
        skew = round(hi - lo, 3)
        significant = skew >= 1.0 and (hi > 0 and skew / hi >= 0.25)
        div["compile_time"] = {"per_rank_s": {str(k): v for k, v in ct.items()}, "skew_s": skew,
                               "slowest_rank": slow, "significant": significant, "still_compiling": still}
        if significant:
            div["summary"].append(f"compile-time skew {skew:.1f} s: rank {slow} compiled for {hi:.1f} s, "
                                  f"rank {min(ct, key=ct.get)} for {lo:.1f} s")

    # failed / timed-out / missing ranks
    for r in ranks:
        if r["status"] in ("failed", "killed"):
            div["failed_ranks"].append(r["rank"])
        elif r["status"] in ("timed_out", "hung"):
            div["timed_out_ranks"].append(r["rank"])
    statuses = {r["rank"]: r["status"] for r in ranks}
    if len(set(statuses.values())) > 1:
        div["summary"].append("ranks ended differently: " + ", ".join(f"rank {k} {v}" for k, v in statuses.items()))
    elif div["failed_ranks"]:
        div["summary"].append("all ranks failed")
    div["divergent"] = bool(only or differ or coll_diff or div["graph_breaks"] or div["recompiles"]
                            or len(set(counts.values())) > 1 or div["compile_time"].get("significant")
                            or len(set(statuses.values())) > 1)
    # only the graphs' text differs, with the same collectives on every rank that all ended well: code that indexes
    # or branches on the rank (blind A/B batch 23: `gathered[self.rank] = x` baked a different constant into each
    # rank's graph; "ranks DIVERGE" read as alarming)
    div["rank_specialized"] = bool(differ) and not (only or coll_diff or div["graph_breaks"] or div["recompiles"]
                                                    or len(set(counts.values())) > 1 or len(set(statuses.values())) > 1
                                                    or div["failed_ranks"] or div["timed_out_ranks"])
    if div["rank_specialized"]:
        div["summary"].append("the ranks' graphs differ but hold the same collectives and every rank ended the same: "
                              "expected when the code indexes or branches on the rank (a Python int baked into each "
                              "rank's graph); it matters only if shapes or collectives differ")
    return div


def _ranks(rs):
    return ",".join(str(r) for r in rs) if rs else "none"


def _drop_shim_frames(rep, shim, stderr):
    """The shim is the outermost frame of every rank: never report it as the user's line."""
    exc = parse_exception(stderr)
    frames = [f for f in (exc["frames"] if exc else []) if f.file != shim]
    for e in rep.errors:
        if e.location is not None and e.location.file == shim:
            e.location = innermost_user(frames)
    for b in rep.graph_breaks:
        b.user_stack = [f for f in b.user_stack if f.file != shim]


_OBJ_ID = re.compile(r"(___check_(?:type|obj)_id\([^,()]*(?:\([^()]*\)[^,()]*)*,\s*)\d+|0x[0-9a-fA-F]+")


def _same_in_every_process(guard):
    """A guard's text with object ids masked (`___check_type_id(x, 94006869064208)`, hex addresses): two ranks
    that recompile for the same reason print other ids (blind A/B batch 24: "recompiles on some ranks only" for
    a block's type guard that both ranks hit)."""
    return _OBJ_ID.sub(lambda m: (m.group(1) + "<id>") if m.group(1) else "0x?", guard or "")
