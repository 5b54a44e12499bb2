"""A guard failure as Dynamo logs it (a recompile's reason) -> GuardFailure: the guard, its kind (shape, value,
type, identity, global state, dispatch keys...), the source it reads and the program's line that added it. Read by
analyze_recompiles. No torch import."""
import json
import os
import re

from . import knowledge
from ..read.frames import chain, innermost_user, library_of, loc as _loc, parse_py_frames, src_line
from ..report import GuardFailure, Location


REASON_HEAD_RE = re.compile(r"^(\d+/\d+): (.*)$")
GUARD_SRC_RE = re.compile(r"#\s*(?:.*?#\s*)?(\S+):(\d+) in (\S+)")


def split_reasons(payload):
    if payload is None:
        return []
    try:
        j = json.loads(payload)
        if isinstance(j, list):
            return [str(x) for x in j]
        if isinstance(j, str):
            return [j]
    except ValueError:
        pass
    # plain text (torch 2.14 writes a single reason unquoted): split at each "N/M: " line
    out, cur = [], []
    for ln in payload.splitlines():
        if REASON_HEAD_RE.match(ln) and cur:
            out.append("\n".join(cur))
            cur = []
        cur.append(ln)
    if cur:
        out.append("\n".join(cur))
    return out


def _name(src):
    """L['self'].temperature -> self.temperature; L['x'] -> x; G['cfg'].n -> cfg.n"""
    return re.sub(r"\b[LG]\['([^']+)'\]", r"\1", src.strip())


def guard_cause(guard, kind):
    """What changed, in words: "shape of `tokens` dim 1", "value of `self.temperature`", "grad mode"."""
    g = guard.strip()
    m = re.match(r"tensor '(.+)' (size|stride) mismatch at index (\d+)", g)
    if m:
        return f"{'shape' if m.group(2) == 'size' else 'strides'} of `{_name(m.group(1))}` dim {m.group(3)}"
    m = re.match(r"tensor '(.+)' (dtype|device|device index|requires_grad|dispatch key set|storage_offset) mismatch", g)
    if m:
        return f"{m.group(2)} of `{_name(m.group(1))}`"
    m = re.search(r"([\w.\[\]']+)\.size\(\)\[(\d+)\]", g)      # a symbolic-size guard: 2 <= x.size()[1] <= 8
    if m:
        return f"shape of `{_name(m.group(1))}` dim {m.group(2)}"
    m = re.match(r"GLOBAL_STATE changed: (.+)", g)
    if m:
        changed = m.group(1).split()
        if changed == ["num_threads"]:
            return "thread count (torch.set_num_threads)"
        return "grad mode" if changed == ["grad_mode"] else f"global state ({m.group(1).strip()[:60]})"
    m = re.match(r"len\((.+?)\) [=!]= \d+$", g)
    if m:
        return f"length of `{_name(m.group(1))}`"
    m = re.search(r"dict\.keys\(([^)]+)\)\)\[\d+\]|list\((.+?)\.keys\(\)\)\[\d+\]", g)
    if m and kind == "dict_keys":
        return f"keys of `{_name(m.group(1) or m.group(2))}`"
    m = re.match(r"___check_(obj_id|type_id)\(([^,]+),", g)
    if m:
        return f"{'identity' if m.group(1) == 'obj_id' else 'type'} of `{_name(m.group(2))}`"
    if kind == "graph_break_value":
        m = re.search(r"___stack\d+", g)      # `___stack2 == 0.5`, or (2.11) `___as_tensor(___stack2).item() == 0.5`
        return f"value carried across the graph break (`{m.group(0) if m else g.split()[0]}`)"
    m = re.match(r"(?:not )?([\w.\[\]'\"]+) (?:==|!=|is not|is|<=|>=|<|>) ", g)
    if m and not re.match(r"^\d", m.group(1)):
        return f"value of `{_name(m.group(1))}`"
    m = re.search(r"\b[LG]\['[^']+'\](?:\.\w+|\[[^\]]+\])*", g)
    what = _name(m.group(0)) if m else None
    if what:
        return f"{kind} guard on `{what}`"
    return f"{kind}: `{re.sub(r'-?[0-9]+([.][0-9]+)?', '#', g)[:80]}`"


_KEYSET_RE = re.compile(r"expected DispatchKeySet\(([^)]*)\), actual DispatchKeySet\(([^)]*)\)")
# the keys a tensor made under torch.inference_mode() lacks (or has) against one made outside it
_INFERENCE_KEYS = re.compile(r"^(?:ADInplaceOrView|Autograd\w*|InferenceMode)$")


def _dispatch_key_kind(guard):
    """dispatch_keys where the two key sets differ only in the keys inference_mode drops; conj_neg where a lazily
    conjugated or negated view came in (x.conj(): resolve_conj()); else tensor_metadata (review of 0.33.101: a
    conj() view got the inference_mode advice)."""
    m = _KEYSET_RE.search(guard)
    if not m:
        return "dispatch_keys"
    exp, act = ({k.strip() for k in g.split(",") if k.strip()} for g in m.groups())
    diff = exp ^ act
    if diff and all(_INFERENCE_KEYS.match(k) for k in diff):
        return "dispatch_keys"
    if diff & {"Conjugate", "Negative"}:
        return "conj_neg"
    return "tensor_metadata"


def parse_guard_failure(reason, known_files=()):
    lines = reason.strip().splitlines()
    m = REASON_HEAD_RE.match(lines[0]) if lines else None
    cid, rest = (m.group(1), m.group(2)) if m else (None, lines[0] if lines else "")
    hint = None
    h = re.search(r"\(HINT: (.*)\)\s*$", rest)
    if h:
        hint = h.group(1)
        rest = rest[:h.start()]
    guard = rest.split("  #")[0].split(" # ")[0].strip()
    kind = knowledge.guard_kind(guard)["kind"]
    if kind == "dispatch_keys":
        kind = _dispatch_key_kind(guard)
    # torch appends its advice to some guard texts ("... actual 64. Guard failed on a parameter, consider
    # using torch._dynamo.config.force_parameter_static_shapes = False ..."): shown as its hint, in full
    a = re.search(r"(?<=\.) (Guard failed on .*)$", guard)
    if a:
        # torch appends it to any guard on a parameter; its advice (force_parameter_static_shapes) is about
        # shapes only: a requires_grad flip on a frozen layer got it too (blind A/B batch 10)
        if kind == "parameter_shape":
            hint = hint or a.group(1).strip()
        guard = guard[:a.start()].strip()
    loc = None
    stack = chain(parse_py_frames("\n".join(lines[1:]))) if len(lines) > 1 else []
    if stack:
        loc = innermost_user(stack) or stack[-1]
    else:
        s = GUARD_SRC_RE.search(rest)
        if s:
            loc = _loc(next(iter(_known(s.group(1), known_files)), s.group(1)), s.group(2), s.group(3))
            stack = chain([Location(**loc.__dict__)])
    if loc is not None and loc.code is None and loc.line:
        loc.code = src_line(loc.file, loc.line)
    added = _added_at(rest, known_files, loc)
    cause = guard_cause(guard, kind)
    # torch names a value reached through a long source path the way the code wrote it: `guard on "calls"
    # ['blocks.0']` for `dict(type(obj).__dict__)['__call__'].__closure__[0].cell_contents['blocks.0'] == 0`
    named = re.match(r'guard on "(\w+)"(\S*?)(?:, type [^)]*)?(?:\) \(HINT: |\)?$)', hint or "")
    if named:   # torch's own advice, if any, follows it in a second (HINT: ...), whose ")" the first regex took
        hint = hint[named.end():] or None
        if cause.startswith(f"{kind}: "):   # only the fallback (the raw source): identity / type / value keep theirs
            cause = f"value of `{named.group(1)}{named.group(2)}`"
    return GuardFailure(compile_id=cid or "?", guard=guard, kind=kind, location=loc, hint=hint, stack=stack,
                        cause=cause, library=library_of(stack[-1].file) if stack else None, added_at=added)


def _known(path, known_files):
    """The trace's files that a path torch truncated at its head ("mp/cp1/ops.py") can be, by suffix."""
    return [kf for kf in known_files if kf.endswith(path.lstrip(".")) or kf.endswith(path)]


GUARD_ADDED_RE = re.compile(r"#[^#]*\((\S+):(\d+) in (\S+)\)\s*$")


def _added_at(rest, known_files, loc):
    """The frame torch names in parentheses after a guard's source line ("# f.py:36 in forward (ops.py:29 in
    _fake)"): where the guard was added, e.g. inside a custom op's fake kernel. Its truncated path is matched
    against the trace's files, then looked for beside the user's file. None when not named or not found."""
    m = GUARD_ADDED_RE.search(rest)
    if not m:
        return None
    path = m.group(1)
    cands = _known(path, known_files)
    if not cands and loc is not None and loc.file:
        cands = [os.path.join(os.path.dirname(loc.file), os.path.basename(path))]
    cands = [c for c in cands if os.path.isfile(c)]
    if not cands:
        return None
    at = _loc(cands[0], m.group(2), m.group(3))
    at.code = src_line(at.file, at.line)
    return at
