"""Where an integer output that differs compiled comes from: the user's lines in the traced Dynamo graphs that make an
integer or bool tensor from a float one (a floor division, a cast, an argmax). Used by accuracy_judge's int_ops step.
No torch import."""
import os
import re


# a line that can make an integer/bool result from floats (a floor division, a cast, an argmax, a comparison), in a Dynamo
# graph's "# File: f.py:40 in forward, code: ..." comment; int_sites keeps it only where the graph shows it
_INT_FROM_FLOAT = re.compile(r"//|floor_divide|\.(?:long|int|bool)\(\)|\.to\(torch\.(?:int|long|bool|uint)|argmax|argmin|"
                             r"argsort|\bround\(|\.round\(|floor\(|ceil\(|trunc\(|bucketize|searchsorted|topk|"
                             r"\.sort\(|\bmode\(|\b(?:max|min)\(|\.indices|[<>]=?|[=!]=|\.(?:gt|lt|ge|le|eq|ne)\(")
_DTYPE = re.compile(r"(b8|[iu]\d+|f\d+|bf16|f8\w*)\[")   # a tensor's annotation ("i64[64, 3]..."), not Sym(...)


def _kind(annotation):
    """'i' (integer or bool tensor), 'f' (floating tensor) or None (a SymInt, no annotation)."""
    m = _DTYPE.match(annotation or "")
    return None if not m else "i" if m.group(1) == "b8" or m.group(1)[0] in "iu" else "f"


def _int_from_float_lines(graph):
    """{(file, line): code} of the source lines under which the printed graph computes an integer or bool
    tensor directly from a float tensor (`ids: "i64[..]" = floordiv.long()` with floordiv f32; `topk[1]` of
    an untyped topk of floats), lines whose tensor the graph returns first. Size arithmetic (`c // heads` in
    a view) makes SymInts, not int tensors, and an int-from-int op is exact: neither counts."""
    from ..read.inductor_info import FILE_COMMENT_RE, NODE_RE, PARAM_RE
    kinds, loc, found, returned = {}, None, {}, set()
    for ln in graph.splitlines():
        m = FILE_COMMENT_RE.search(ln)
        if m:
            loc = (m.group(1), int(m.group(2)), m.group(4).strip())
            continue
        if ln.strip().startswith("return"):
            returned.update(re.findall(r"\b([A-Za-z_]\w*)\b", ln))
            continue
        m = NODE_RE.match(ln)
        if not m:   # the signature's typed inputs (one line or several)
            kinds.update((n, _kind(t)) for n, t in PARAM_RE.findall(ln))
            continue
        name, typ, rhs = m.group(1), m.group(2), m.group(3).split(";  ")[0]
        args = re.findall(r"\b([A-Za-z_]\w*)\b", rhs)
        floats = any(kinds.get(a) == "f" for a in args)
        if typ is None:   # l_x_ = L_x_ (an input's alias), or a tuple node (topk, max(dim), sort)
            kinds[name] = kinds.get(rhs.strip()) if re.fullmatch(r"L_\w+", rhs.strip()) else "f" if floats else None
            continue
        kinds[name] = _kind(typ)
        if kinds[name] == "i" and loc and floats and _INT_FROM_FLOAT.search(loc[2]):
            found.setdefault(loc[:2], [loc[2], set()])[1].add(name)
    order = sorted(found, key=lambda k: not (found[k][1] & returned))
    return {k: found[k][0] for k in order}


def int_sites(trace_dir, limit=3):
    """The user's lines in the traced graphs that make an integer or bool tensor from a float one (a floor
    division, a cast, an argmax): where an integer output that differs compiled comes from."""
    from ..read import trace as tracemod
    from ..read.frames import is_user_file
    try:
        tr = tracemod.parse(trace_dir)
    except (OSError, ValueError):
        return []
    out = {}
    for e in tr.of("dynamo_output_graph"):
        for (f, line), code in _int_from_float_lines(e.payload or "").items():
            if is_user_file(f):
                out.setdefault((f, line), code)
    return [f"{os.path.basename(f)}:{line} `{code[:100]}`" for (f, line), code in list(out.items())[:limit]]
