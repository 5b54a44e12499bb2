"""One command under two torch releases (compare --torch): what changed from one release to the next,
one line each, from the before/after facts of decide/compare.py. No torch import."""
from .compare import _exit, run_ok
from ..cmdline import clip


def _site(label):
    return label.split(" — ")[0]


def _err(f):
    e = f.get("first_error") or {}
    return e.get("inner") or (f"{e.get('type')}: {clip(e.get('message'), 160)}" if e.get("type") else _exit(f))


def release_changes(res, to):
    """What changed from one release to the next, one line each; `to` is the later release."""
    b, a, g = res["before"], res["after"], res["graph_breaks"]
    out = []
    eb, ea = b.get("first_error") or {}, a.get("first_error") or {}
    if run_ok(b) and not run_ok(a):
        out.append(f"fails on {to} (introduced in {to}): `{_err(a)}`")
    elif not run_ok(b) and run_ok(a):
        out.append(f"fixed in {to}: the earlier release fails with `{_err(b)}`")
    elif not run_ok(b) and not run_ok(a) and (eb.get("type"), clip(eb.get("message"), 80)) != \
            (ea.get("type"), clip(ea.get("message"), 80)):
        out.append(f"fails on both, differently: `{_err(b)}` → `{_err(a)}`")
    fixed, new = list(g["fixed"]), list(g["new"])
    for f in list(fixed):           # the same line breaks under another registry id / message
        n = next((x for x in new if _site(x) == _site(f)), None)
        if n:
            out.append(f"graph break at {_site(f)} is reported differently in {to}: "
                       f"{f.split(' — ', 1)[-1]} → {n.split(' — ', 1)[-1]}")
            fixed.remove(f)
            new.remove(n)
    out += [f"graph break gone in {to}: {x}" for x in fixed]
    out += [f"graph break new in {to}: {x}" for x in new]
    if (a["recompiles"] or 0) != (b["recompiles"] or 0):
        out.append(f"recompiles {b['recompiles'] or 0} → {a['recompiles'] or 0} in {to}")
    if (a["graphs"] or 0) != (b["graphs"] or 0):
        out.append(f"graphs {b['graphs'] or 0} → {a['graphs'] or 0}, ops {b['ops'] or 0} → {a['ops'] or 0}")
    if res["output"] == "changed":
        d = res.get("output_diff") or {}
        out.append(f"printed output changed (line {d.get('line')}: `{d.get('before')}` → `{d.get('after')}`)")
    return out


def release_verdict(res, to):
    ch = release_changes(res, to)
    return ch[0] if ch else "no change"


