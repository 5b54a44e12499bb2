"""Sizes the program made static: the lines whose size guards pinned a dim (a Dynamo guard, an Inductor lowering,
a torch function reading a size as an int, a float compared with a size), and a recompile stopped by a compiler
stance. Read by analyze_recompiles. No torch import."""
import os
import re

from .guard_failures import REASON_HEAD_RE, _name, parse_guard_failure
from ..read.frames import is_user_file, src_line
from ..report import Location


_SIZE_SRC_RE = re.compile(r"^(.+)\.size\(\)\[(\d+)\]$")


# lowerings of Inductor's own that make a size static: (file suffix, function)
_LOWERING_PINS = (("/torch/_inductor/kernel/conv.py", "convolution_backward_lowering"),)


def lowering_specializations(tr):
    """{(frame_id, rank, tensor, dim): Location} for the sizes a lowering of Inductor's own made static
    (symbolic_shape_specialization events whose stack passes through it): the CPU convolution backward fixes the
    grad-input strides as ints (blind A/B batch 47: a TextCNN's length, once the program's own pin was fixed)."""
    out = {}
    for e in tr.of("symbolic_shape_specialization"):
        d = e.data if isinstance(e.data, dict) else {}
        at = next((Location(file=file, line=line, function=fn) for file, line, fn, _ in tr.frames(d.get("stack"))
                   if any((file or "").replace("\\", "/").endswith(sfx) and fn == name for sfx, name in _LOWERING_PINS)),
                  None)
        for src in d.get("sources") or [] if at else []:
            m = _SIZE_SRC_RE.match(src.strip())
            if m:
                out.setdefault((e.meta.get("frame_id"), e.rank, _name(m.group(1)), int(m.group(2))), at)
    return out


def specializations(tr):
    """Where the program made Dynamo turn a size into a constant: {(frame_id, rank, tensor, dim): (Location,
    reason, the other sizes of its symbol, value, made static again at another size)} from the
    trace's symbolic_shape_specialization events whose innermost frame is in the user's own file,
    e.g. `for i in range(q.size(0)):` (range_refined_to_singleton): that dim then recompiles for every new
    size whatever dynamic= says."""
    out, values = {}, {}
    for e in tr.of("symbolic_shape_specialization"):
        d = e.data if isinstance(e.data, dict) else {}
        frames = tr.frames(d.get("user_stack"))
        sources = [x.strip() for x in d.get("sources") or []]
        for src in sources:
            m = _SIZE_SRC_RE.match(src)
            if m:
                values.setdefault((e.meta.get("frame_id"), e.rank, _name(m.group(1)), int(m.group(2))),
                                  set()).add(str(d.get("value")))
        # only a line of the user's own file is claimed; one inside a library or torch (a conv's padding, a
        # transformers check) is not "your code": that cause keeps the generic shape fix. Sizes that share one symbol
        # (duck sizing) are the user's line that calls the layer fixing one of them (nn.Linear's in_features)
        if len(sources) > 1 and frames and not (frames[-1][0] and is_user_file(frames[-1][0])):
            frames = [f for f in frames if f[0] and is_user_file(f[0])]
        if not frames or not frames[-1][0] or not is_user_file(frames[-1][0]):
            continue
        file, line, _, code = frames[-1]
        for src in sources:
            m = _SIZE_SRC_RE.match(src)
            if m:   # per compiled function (frame): another function's tensor of the same name is not it
                # (several sources: one symbol for sizes that were equal at the first compile, duck sizing)
                out.setdefault((e.meta.get("frame_id"), e.rank, _name(m.group(1)), int(m.group(2))),
                               (Location(file=file, line=line, code=code or src_line(file, line)), d.get("reason"),
                                [_size_name(x) for x in sources if x != src], d.get("value")))
    # a dim made static again at another size by a later compile: the line fixes that dim itself, not only through
    # a symbol it shared with another input at the first compile (blind A/B batch 61: x[:, T - 1] on a length all
    # three inputs share; "duck sizing" and mark_dynamic were the report's fix)
    return {k: v + (len(values.get(k, ())) > 1,) for k, v in out.items()}


def torch_op_specializations(tr):
    """Where a torch function the program calls turned a size into a constant while Dynamo traced it:
    {(frame_id, rank, tensor, dim): (the program's calling Location, the torch frame's code, "file:line")} from the
    symbolic_shape_specialization events whose innermost frame is torch's own and an outer one the program's (blind
    A/B batch 50: nn.MaxPool1d's F.max_pool1d reads the length as an int under dynamic=True; the report had only the
    generic shape fix, "a lowering that specializes it")."""
    out = {}
    for e in tr.of("symbolic_shape_specialization"):
        d = e.data if isinstance(e.data, dict) else {}
        frames = tr.frames(d.get("user_stack"))
        if not frames or not frames[-1][0] or "/torch/" not in frames[-1][0].replace("\\", "/"):
            continue
        user = [f for f in frames if f[0] and is_user_file(f[0])]
        if not user:
            continue
        file, line, _, code = user[-1]
        tfile, tline, _, tcode = frames[-1]
        for src in [x.strip() for x in d.get("sources") or []]:
            m = _SIZE_SRC_RE.match(src)
            if m:
                out.setdefault((e.meta.get("frame_id"), e.rank, _name(m.group(1)), int(m.group(2))),
                               (Location(file=file, line=line, code=code or src_line(file, line)),
                                (tcode or "").strip(), f"{os.path.basename(tfile)}:{tline}"))
    return out


def _size_name(src):
    """"x.size()[2]" for a size source L['x'].size()[2]."""
    m = _SIZE_SRC_RE.match(src)
    return f"{_name(m.group(1))}.size()[{m.group(2)}]" if m else src


# the guard failures fail_on_recompile names in its error (2.14 and 2.15 do; 2.9 names none): the recompile it stopped
_STANCE_RE = re.compile(r"Detected recompile when torch\.compile stance is 'fail_on_recompile'\..*?\n\s*triggered by the "
                        r"following guard failure\(s\):\n((?:[ \t]*- \d+/\d+: .*\n?)+)")


def stopped_recompiles(stderr, known=()):
    """{frame_id: [GuardFailure]} of the recompile torch.compiler.set_stance("fail_on_recompile") stopped: no
    recompile_reasons artifact is written for it, only the error's text (blind A/B batch 48: the report promised
    "the failed guard and its fix" and showed neither)."""
    out = {}
    m = _STANCE_RE.search(stderr or "")
    for ln in (m.group(1).splitlines() if m else []):
        r = ln.strip()[2:].strip()
        head = REASON_HEAD_RE.match(r)
        if head:
            out.setdefault(int(head.group(1).split("/")[0]), []).append(parse_guard_failure(r, known))
    return out


_EQ_FLOAT_RE = re.compile(r"^Eq\((.+), (-?\d+\.\d*)\)$")


def size_pinned_by_float(tr, frame_id, rank, tensor, dim):
    """(Location, guard) of the first guard in the function's compiles that fixes a float computed from the size
    (`int(np.ceil(T / 4))`: Eq(IntTrueDiv(s66, 4), 72.0)) at a line of the user's own file, which pins the size
    before any later line makes Dynamo call it static (blind A/B batch 46: the report named only the `if pad:`
    after it); None when there is none. A guard on an int (Eq(Mod(s, 4), 0) from a view) does not pin it."""
    syms = set()
    for e in tr.of("create_symbol"):
        d = e.data if isinstance(e.data, dict) else {}
        m = _SIZE_SRC_RE.match((d.get("source") or "").strip())
        if e.meta.get("frame_id") == frame_id and e.rank == rank and m and d.get("symbol") \
                and _name(m.group(1)) == tensor and int(m.group(2)) == dim:
            syms.add(d["symbol"])
    for e in tr.of("guard_added_fast") if syms else []:
        d = e.data if isinstance(e.data, dict) else {}
        m = _EQ_FLOAT_RE.match((d.get("expr") or "").strip())
        # one size symbol, this dim's: a float guard on a ratio of two sizes (Eq(IntTrueDiv(s30, s53), 2.0)) does not
        # fix this size on its own (review: the line named was a ratio check, a hann_window later fixed the size)
        if e.meta.get("frame_id") != frame_id or e.rank != rank or not m \
                or len(set(re.findall(r"\b[su]\d+\b", m.group(1)))) != 1 \
                or not any(re.search(rf"\b{s}\b", m.group(1)) for s in syms):
            continue
        frames = tr.frames(d.get("user_stack"))
        if frames and frames[-1][0] and is_user_file(frames[-1][0]):
            file, line, _, code = frames[-1]
            return Location(file=file, line=line, code=code or src_line(file, line)), d["expr"]
    return None
