"""The compile events minify's source stage can keep in a program that does not fail: its graph breaks
and its recompiles, read from one query's TORCH_TRACE (the triage parser), each marked whether it sits
in the program file itself (a scratch copy of it). Never imports torch."""
import os
import re


def _in_program(loc, base, slots):
    here = os.path.realpath
    return bool(loc and loc.file and os.path.basename(loc.file) == base
                and os.path.dirname(here(loc.file)) in [here(s) for s in slots])


def _trace(qdir):
    from ..read import trace as tracemod
    return tracemod.parse(os.path.join(qdir, "trace"))


def graph_breaks(qdir, base, slots):
    """[{gb_id, gb_type, in_program, in_library, function, line, code}] of one query's trace."""
    from .analyze_dynamo import _graph_breaks
    try:
        bks = _graph_breaks(_trace(qdir))
    except Exception:   # noqa: BLE001  (a candidate whose trace can't be read is not interesting)
        return []
    out = []
    for b in bks:
        loc = b.location
        out.append({"gb_id": b.gb_id, "gb_type": b.gb_type, "in_program": _in_program(loc, base, slots),
                    "in_library": b.in_library, "function": loc.function if loc else None,
                    "line": loc.line if loc else None, "code": loc.code if loc else None})
    return out


def recompiles(qdir, base, slots):
    """[{function, kind, cause, guard, title, expected, in_program, line, code}]: one entry per cause of a
    recompiled function (the guard that failed, in words: "value of `self.step`"), causes torch does not
    expect first (automatic dynamic's one recompile last)."""
    from .analyze_recompiles import _recompiles
    try:
        frs = _recompiles(_trace(qdir), "")
    except Exception:   # noqa: BLE001
        return []
    out = []
    for fr in frs:
        for c in getattr(fr, "causes", None) or []:
            loc = c.get("location")
            out.append({"function": fr.function, "kind": c["kind"], "cause": c["cause"], "guard": c["guard"],
                        "title": c.get("title"), "expected": bool(c.get("expected")), "count": c.get("count"),
                        "in_program": _in_program(fr.location, base, slots),
                        "line": loc.line if loc else None, "code": loc.code if loc else None})
    return sorted(out, key=lambda r: (not r["in_program"], r["expected"]))


def same_recompile(want, got):
    """A candidate keeps the recompile: the same function recompiles on a guard of the same kind, on the
    same value (the cause names it: `self.step`, shape of `x` dim 0)."""
    return any(r["in_program"] and r["function"] == want["function"] and r["kind"] == want["kind"]
               and r["cause"] == want["cause"] for r in got)


def guarded_source(guard):
    """The guarded expression as the trace writes it (`self.level` in `self.level == 0`; L['self'].step on
    older torch), for the regression test; or None."""
    g = (guard or "").strip()
    m = re.search(r"\b[LG]\['[^']+'\](?:\.\w+|\[[^\]]+\])*", g)
    if m:
        return m.group(0)
    m = re.match(r"tensor '(.+?)' ", g) or re.match(r"(?:not )?([A-Za-z_][\w.]*(?:\[[^\]]+\])*) (?:==|!=|is|<|>|<=|>=) ", g)
    return m.group(1) if m else None
