"""Markdown sections of a triage Report for graph breaks and recompilations: the chain from the
user's line through library code, torch's own hints first, and recompile causes grouped."""
import os
import re

from ..decide.dynamo_steps import block_where
from ..read.frames import library_path
from .output import clip

MAX_BREAKS = 10
MAX_FUNCS = 8
MAX_CHAIN = 7
MAX_HINTS = 5


def where(loc, base=None):
    if loc is None:
        return ""
    path = loc.display or library_path(loc.file) or loc.file    # a library's file from its package
    if base and path == loc.file and loc.file.startswith(base + os.sep):
        path = os.path.relpath(loc.file, base)
    s = f"{path}:{loc.line}" if loc.line else path
    if loc.code:
        s += f" `{clip(loc.code, 90)}`"
    return s


def chain_lines(stack, indent="   "):
    """The frames from the user's line to where torch stopped, one per line."""
    if len(stack) < 2:
        return []
    shown = stack if len(stack) <= MAX_CHAIN else stack[:2] + [None] + stack[-(MAX_CHAIN - 3):]
    out = []
    for f in shown:
        if f is None:
            out.append(f"{indent}  … {len(stack) - MAX_CHAIN + 1} more frames (report.json)")
            continue
        mark = "you" if f.user else "lib"
        out.append(f"{indent}  {mark} {f.display or f.file}" + (f":{f.line}" if f.line else "")
                   + (f" in {f.function}" if f.function else "")
                   + (f" `{clip(f.code, 80)}`" if f.code else ""))
    return out


def _code(code, indent="   "):
    return f"{indent}```python\n" + "\n".join(indent + ln for ln in code.rstrip().splitlines()) + f"\n{indent}```"


def graph_breaks_md(rep, base):
    if not rep.graph_breaks:
        return []
    n_hits = sum(b.count for b in rep.graph_breaks)
    out = [f"\n## Graph breaks ({len(rep.graph_breaks)} sites, {n_hits} hits while compiling)"]
    shown = set()
    for i, b in enumerate(rep.graph_breaks[:MAX_BREAKS], 1):
        ident = f"{b.gb_id} " if b.gb_id else ""
        out.append(f"{i}. **{where(b.location, base)}** — {ident}{b.gb_type} [{b.category}] ×{b.count}, "
                   f"frames {', '.join(b.frames[:4])}")
        site = b.stack[-1] if b.stack else None
        if b.fix.get("explained_by_eager"):   # (dynamo_steps.eager_explained)
            at_ = f" (torch broke at {where(site)})" if site is not None else ""
            out.append("   Raised by the program's own error, which fails the same way without torch.compile"
                       f"{at_}: fixing that error removes this break")
            continue
        if b.in_library and site is not None:
            out.append(f"   In library code ({b.library}), not yours: torch broke at {where(site)}")
        elif b.location and b.site != f"{b.location.file}:{b.location.line}":
            out.append(f"   (torch broke at {b.site})")
        out += chain_lines(b.stack)
        blk = b.fix.get("skipped_in")
        if blk:
            out.append(f"   ⚠ the whole function was skipped and runs EAGERLY: the break is inside {block_where(blk)}, "
                       "where Dynamo cannot resume" + ("" if blk["kind"] == "loop" else
                                                                      f"; move the {'call' if blk.get('call') else 'line'} out of it (the rest then compiles)"))
        elif b.fix.get("frame_skipped"):
            out.append("   ⚠ the whole function was skipped and runs EAGERLY (graph break in a loop / unrecoverable)")
        recipe = b.fix.get("recipe_id") or b.gb_id or b.category
        key = (recipe, tuple(b.hints), b.library)
        if key in shown:
            out.append(f"   Fix: as for {recipe} above")
            continue
        shown.add(key)
        if b.explanation:
            out.append(f"   Why: {clip(b.explanation, 220)}")
        hints = [w for w in b.workarounds if w["source"] == "pytorch"] or [{"text": h} for h in b.hints]
        if hints:
            out.append("   PyTorch's hints:")
            out += [f"   - {clip(h['text'], 700)}" for h in hints[:MAX_HINTS]]
        if b.fix.get("fix"):
            label = "Fix for this construct" if str(b.fix.get("recipe_id", "")).startswith("construct:") else "Fix"
            if b.fix.get("follows_break"):   # a comprehension's own frame: nothing to change at its line
                label = "Note"
            elif b.in_library:
                label += f" (a change to the breaking line, i.e. to {b.library}: for a patch upstream)"
            out.append(f"   {label}: {clip(' '.join(b.fix['fix'].split()), 480)}")
        if b.fix.get("url"):
            out.append(f"   PyTorch's page for {b.gb_id}: {b.fix['url']}")
        if b.fix.get("code"):
            out.append(_code(b.fix["code"]))
        lib = [w for w in b.workarounds if w["source"] != "pytorch"]
        if lib:
            out.append(f"   Without editing {b.library}:")
            for w in lib:
                out.append(f"   - {clip(w['text'], 1000 if w['source'] == 'knowledge' else 400)}")   # ours: whole
                if w.get("code"):
                    out.append(_code(w["code"], "     "))
        if b.fix.get("escape") and not b.in_library:
            out.append(f"   Escape hatch: {b.fix['escape']}")
        for a in b.fix.get("also", []):
            out.append(f"   Also: {a['gb_id']} {a.get('gb_type') or ''} — {clip(' '.join((a.get('fix') or '').split()), 200)}")
    if len(rep.graph_breaks) > MAX_BREAKS:
        out.append(f"… {len(rep.graph_breaks) - MAX_BREAKS} more sites in report.json")
    return out


def recompiles_md(rep, base):
    rec = [f for f in rep.recompiles if f.recompiles or f.limit_hit]
    if not rec:
        return []
    n = sum(len(f.recompiles) for f in rec)
    exp = sum(1 for f in rec if f.expected_only)
    # the rest of a function after a graph break is a frame of its own (blind A/B batch 19: counted as more
    # functions, the reader looked for functions the program does not have)
    pieces = sum(1 for f in rec if "(resumed after the graph break" in (f.function or ""))
    out = [f"\n## Recompilations ({n} in {len(rec)} function{'s' * (len(rec) != 1)}"
           + (f", {pieces} of them the rest of a function after a graph break" if pieces else "")
           + (f"; {exp} function{'s' * (exp != 1)} only expected one-time recompiles" if exp else "") + ")"]
    for f in rec[:MAX_FUNCS]:
        lim = f"; **recompile limit ({f.limit or '?'}) HIT → runs eagerly**" if f.limit_hit else ""
        # expected, but still a compile where it happens: inside a timed loop it is the whole slowdown (blind
        # A/B batch 10: a benchmark warmed up under no_grad and timed with grad on)
        ok = (" — one-time recompiles torch expects (each is still a compile, paid by the call where it happens: "
              "warm up the way you time or serve)") if f.expected_only else ""
        out.append(f"- **{f.function}** ({where(f.location, base)}): {f.compiles} compiles{lim}{ok}")
        if f.wrapper:
            out.append(f"  - compiled through {f.wrapper}")
        # causes that differ only in an index (one per layer: `layers[0]`…`layers[7]`) show once, with a count
        fam = {}
        for c in f.causes:
            fam.setdefault((c["kind"], re.sub(r"\[\d+\]", "[i]", c["cause"]), c["fix"], c["expected"], c.get("why")), []).append(c)
        for group in fam.values():
            c = group[0]
            ids = c["compile_ids"]
            rng = ids[0] if len(ids) == 1 else f"{ids[0]}…{ids[-1]}"
            at = f" at {where(c['location'], base)}" if c.get("location") else ""
            tag = f" — expected: {c['why']}" if c["expected"] else ""
            older = c["count"] - c["primary"]
            if not c["primary"] and any(x["primary"] for x in f.causes):
                # never the first failure: it failed only against older graphs, behind another cause (blind A/B
                # batch 18: "shape ... ×0" beside a thread-count cause read as noise; it recompiled once that was fixed)
                firsts = [x for x in f.causes if x["primary"]]
                then = ("" if all(x["expected"] for x in firsts) else
                        ": expect it to recompile once the cause above is fixed")
                out.append(f"  - then {c['cause']} (failed too, against {older} older graph{'s' * (older != 1)}; never "
                           f"the first failure of a recompile here{then}) [{c['kind']}]: `{clip(c['guard'], 90)}`{at}")
            else:
                also = f", +{older} against older cache entries" if older else ""
                out.append(f"  - {c['cause']} ×{c['primary']} ({rng}{also}) [{c['kind']}]: `{clip(c['guard'], 90)}`{at}{tag}")
            if c.get("library") and c.get("stack"):
                out += chain_lines(c["stack"], indent="   ")
            if c.get("specialized_at"):
                # a group's causes may be made static at other lines too: each line once
                more = [w for w in dict.fromkeys(where(x["specialized_at"], base) for x in group[1:]
                                                 if x.get("specialized_at")) if w != where(c["specialized_at"], base)]
                reason = c.get("specialized_reason") or ""
                if reason.startswith("torch's "):   # a torch function the program calls read the size as an int
                    out.append(f"    Made static by {reason}, called from your line "
                               f"{', '.join([where(c['specialized_at'], base)] + more)}")
                else:
                    out.append(f"    Made static by your code at {', '.join([where(c['specialized_at'], base)] + more)}"
                               + (f" (Dynamo: {reason})" if reason else ""))
            if c.get("lowering_at"):   # a Location (live report) or its dict (report.json)
                lw = c["lowering_at"] if isinstance(c["lowering_at"], dict) else vars(c["lowering_at"])
                out.append(f"    Made static inside Inductor: `{lw['function']}` ({os.path.basename(lw['file'])}:"
                           f"{lw['line']}), not a line of yours")
            if c.get("hint"):
                out.append(f"    PyTorch's hint: {clip(c['hint'], 300)}")
            if len(group) > 1:
                n = sum(x["primary"] for x in group[1:])
                out.append(f"  - and {len(group) - 1} more like it, the same but for an index"
                           + (f" ({n} recompile{'s' * (n != 1)})" if n else "") + ": "
                           + ", ".join(f"`{x['cause'].split('`')[1] if '`' in x['cause'] else x['cause']}`"
                                       for x in group[1:4]) + (" …" if len(group) > 4 else ""))
            if not c["expected"]:
                out.append(f"    Fix: {clip(c['fix'], 420)}")
        if f.limit_hit:
            lf = next((x["fix"] for x in f.fixes if x["kind"] == "limit"), "")
            out.append(f"  - Limit: {clip(lf, 420)}")
    if len(rec) > MAX_FUNCS:
        out.append(f"… {len(rec) - MAX_FUNCS} more functions in report.json")
    return out
