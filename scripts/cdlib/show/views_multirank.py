"""Markdown view of a multi-rank triage (triage --nproc N): a per-rank table, what differs between
ranks, where hung ranks were, then the issues common to all ranks (each once). Full per-rank
reports are in <run_dir>/rank_<N>/report.md."""
import os

from .output import clip, table
from .views import _where, headline

MAX_ITEMS = 8
VERDICT_TITLE = {"fails_eager_too": "a bug in the program (fails the same way without torch.compile)",
                 "compile_only": "only fails compiled", "before_compile": "fails before torch.compile runs"}


def _rel(path, base):
    if path and base and str(path).startswith(base + os.sep):
        return os.path.relpath(path, base)
    return path


def _status_cell(r):
    s = r["status"]
    if s == "ok":
        return "exit 0"
    if s == "failed":
        return f"FAILED (exit {r['exit_code']})"
    if s == "hung":
        return "HUNG (killed at timeout)"
    if s == "killed":
        code = r.get("exit_code")
        return "killed" + (f" ({code})" if code not in (None, 0) else "")
    return s.replace("_", " ")


def _title(result):
    div, n = result["divergence"], result["nproc"]
    if result["timed_out"]:
        hung = result["hang"]["ranks"] if result.get("hang") else []
        head = f"HANG — timed out after {result['timeout_s']:.0f} s" + (f", rank(s) {','.join(map(str, hung))} still running" if hung else "")
    elif result.get("interrupted"):
        head = (f"INTERRUPTED after {result['duration_s']:.0f} s (Ctrl-C): this report is what the ranks did "
                "until then")
    elif result.get("launcher_error"):
        head = f"torchrun FAILED before starting the ranks — {clip(result['launcher_error'], 160)}"
    elif result["status"] == "error":
        bad = [str(r["rank"]) for r in result["ranks"] if r["status"] != "ok"]
        head = f"rank(s) {','.join(bad)} failed" if bad else "torchrun failed"
        first = next((r for r in result["ranks"] if r["rank"] == result.get("first_failed_rank")), None)
        if first is not None and len(bad) > 1:
            head += f"; rank {first['rank']} first"
        kind = ((first or {}).get("verdict") or {}).get("kind")
        if kind in VERDICT_TITLE:
            head += f": {VERDICT_TITLE[kind]}"
    elif div["divergent"] and div.get("rank_specialized") and not div["compile_time"].get("significant"):
        head = "ranks compiled different graphs (same collectives: rank-dependent code, no hang risk seen)"
    elif div["divergent"]:
        head = "ranks DIVERGE"
    else:
        head = "no divergence between ranks"
    return f"# torch.compile multi-rank triage ({n} rank{'s' * (n != 1)}): {head}"


def multirank_markdown(result, reps, cwd=None):
    base = cwd or os.getcwd()
    div = result["divergence"]
    out = [_title(result)]
    tv = next((r.torch_version for r in reps if r.torch_version), None)
    if result.get("mode") == "recorded":
        facts = [f"{result['torchrun']} ({sum(1 for r in result['ranks'] if r['status'] == 'recorded')} ranks with a trace)"]
    else:
        facts = [f"`{clip(result['torchrun'], 140)}` → " + ("TIMED OUT" if result["timed_out"] else "INTERRUPTED"
                                                             if result.get("interrupted") else f"exit {result['launcher_exit_code']}")
                 + f" in {result['duration_s']:.1f} s"]
    if tv:
        facts.append(f"torch {tv}")
    out.append(" · ".join(facts))
    out.append(f"Run dir: {result['run_dir']}")

    rows = []
    for r, rep in zip(result["ranks"], reps):
        st = rep.stats
        last = ""
        if r.get("hang"):
            h = r["hang"]
            last = {"waiting_collective": f"waiting in {h.get('detail')}", "compiling": "COMPILING",
                    "running_compiled": "in a compiled graph", "importing": "importing",
                    "running": f"running {h.get('detail') or ''}"
                    }.get(h["state"], h["state"])
        rows.append([r["rank"], _status_cell(r), st.get("graphs", 0), st.get("graph_break_sites", 0),
                     st.get("recompiles", 0), f"{st.get('compile_time_s', 0):.2f}", len(rep.errors), headline(rep), last])
    out.append("")
    out.append(table(["rank", "status", "graphs", "break sites", "recompiles", "compile s", "errors", "summary", "at timeout"], rows))

    said = [(r["rank"], list(rep.printed_tail or [])) for r, rep in zip(result["ranks"], reps)]
    if any(lines for _, lines in said):
        out.append("\nWhat the ranks printed last (torch's warnings and tracebacks left out):")
        if len({tuple(lines) for _, lines in said}) == 1:
            out += ["- every rank:"] + [f"  `{ln}`" for ln in said[0][1]]
        else:
            for rank, lines in said:
                out += [f"- rank {rank}:"] + ([f"  `{ln}`" for ln in lines] or ["  (nothing)"])

    if result.get("hang"):
        h = result["hang"]
        out.append(f"\n## Hang (killed after {result['timeout_s']:.0f} s; stacks dumped for rank(s) "
                   f"{','.join(map(str, h['stacks_dumped'])) or 'none'})")
        for r in result["ranks"]:
            x = r.get("hang")
            if not x:
                if r["status"] == "ok":
                    out.append(f"- rank {r['rank']}: had already exited 0 (its peers wait for a collective it never joins)")
                continue
            out.append(f"- rank {r['rank']}: {_state_text(r, x, base)}")
        out.append(f"  Stacks: {result['run_dir']}/stacks/rank_<N>.txt")

    killed = [r for r in result["ranks"] if r.get("state_when_killed")]
    if killed:
        first = result.get("first_failed_rank")
        fr = next((r for r in result["ranks"] if r["rank"] == first), None)
        why = ""
        if fr is not None and fr.get("collective_timeout"):
            why = f": rank {first}'s collective TIMED OUT waiting for them (its init_process_group timeout)"
        elif first is not None:
            why = f" after rank {first} failed"
        out.append(f"\n## Ranks stopped by torchrun{why}")
        for r in killed:
            out.append(f"- rank {r['rank']}: {_state_text(r, r['state_when_killed'], base)}")
        out.append(f"  Stacks: {result['run_dir']}/stacks/rank_<N>.txt")

    out.append("\n## Divergence between ranks")
    if result.get("launcher_error"):
        out.append("Not compared: no rank ran.")
    elif not div["divergent"]:
        out.append(f"None: every rank compiled the same graphs ({_per_rank(div['graphs'].get('per_rank', {}))}), "
                   "same graph breaks and recompiles"
                   + (f"; compile-time skew {div['compile_time']['skew_s']:.2f} s" if div.get("compile_time") else "") + ".")
    else:
        g = div["graphs"]
        out.append(f"- Graphs per rank: {_per_rank(g.get('per_rank', {}))}")
        for o in g.get("only_on_some_ranks", [])[:MAX_ITEMS]:
            out.append(f"  - compile {o['compile_id']} {o.get('function') or ''} ({_rel(o.get('location'), base) or '?'}, "
                       f"{o.get('ops') if o.get('ops') is not None else '?'} ops) only on rank(s) {_rk(o['ranks'])}")
        for d in g.get("different_graphs", [])[:MAX_ITEMS]:
            out.append(f"  - compile {d['compile_id']}: different graphs: "
                       + "; ".join(f"rank(s) {_rk(x['ranks'])} hash {x['hash']}" for x in d["groups"]))
        for c in div.get("collectives", [])[:MAX_ITEMS]:
            per = ", ".join(f"rank {k}: {', '.join(v) or 'none'}" for k, v in c["ops_per_rank"].items())
            miss = f"; not compiled on rank(s) {_rk(c['missing_on'])}" if c["missing_on"] else ""
            out.append(f"- Collectives in compiled graph {c['compile_id']} differ: {per}{miss} "
                       "← ranks will issue different collectives (hang / mismatch)")
        for b in div["graph_breaks"][:MAX_ITEMS]:
            code = f" `{clip(b['code'], 80)}`" if b.get("code") else ""
            counts = ", ".join(f"rank {k} ×{v}" for k, v in b["counts"].items())
            miss = f"; NOT on rank(s) {_rk(b['missing_on'])}" if b["missing_on"] else ""
            inside = f" (inside {b['wrapper']['name']}: {b['wrapper']['frame']}, not your code)" if b.get("wrapper") else ""
            out.append(f"- Graph break **{_rel(b['site'], base)}**{code}{inside} — {b.get('gb_id') or ''} {b.get('gb_type') or ''} "
                       f"[{b.get('category')}]: {counts}{miss}")
            if b.get("fix"):
                out.append(f"  Fix: {clip(' '.join(b['fix'].split()), 300)}")
        for f in div["recompiles"][:MAX_ITEMS]:
            per = ", ".join(f"rank {k}: {v}" for k, v in f["recompiles_per_rank"].items())
            lim = f"; recompile limit hit on rank(s) {_rk(f['limit_hit_ranks'])}" if f["limit_hit_ranks"] else ""
            out.append(f"- Recompiles of **{f['function']}** ({_rel(f['location'], base)}): {per}{lim}")
            for rk, d in f["per_rank"].items():
                for x in d["reasons"][:3]:
                    where = f" at {_rel(x['location'], base)}" if x.get("location") else ""
                    out.append(f"  - rank {rk} {x['compile_id']}: `{clip(x['guard'], 140)}` [{x['kind']}]{where}")
        ct = div.get("compile_time") or {}
        if ct:
            sig = " ← significant" if ct.get("significant") else ""
            still = ct.get("still_compiling") or []
            out.append(f"- Compile time: {', '.join(f'rank {k} {v:.2f} s' + (' (still compiling)' if int(k) in still else '') for k, v in ct['per_rank_s'].items())} "
                       f"(skew {ct['skew_s']:.2f} s{sig})")
        if div["failed_ranks"] or div["timed_out_ranks"]:
            out.append(f"- Failed rank(s): {_rk(div['failed_ranks'])}; hung rank(s): {_rk(div['timed_out_ranks'])}")

    # errors per rank (first one each), then issues shared by all ranks, listed once
    errs = [(r, e) for r, rep in zip(result["ranks"], reps) for e in rep.errors[:1]]
    errs.sort(key=lambda x: x[0]["rank"] != result.get("first_failed_rank"))
    if errs:
        out.append("\n## Errors")
        for r, e in errs[:MAX_ITEMS]:
            loc = f" at {_where(e.location, base)}" if e.location else ""
            msg = f" — {clip(e.message.splitlines()[0], 200)}" if e.message else ""
            tag = ""
            if r["rank"] == result.get("first_failed_rank") and r.get("collective_timeout"):
                tag = " (FAILED FIRST: its collective timed out waiting for the other ranks; see above)"
            elif r["rank"] == result.get("first_failed_rank") and \
                    sum(1 for x in result["ranks"] if x["status"] in ("failed", "killed")) > 1:
                tag = " (FAILED FIRST: root cause)"
            elif r.get("consequence_of_rank") is not None:
                tag = f" (consequence of rank {r['consequence_of_rank']} failing)"
            out.append(f"- rank {r['rank']}{tag}: **{e.type}** {e.title} `[{e.category}]`{loc}{msg}")
            if r.get("verdict"):
                out.append(f"  Verdict: {r['verdict']['summary']}")
    ec = result.get("eager_check")
    if ec:
        per = ", ".join(f"rank {k} {'exit 0' if v['status'] == 'ok' else v['status'].upper()}" for k, v in ec["ranks"].items())
        out.append(f"Re-run without torch.compile (same torchrun job, compile stance force_eager on every rank): {per}"
                   f"{' (TIMED OUT)' if ec['timed_out'] else ''} in {ec['duration_s']:.1f} s; logs: "
                   f"{_rel(ec['run_dir'], result['run_dir'])}/ranks/")
    common = _common_issues(reps, base)
    if common:
        out.append("\n## On every rank (same on all)")
        out.extend(common[:MAX_ITEMS])
    out.extend(_ddp_splits(result))

    out.append("\n## Next")
    for i, s in enumerate(result["next_steps"], 1):
        cmd = f": `{s['command']}`" if s.get("command") else ""
        out.append(f"{i}. {s['why']}" + (f" → {s['skill']} skill" if s.get("skill") else "") + cmd)
    for n in result["notes"] + [n for rep in reps for n in rep.notes if "SIGKILL" in n]:
        out.append(f"Note: {n}")
    arts = result["artifacts"]
    live = result.get("mode") != "recorded"
    out.append(f"\nPer-rank reports: {result['run_dir']}/rank_<N>/report.md · traces: trace/rank_<N>/"
               + (" · logs: ranks/ · stacks: stacks/" if live else "")
               + (f" · tlparse: {arts['tlparse']}" if arts.get("tlparse") else ""))
    return "\n".join(out)


def _state_text(r, x, base):
    """One line: where a rank was when it was stopped (from its stack dump and its trace)."""
    where = x.get("user_location")
    loc = f" at {_where_d(where, base)}" if where else ""
    if x["state"] == "waiting_collective":
        what = f"waiting in collective `{x['detail']}`{loc}"
    elif x["state"] == "compiling":
        what = f"still COMPILING{loc}"
    elif x["state"] == "running_compiled":
        what = f"running a COMPILED GRAPH{loc} (blocked inside one of its ops"
        coll = (r.get("facts") or {}).get("collectives") or {}
        what += f"; this rank's graphs with collectives: {_colls(coll)})" if coll else ")"
    elif x["state"] == "importing":
        what = f"still IMPORTING ({x['detail']}){loc}"
    elif x["state"] == "running":
        what = f"running Python ({x['detail']}){loc}"
    else:
        what = "state unknown (no stack dump)"
    oc = x.get("open_compiles") or []
    if oc:
        c = oc[-1]
        dur = f" {c['running_s']:.0f} s ago" if c.get("running_s") is not None else ""
        what += f"; compile {c['compile_id']} ({c.get('function') or '?'}) started{dur}, no compilation_metrics yet"
    elif x.get("last_event"):
        le = x["last_event"]
        what += f"; last trace event {le['event']}" + (f" ({le['compile_id']})" if le.get("compile_id") else "") + \
                (f" at {x['last_event_time']}" if x.get("last_event_time") else "") + ", all compiles finished"
    else:
        what += "; no trace event (torch.compile never ran on this rank)"
    return what


def _common_issues(reps, base):
    if len(reps) < 1:
        return []
    lines = []

    def key_b(b):
        return (b.location.file, b.location.line, b.gb_id or b.gb_type)

    sets = [{key_b(b): b for b in rep.graph_breaks} for rep in reps]
    shared = set(sets[0]).intersection(*sets[1:]) if sets else set()
    wrapped = {}
    for k in shared:
        b = sets[0][k]
        if b.fix.get("wrapper"):  # DDP's / FSDP's own code: said once per wrapper, not as the user's to fix
            wrapped.setdefault(b.fix["wrapper"]["id"], []).append(b)
            continue
        lines.append(f"- Graph break {_where(b.location, base)} — {b.gb_id or ''} {b.gb_type} [{b.category}]"
                     + (f". Fix: {clip(' '.join(b.fix['fix'].split()), 240)}" if b.fix.get("fix") else ""))

    for bs in wrapped.values():
        w = bs[0].fix["wrapper"]
        lines.append(f"- {len(bs)} graph break{'s' * (len(bs) != 1)} inside {w['name']}, not in your code (your call: "
                     f"{_where(bs[0].location, base)}): "
                     + "; ".join(f"{b.gb_id or ''} {b.gb_type} at {b.fix['wrapper']['frame']} in "
                                 f"{b.fix['wrapper']['function']}" for b in bs))
        lines.append(f"  {w['expected']}")
        lines.append(f"  Setup: {w['setup']}")

    def key_f(f):
        return (f.function, f.location.file, f.location.line, tuple(r.failures[0].guard if r.failures else "" for r in f.recompiles))

    fsets = [{key_f(f): f for f in rep.recompiles if f.recompiles} for rep in reps]
    fshared = set(fsets[0]).intersection(*fsets[1:]) if fsets else set()
    for k in fshared:
        f = fsets[0][k]
        g = f.recompiles[0].failures[0] if f.recompiles and f.recompiles[0].failures else None
        lines.append(f"- {f.function} ({_where(f.location, base).split(' `')[0]}) recompiles {len(f.recompiles)}×"
                     + (f": `{clip(g.guard, 120)}` [{g.kind}]" if g else "")
                     + (f". Fix ({f.fixes[0]['kind']}): {clip(f.fixes[0]['fix'], 240)}" if f.fixes else "")
                     + (f" (through {f.wrapper})" if f.wrapper else ""))
    return lines


def _ddp_splits(result):
    """The DDP optimizer's graph splits (not graph breaks), per compile id and ranks."""
    from ..decide import knowledge
    splits = {}
    for r in result["ranks"]:
        for cid, kids in ((r.get("facts") or {}).get("ddp_splits") or {}).items():
            splits.setdefault((cid, len(kids)), []).append(r["rank"])
    if not splits:
        return []
    w = next((w for w in knowledge.load("graph_breaks").get("wrappers") or [] if w["id"] == "ddp"), {})
    return ["\n## DDP optimizer (graph splits, not graph breaks)",
            "- " + "; ".join(f"graph {cid} compiled in {n} pieces on rank(s) {_rk(rks)}" for (cid, n), rks in sorted(splits.items())),
            "  " + " ".join((w.get("splits") or "").split())]


def _where_d(d, base):
    p = d.get("file")
    if p and base and p.startswith(base + os.sep):
        p = os.path.relpath(p, base)
    s = f"{p}:{d.get('line')}"
    if d.get("code"):
        s += f" `{clip(d['code'], 90)}`"
    return s


def _colls(d):
    return "; ".join(f"{k}: {', '.join(v)}" for k, v in d.items())


def _per_rank(d):
    return ", ".join(f"rank {k}: {v}" for k, v in d.items()) or "none"


def _rk(rs):
    return ",".join(str(r) for r in rs) if rs else "none"
