"""The findings of a triage report dict (graph breaks, recompiles, the recompile limit) and the candidate
fixes knowledge/fixes.yaml has for them: what `fix` tries (decide/fixes.py runs them) and whether triage
offers `fix --from` at all (decide/runs.py). No torch import, no runs."""
import ast
import functools
import json
import re

from . import compare, knowledge
from ..cmdline import clip
from ..report import raised_break

# ---- findings -----------------------------------------------------------------------------


def _lib_frame(b):
    """(module, func) of the innermost installed-library frame of a graph break whose function its module
    holds by that name (a top-level def: torch.compiler.disable can replace it), if the report has the
    frames (newer reports: `stack`; `library`/`in_library` flags). A function nested in another (a
    decorator's closure: transformers' dynamic_frequency_update) or a method is passed over: setting the
    module's attribute would change nothing (blind A/B batch 27 spent a `fix` run on one)."""
    if not (b.get("in_library") or b.get("library")):
        return None
    for fr in reversed(b.get("stack") or b.get("frames_full") or []):
        if not isinstance(fr, dict):
            continue
        path = (fr.get("file") or "").replace("\\", "/")
        m = re.search(r"/(?:site|dist)-packages/(.+)\.py$", path)
        func = fr.get("function") or ""
        if m and not m.group(1).startswith("torch/") and re.fullmatch(r"[A-Za-z_]\w*", func) \
                and func in _top_level_defs(fr["file"]):
            mod = m.group(1).replace("/", ".")
            mod = mod[: -len(".__init__")] if mod.endswith(".__init__") else mod
            return mod, func
    return None


@functools.lru_cache(maxsize=64)
def _top_level_defs(path):
    """Names of the functions defined at the top level of a Python file (none when it can't be read)."""
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return frozenset()
    return frozenset(n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))


def findings(rep):
    """Every finding of a report dict: [{kind, label, text, where, params, recipe}]."""
    out = []
    # under fullgraph=True a function run eagerly through torch.compiler.disable is a graph break too (an error)
    fullgraph = any(raised_break(e or {}) for e in rep.get("errors") or [])
    for b in rep.get("graph_breaks") or []:
        loc = b.get("location") or {}
        text = "\n".join([b.get("gb_id") or "", b.get("gb_type") or "", b.get("explanation") or ""]
                         + [str(h) for h in b.get("hints") or []])
        params = {"function": loc.get("function") or "?"}
        lib = _lib_frame(b)
        if lib:
            params.update(module=lib[0], func=lib[1])
        fx = b.get("fix") or {}
        # a break in library code: the library setting that avoids the path (knowledge) beats the generic recipe
        lib_setting = next((w["text"] for w in b.get("workarounds") or [] if w.get("source") == "knowledge"), None)
        out.append({"kind": "graph_break", "label": compare.break_label(b), "text": text, "library": bool(lib),
                    "fullgraph": fullgraph,
                    "where": _where(loc), "code": loc.get("code"), "params": params,
                    "hints": list(b.get("hints") or [])[:2], "recipe": lib_setting or fx.get("fix"), "recipe_code": None if lib_setting else fx.get("code")})
    for f in rep.get("recompiles") or []:
        loc = f.get("location") or {}
        # one-time recompiles torch expects (triage marks them) are not findings to fix
        expected = {c.get("kind") for c in f.get("causes") or [] if c.get("expected")} - \
            {c.get("kind") for c in f.get("causes") or [] if not c.get("expected")}
        by_kind = {}
        for r in f.get("recompiles") or []:
            g = (r.get("failures") or [None])[0]
            if g and (g.get("kind") or "other") not in expected:
                by_kind.setdefault(g.get("kind") or "other", g)
        fixes = {x.get("kind"): x.get("fix") for x in f.get("fixes") or []}
        for kind, g in by_kind.items():
            gl = g.get("location") or loc
            out.append({"kind": "recompile", "guard_kind": kind, "count": _cause_count(f, kind), "label": f"recompiles of {f.get('function')} "
                        f"[{kind}] `{clip(g.get('guard'), 80)}`", "text": g.get("guard") or "",
                        "where": _where(gl), "code": gl.get("code"), "params": {"function": f.get("function") or "?"},
                        "hints": [g["hint"]] if g.get("hint") else [], "recipe": fixes.get(kind), "recipe_code": None})
        if f.get("limit_hit"):
            out.append({"kind": "limit_hit", "label": f"{f.get('function')} hit the recompile limit "
                        f"({f.get('limit') or '?'}) and runs eagerly", "text": f.get("function") or "",
                        "where": _where(loc), "code": loc.get("code"), "params": {"function": f.get("function") or "?"},
                        "hints": [], "recipe": fixes.get("limit") or knowledge.load("recompiles").get("limit_fix"),
                        "recipe_code": None})
    return out


def _cause_count(func, kind):
    """Recompiles of one function caused by one guard kind, torch's expected one-time ones left out."""
    return sum(c.get("count") or 1 for c in func.get("causes") or [] if c.get("kind") == kind and not c.get("expected"))


def _where(loc):
    return f"{loc.get('file')}:{loc.get('line')}" if loc.get("line") else (loc.get("file") or "?")


# ---- candidates ---------------------------------------------------------------------------

def _subst(obj, params):
    if isinstance(obj, str):
        return re.sub(r"\{(\w+)\}", lambda m: str(params.get(m.group(1), m.group(0))), obj)
    if isinstance(obj, list):
        return [_subst(x, params) for x in obj]
    if isinstance(obj, dict):
        return {_subst(k, params): _subst(v, params) for k, v in obj.items()}
    return obj


def _matches(row, f):
    m = row.get("match") or {}
    if m.get("finding") and m["finding"] != f["kind"]:
        return None
    kinds = m.get("kind")
    if kinds and f.get("guard_kind") not in (kinds if isinstance(kinds, list) else [kinds]):
        return None
    if m.get("library") and not f.get("library"):
        return None
    if m.get("fullgraph") is False and f.get("fullgraph"):
        return None
    if m.get("text") and not re.search(m["text"], f["text"], re.M):
        return None
    params = dict(f["params"])
    for name, rx in (row.get("params") or {}).items():
        if name in params:
            continue
        p = re.search(rx, f["text"], re.M)
        if not p:
            return None
        params[name] = p.group(1)
    if m.get("library") and not {"module", "func"} <= set(params):
        return None
    return params


def candidates(found, rows=None):
    """Findings -> distinct candidate fixes [{id, title, steps, code, group, diagnosis, findings: [i]}]."""
    rows = rows if rows is not None else knowledge.load("fixes")["candidates"]
    cands, by_key = [], {}
    for i, f in enumerate(found):
        for order, row in enumerate(rows):
            params = _matches(row, f)
            if params is None:
                continue
            steps = _subst(row["steps"], params)
            key = json.dumps(steps, sort_keys=True)
            if key in by_key:
                by_key[key]["findings"].append(i)
                continue
            c = {"id": row["id"], "title": _subst(row.get("title", row["id"]), params), "steps": steps,
                 "code": _subst(row.get("code", ""), params).strip(), "diagnosis": bool(row.get("diagnosis")),
                 "group": _subst(row.get("group") or key, params), "findings": [i], "order": order}
            by_key[key] = c
            cands.append(c)
    if any(not c["diagnosis"] for c in cands):
        # a diagnosis (raise recompile_limit to 64) costs a whole run, up to 64 compiles: only when there is
        # nothing else to try (blind A/B: 460 s beside a real candidate, on a counter that changes every step)
        cands = [c for c in cands if not c["diagnosis"]]
    return cands
