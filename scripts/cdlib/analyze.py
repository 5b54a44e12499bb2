"""Target run -> structured events -> report.Report.

run_and_analyze() runs the user's command ONCE with TORCH_TRACE pointed into the run dir and
builds the report from the trace plus the captured output. analyze() does the second half on an
existing trace (recorded fixtures, other torch versions). No torch import here."""
import os
import re
import shutil
import sys
import sysconfig

from . import knowledge, proc, trace as tracemod, verdict
from .output import cli_command
from .report import (ErrorInfo, FunctionRecompiles, GraphBreak, GraphInfo, GuardFailure, Location,
                     Recompile, Report)

# ---- user code vs library code ------------------------------------------------------------

_LIB_DIRS = tuple(p for p in {sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("platstdlib")} if p)
_SCRIPTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


_GENERATED_RE = re.compile(r"/[a-z0-9]{2}/c[a-z0-9]{40,}\.py$")


def is_user_file(path):
    if not path or path.startswith("<") or path.startswith("/tmp/torchinductor_") or _GENERATED_RE.search(path):
        return False  # Inductor's generated output code (in any TORCHINDUCTOR_CACHE_DIR) is not the user's
    p = path.replace("\\", "/")
    if "/site-packages/" in p or "/dist-packages/" in p or "/torch/" in p and "/lib/python" in p:
        return False
    if p.startswith(_LIB_DIRS) or p.startswith(_SCRIPTS_DIR) or p.endswith("/rank_shim.py"):
        return False  # rank_shim.py: the launcher triage --nproc writes into its run dir
    return True


def _src_line(path, line):
    try:
        import linecache
        s = linecache.getline(path, int(line)).strip()
        return s or None
    except (OSError, ValueError, TypeError):
        return None


def _loc(path, line, func=None, code=None):
    line = int(line) if line not in (None, "") else None
    return Location(file=path, line=line, function=func, code=code or (_src_line(path, line) if line else None))


FRAME_RE = re.compile(r'^\s*File "([^"]+)", line (\d+)(?:, in (.+))?$')


def parse_py_frames(text):
    """Frames of a Python traceback text: [Location] outermost first (code from the next line)."""
    frames, lines = [], text.splitlines()
    for i, ln in enumerate(lines):
        m = FRAME_RE.match(ln)
        if not m:
            continue
        code = None
        if i + 1 < len(lines) and lines[i + 1].startswith("    ") and not FRAME_RE.match(lines[i + 1]):
            code = lines[i + 1].strip()
        frames.append(Location(file=m.group(1), line=int(m.group(2)), function=m.group(3), code=code))
    return frames


def innermost_user(frames):
    for fr in reversed(frames):
        if is_user_file(fr.file):
            return fr
    return None


# ---- graph breaks -------------------------------------------------------------------------

GB_URL_RE = re.compile(r"/gb/gb(\d+)\.html", re.I)
SITE_RE = re.compile(r"^Graph break in user code at (.+):(\d+)\s*$", re.M)


def parse_graph_break(payload):
    """One dynamo_graph_break_reason payload -> dict(site_file, site_line, gb_ids, gb_type,
    explanation, hints, frames, frame_skipped)."""
    text = payload or ""
    m = SITE_RE.search(text)
    site_file, site_line = (m.group(1), int(m.group(2))) if m else (None, None)
    body, _, tb = text.partition("\nUser code traceback:")
    primary = body.split("*** While handling this graph break")[0]
    lines = primary.splitlines()
    gb_type, explanation, hints = None, [], []
    ex_i = next((i for i, ln in enumerate(lines) if ln.strip().startswith("Explanation:")), None)
    if ex_i is not None and ex_i > 0:
        gb_type = lines[ex_i - 1].replace("Graph Break Reason:", "").strip()
        mode = "ex"
        for ln in lines[ex_i:]:
            s = ln.strip()
            if s.startswith("Explanation:"):
                explanation.append(s[len("Explanation:"):].strip())
            elif s.startswith("Hint:"):
                mode = "hint"
                hints.append(s[len("Hint:"):].strip())
            elif s.startswith("Developer debug context") or s.startswith("For more details"):
                mode = None
            elif s and mode == "ex":
                explanation.append(s)
            elif s and mode == "hint" and hints:
                hints[-1] += " " + s
    else:
        r = re.search(r"Graph Break Reason:\s*(.+)", primary)
        gb_type = r.group(1).strip() if r else (primary.strip().splitlines() or ["graph break"])[0]
    ids = [f"GB{int(x):04d}" for x in GB_URL_RE.findall(text)]
    frames = parse_py_frames(tb.split("\nTraceback (most recent call last)")[0]) if tb else []
    return {
        "site_file": site_file, "site_line": site_line, "gb_ids": list(dict.fromkeys(ids)),
        "gb_type": gb_type, "explanation": " ".join(explanation).strip(),
        "hints": [h for h in hints if "report an issue to PyTorch" not in h],
        "frames": frames,
        "frame_skipped": "falling back to eager" in text or "frame skipped" in text,
        "text": primary,
    }


def _graph_breaks(tr):
    sites = {}
    seen = set()
    for e in tr.artifacts("dynamo_graph_break_reason"):
        gb = parse_graph_break(e.payload)
        key_ev = (e.compile_id, gb["site_file"], gb["site_line"], gb["gb_type"], e.rank)
        if key_ev in seen:  # the same break logged again on a restart of the same frame
            continue
        seen.add(key_ev)
        gb_id = gb["gb_ids"][0] if gb["gb_ids"] else None
        key = (gb["site_file"], gb["site_line"], gb_id or gb["gb_type"])
        if key not in sites:
            user_frames = [f for f in gb["frames"] if is_user_file(f.file)]
            loc = user_frames[-1] if user_frames else (
                gb["frames"][-1] if gb["frames"] else _loc(gb["site_file"] or "?", gb["site_line"]))
            if loc.code is None and loc.line:
                loc.code = _src_line(loc.file, loc.line)
            recipe = knowledge.graph_break_recipe(gb_id, f"{gb['gb_type']}\n{gb['text']}")
            also = [i for i in gb["gb_ids"][1:]]
            fix = dict(recipe)
            if also:
                fix["also"] = [{"gb_id": i, "gb_type": knowledge.gb_type_of(i),
                                "fix": knowledge.graph_break_recipe(i, "").get("fix")} for i in also]
            sites[key] = GraphBreak(
                site=f"{gb['site_file']}:{gb['site_line']}", gb_id=gb_id,
                gb_type=gb["gb_type"] or knowledge.gb_type_of(gb_id) or "graph break",
                category=recipe.get("category", "other graph break"), location=loc,
                explanation=gb["explanation"], hints=gb["hints"][:3], count=0, frames=[], fix=fix,
                user_stack=user_frames[-4:])
            if gb["frame_skipped"]:
                sites[key].fix["frame_skipped"] = True
        b = sites[key]
        b.count += 1
        if e.compile_id and e.compile_id not in b.frames:
            b.frames.append(e.compile_id)
    # a frame that broke and then produced no graph at all was skipped: it runs eagerly
    no_graph = {e.compile_id for e in tr.of("compilation_metrics") if e.data.get("graph_op_count") is None}
    for b in sites.values():
        if b.frames and all(f in no_graph for f in b.frames):
            b.fix["frame_skipped"] = True
    return sorted(sites.values(), key=lambda b: -b.count)


# ---- recompilations -----------------------------------------------------------------------

REASON_HEAD_RE = re.compile(r"^(\d+/\d+): (.*)$")
GUARD_SRC_RE = re.compile(r"#\s*(?:.*?#\s*)?(\S+):(\d+) in (\S+)")


def _split_reasons(payload):
    if payload is None:
        return []
    try:
        import json
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
    loc = None
    stack = parse_py_frames("\n".join(lines[1:])) if len(lines) > 1 else []
    if stack:
        loc = innermost_user(stack) or stack[-1]
    else:
        s = GUARD_SRC_RE.search(rest)
        if s:
            path = s.group(1)
            for kf in known_files:  # torch truncates the path's head: match by suffix
                if kf.endswith(path.lstrip(".")) or kf.endswith(path):
                    path = kf
                    break
            loc = _loc(path, s.group(2), s.group(3))
    if loc is not None and loc.code is None and loc.line:
        loc.code = _src_line(loc.file, loc.line)
    kind = knowledge.guard_kind(guard)
    return GuardFailure(compile_id=cid or "?", guard=guard, kind=kind["kind"], location=loc, hint=hint)


RESUME_RE = re.compile(r"^torch_dynamo_resume_in_(.+)_at_(\d+)$")


def _function_info(tr, frame_id):
    """(name, Location, wrapper) of a compiled frame, mapped to user code when it is a torch wrapper."""
    name = file = line = None
    for e in tr.of("compilation_metrics"):
        if e.meta.get("frame_id") == frame_id and e.data.get("co_name"):
            name, file, line = e.data["co_name"], e.data.get("co_filename"), e.data.get("co_firstlineno")
            break
    starts = [e for e in tr.of("dynamo_start") if e.meta.get("frame_id") == frame_id]
    frames = tr.frames(starts[0].data.get("stack")) if starts else []
    if name is None and frames:
        file, line, name = frames[-1][0], frames[-1][1], frames[-1][2]
    m = RESUME_RE.match(name or "")
    if m:  # the rest of a function after a graph break
        name = f"{m.group(1)} (resumed after the graph break at line {m.group(2)})"
    if file and not is_user_file(file):
        callers = [f for f in frames[:-1] if is_user_file(f[0])]
        wrapper = f"{name} in {_short_torch_path(file)} (torch wrapper, e.g. torch.compile(module))"
        if callers:
            c = callers[-1]
            return (f"{name} (compiled module called at {os.path.basename(c[0])}:{c[1]})",
                    _loc(c[0], c[1], c[2], c[3]), wrapper)
        return name, _loc(file, line, name), wrapper
    return name or f"frame {frame_id}", _loc(file or "?", line, name), None


def _short_torch_path(path):
    i = path.replace("\\", "/").find("/torch/")
    return path[i + 1:] if i >= 0 else path


LIMIT_RE = re.compile(r"hit config\.(?:recompile_limit|cache_size_limit) \((\d+)\)\s*\n.*?function: '([^']+)' \(([^)]+):(\d+)\)", re.S)


def _recompiles(tr, stderr):
    by_frame = {}
    known = list(tr.strings.values())
    for e in tr.artifacts("recompile_reasons"):
        fid = e.meta.get("frame_id")
        failures = [parse_guard_failure(r, known) for r in _split_reasons(e.payload)]
        by_frame.setdefault((fid, e.rank), []).append(Recompile(compile_id=e.compile_id or "?", failures=failures))
    limit_frames = {}
    for e in tr.of("compilation_metrics"):
        ft, fr = e.data.get("fail_type") or "", e.data.get("fail_reason") or ""
        if "RecompileLimit" in ft or re.search(r"recompile.?limit|cache_size_limit", fr, re.I):
            n = re.search(r"currently set to (\d+)", fr)
            limit_frames[(e.meta.get("frame_id"), e.rank)] = int(n.group(1)) if n else None
    out = []
    for key in sorted(set(by_frame) | set(limit_frames), key=lambda k: (k[1] or 0, k[0] or 0)):
        fid, rank = key
        recs = by_frame.get(key, [])
        name, loc, wrapper = _function_info(tr, fid)
        kinds = {}
        for r in recs:
            # classify each recompile by its most recent failure (the first listed)
            if r.failures:
                k = r.failures[0].kind
                kinds[k] = kinds.get(k, 0) + 1
        compiles = len({e.compile_id for e in tr.of("dynamo_start") if e.meta.get("frame_id") == fid and e.rank == rank})
        fr = FunctionRecompiles(function=name, location=loc, frame_id=fid, compiles=compiles, recompiles=recs,
                                kinds=kinds, wrapper=wrapper)
        if key in limit_frames:
            fr.limit_hit, fr.limit = True, limit_frames[key]
        fixes = []
        for k in kinds:
            kd = next(x for x in knowledge.load("recompiles")["kinds"] if x["kind"] == k)
            fixes.append({"kind": k, "title": kd["title"], "fix": " ".join(kd["fix"].split())})
        if fr.limit_hit:
            fixes.append({"kind": "limit", "title": "recompile limit hit", "fix": " ".join(knowledge.recompile_limit_fix().split())})
        fr.fixes = fixes
        out.append(fr)
    # the limit warning on stderr names the limit when the trace did not
    for m in LIMIT_RE.finditer(stderr or ""):
        for fr in out:
            if fr.limit_hit and fr.limit is None and (fr.function.split(" ")[0] == m.group(2)):
                fr.limit = int(m.group(1))
    return out


# ---- errors -------------------------------------------------------------------------------

EXC_RE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failed|Unsupported|Exceeded|Hit|Violation\w*)|[A-Za-z_][\w.]*\.[A-Z]\w+|AssertionError|KeyboardInterrupt)(?::\s?(.*))?$")


def parse_exception(text):
    """The last Python exception in text -> dict(full_type, type, message, frames, block) or None."""
    if not text:
        return None
    lines = text.splitlines()
    starts = [i for i, ln in enumerate(lines) if ln.strip().startswith("Traceback (most recent call last)")]
    if starts:
        i0 = starts[-1]
        lines_from = lines[i0:]
        j = 1
        while j < len(lines_from) and (lines_from[j].startswith(" ") or lines_from[j].startswith("\t") or not lines_from[j].strip()):
            j += 1
        if j >= len(lines_from):
            return None
        head = lines_from[j]
        m = re.match(r"^([A-Za-z_][\w.]*)(?::\s?(.*))?$", head.strip())
        if not m:
            return None
        msg = [m.group(2) or ""]
        for ln in lines_from[j + 1: j + 60]:
            if re.match(r"^[VIWEC]\d{4} |^Set TORCHDYNAMO_VERBOSE|^Traceback|^During handling|^The above exception", ln):
                break
            msg.append(ln)
        frames = parse_py_frames("\n".join(lines_from[:j]))
        block = "\n".join(lines_from[:j + 1])
    else:  # no traceback: the last line that looks like "SomeError: message"
        for k in range(len(lines) - 1, -1, -1):
            m = EXC_RE.match(lines[k].strip())
            if m:
                break
        else:
            return None
        msg, block = [m.group(2) or ""] + lines[k + 1:k + 20], lines[k]
        # a SyntaxError in the main script has no "Traceback" header, only its File "x", line N
        frames = parse_py_frames("\n".join(lines[max(0, k - 6):k]))
        if frames:
            block = "\n".join(lines[max(0, k - 6):k + 1])
    full = m.group(1)
    message = "\n".join(msg).strip()
    return {"full_type": full, "type": full.rsplit(".", 1)[-1], "message": message, "frames": frames, "block": block}


def make_error(exc, *, output="", signal=None, source="stderr", target_str=None, cli=None):
    cli = cli or cli_command()
    if exc:
        signature = f"{exc['full_type']}: {exc['message']}\n{exc['block']}"
        row = knowledge.classify_error(signature, output, signal)
        loc = innermost_user(exc["frames"])
        etype, message = exc["type"], exc["message"]
    else:
        row = knowledge.classify_error("", output, signal)
        loc, etype, message = None, signal or "error", ""
    if message and "from user code:" in message:  # Dynamo names the user line it was tracing
        loc = innermost_user(parse_py_frames(message.split("from user code:", 1)[1])) or loc
    elif loc is None and message:
        loc = innermost_user(parse_py_frames(message))
    gb_ids = [f"GB{int(x):04d}" for x in GB_URL_RE.findall(message or "")]
    if loc is not None and loc.code is None and loc.line:
        loc.code = _src_line(loc.file, loc.line)
    inner = verdict.inner_error(etype, message)
    if exc and etype in ("SyntaxError", "IndentationError", "TabError") and loc is not None:
        message = f"{message} ({os.path.basename(loc.file)}:{loc.line})"
    return ErrorInfo(type=etype, message=_first_lines(message, 6, 600), category=row["id"], title=row["title"],
                     skill=row.get("skill"), next_command=knowledge.render_command(row, cli, target_str),
                     advice=" ".join((row.get("advice") or "").split()), location=loc, source=source,
                     gb_id=gb_ids[0] if gb_ids else None, inner=inner, side=row.get("side", "compiler"),
                     suggested_fixes=suggested_fixes(message))


def suggested_fixes(message):
    """PyTorch's own "Suggested fixes:" lines of a constraint violation, verbatim."""
    lines, out = (message or "").splitlines(), []
    for i, ln in enumerate(lines):
        if ln.strip() == "Suggested fixes:":
            for m in lines[i + 1:]:
                if not m.strip() or not m.startswith(" "):
                    break
                out.append(m.strip())
            break
    return out


def _first_lines(text, n, limit):
    keep = []
    for ln in (text or "").splitlines():
        if ln.strip():
            keep.append(ln.rstrip())
        if len(keep) >= n:
            break
    s = "\n".join(keep)
    return s if len(s) <= limit else s[:limit - 1] + "…"


def _errors(tr, res, stdout, stderr, target_str, cli):
    errors = []
    out_all = (stdout or "") + "\n" + (stderr or "")
    if res is not None and res.timed_out:
        row = knowledge.triage_row("timeout")
        errors.append(ErrorInfo(type="Timeout", message=f"killed after {res.duration_s:.0f} s", category="timeout",
                                title=row["title"], skill=row["skill"],
                                next_command=knowledge.render_command(row, cli, target_str),
                                advice=" ".join(row["advice"].split()), source="timeout"))
        return errors
    failed = res is not None and res.returncode not in (0, None)
    exc = parse_exception(stderr)
    if failed:
        if res.signal:
            errors.append(make_error(exc if exc and res.signal == "SIGABRT" else None, output=out_all,
                                     signal=res.signal, source="signal", target_str=target_str, cli=cli))
            errors[-1].type = res.signal if not exc else errors[-1].type
            errors[-1].message = errors[-1].message or f"process killed by {res.signal}"
        elif exc:
            errors.append(make_error(exc, output=out_all, target_str=target_str, cli=cli))
        else:
            tail = [ln for ln in (stderr or stdout or "").splitlines() if ln.strip()][-3:]
            err = make_error({"full_type": f"exit {res.returncode}", "type": f"exit {res.returncode}",
                              "message": "\n".join(tail), "frames": [], "block": "\n".join(tail)},
                             output=out_all, target_str=target_str, cli=cli)
            errors.append(err)
    # compile failures the program caught (or suppress_errors hid) still show in the trace
    for e in tr.of("compilation_metrics"):
        ft, fr = e.data.get("fail_type"), e.data.get("fail_reason")
        if not ft or "RecompileLimit" in ft or re.search(r"recompile.?limit", fr or "", re.I):
            continue
        if ft.rsplit(".", 1)[-1] == "Unsupported" and any(
                b.compile_id == e.compile_id for b in tr.artifacts("dynamo_graph_break_reason")):
            continue  # a graph break that made Dynamo skip the frame: reported under graph breaks
        if any(x.type == ft.rsplit(".", 1)[-1] for x in errors):
            for x in errors:
                if x.type == ft.rsplit(".", 1)[-1] and not x.compile_id:
                    x.compile_id = e.compile_id
            continue
        err = make_error({"full_type": ft, "type": ft.rsplit(".", 1)[-1], "message": fr or "", "frames": [],
                          "block": ""}, target_str=target_str, cli=cli, source="trace")
        if e.data.get("fail_user_frame_filename"):
            err.location = _loc(e.data["fail_user_frame_filename"], e.data.get("fail_user_frame_lineno"))
        err.compile_id = e.compile_id
        errors.append(err)
    return errors


def _breaks_from_errors(rep):
    """Under fullgraph=True the first break is an exception, not a logged break: list it too."""
    for err in rep.errors:
        if err.category != "graph_break_fullgraph":
            continue
        if err.location and any(b.location.file == err.location.file and b.location.line == err.location.line
                                for b in rep.graph_breaks):
            continue
        gb = parse_graph_break("Graph Break Reason: " + err.message) if err.message else None
        full = err.message or ""
        gb_id = err.gb_id
        gb_type = (gb and gb["gb_type"]) or knowledge.gb_type_of(gb_id) or full.splitlines()[0] if full else "graph break"
        recipe = knowledge.graph_break_recipe(gb_id, full)
        loc = err.location or Location(file="?")
        rep.graph_breaks.append(GraphBreak(
            site=f"{loc.file}:{loc.line}", gb_id=gb_id, gb_type=gb_type, category=recipe.get("category", "other"),
            location=loc, explanation=(gb or {}).get("explanation", ""), hints=(gb or {}).get("hints", [])[:3],
            count=1, frames=[err.compile_id] if err.compile_id else [], fix=dict(recipe)))


_OP_RE = re.compile(r"CustomOpDef\(([\w:.]+)\)|backward through ([\w.]+) but|op: torch\.ops\.([\w.]+)|for <OpOverload\(op='([\w:.]+)'")


def _op_name(e):
    m = _OP_RE.search((e.inner or {}).get("message", "") + "\n" + (e.message or ""))
    name = next((g for g in m.groups() if g), None) if m else None
    if name and "::" not in name and name.count(".") >= 1:  # corpus.sq.default -> corpus::sq
        ns, op = name.split(".")[:2]
        name = f"{ns}::{op}"
    return name or (e.inner or {}).get("op")


_BUILTIN_BACKENDS = ("inductor", "aot_eager", "aot_eager_decomp_partition", "eager", "cudagraphs", "tvm", "onnxrt",
                     "openxla", "aot_inductor", "ipex")


def _error_steps(rep, target_str, cli):
    """Next steps for the errors, routed by the verdict: only compile-only failures go to
    bisect/minify; a failure that happens without torch.compile too goes to the user's line."""
    v = rep.verdict or {}
    kind = v.get("kind")
    steps = []
    for i, e in enumerate(rep.errors):
        inner = e.inner or {}
        msg = _first_lines(inner.get("message") or e.message, 1, 200)
        at = v.get("location") if i == 0 and v.get("location") else (
            f"{os.path.basename(e.location.file)}:{e.location.line}" if e.location and e.location.line else None)
        op = _op_name(e) if e.side == "custom_op" else None
        if i == 0 and kind in verdict.USER_SIDE:
            if e.category == "syntax_error":
                why = f"fix the syntax error at {at}: {re.sub(r' [(][^()]*:[0-9]+[)]$', '', msg)}"
            else:
                why = (f"fix your program{' at ' + at if at else ''}: {inner.get('type') or e.type}{': ' + msg if msg else ''} "
                       f"({'it fails the same way without torch.compile' if kind == 'fails_eager_too' else 'torch.compile never ran'}; "
                       "no compiler bisect needed)")
                if e.side == "custom_op":
                    why += f"; {e.title.lower()}" + (f" ({op})" if op else "") + \
                        ": register it, then check the op with torch.library.opcheck(op, args)"
            steps.append({"why": why, "skill": e.skill if e.side in ("user", "custom_op") else "overview",
                          "command": None})
            continue
        if e.side == "custom_op":
            fix = {"custom_op_no_fake": "register a fake kernel (register_fake)",
                   "custom_op_no_autograd": "register a backward (register_autograd)",
                   "custom_op_bad_fake": "make the fake kernel return the real kernel's shape/dtype",
                   "custom_op_mutates_args": "declare every mutated input in mutates_args"}.get(e.category, e.title)
            steps.append({"why": f"{fix} for {op or 'the custom op'}, then check it with torch.library.opcheck(op, args)",
                          "skill": e.skill, "command": None})
            continue
        if inner.get("backend") and inner["backend"] not in _BUILTIN_BACKENDS and e.location \
                and is_user_file(e.location.file):
            steps.append({"why": f"your own backend '{inner['backend']}' raised {inner.get('type')} at {at}: {msg}; "
                                 "fix it there (torch.compile's own backends are not involved)",
                          "skill": None, "command": None})
            continue
        if e.suggested_fixes:
            steps.append({"why": "apply PyTorch's suggested fix: " + "; ".join(e.suggested_fixes[:3]),
                          "skill": e.skill, "command": e.next_command})
            continue
        if i == 0 and kind == "compile_only" and e.side == "user":
            steps.append({"why": f"{e.type}: looks like a program error but only fails compiled: torch.compile "
                                 "computes it differently (a meta kernel or decomposition); find the layer",
                          "skill": "bisect", "command": f"{cli} bisect -- {target_str}" if target_str else None})
            continue
        if e.side == "user" and not e.next_command:
            steps.append({"why": f"{e.type}: {e.title}" + (f" at {at}" if at else "") + f": {msg}",
                          "skill": e.skill, "command": None})
            continue
        steps.append({"why": f"{e.type}: {e.title}", "skill": e.skill, "command": e.next_command})
    return steps


def _custom_op_mutation(files):
    """(op name, Location, arg) of a custom op declared with mutates_args=() whose body changes an
    argument in place (x.add_(...), x[...] = ..., x.copy_(...)); None when there is none."""
    import ast
    for path in files:
        try:
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read())
        except (OSError, SyntaxError, ValueError):
            continue
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef):
                continue
            for dec in fn.decorator_list:
                if not (isinstance(dec, ast.Call) and getattr(dec.func, "attr", getattr(dec.func, "id", "")) == "custom_op"):
                    continue
                kw = {k.arg: k.value for k in dec.keywords}
                ma = kw.get("mutates_args")
                if not (isinstance(ma, (ast.Tuple, ast.List, ast.Set)) and not ma.elts):
                    continue
                params = {a.arg for a in fn.args.args}
                for node in ast.walk(fn):
                    tgt = None
                    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                            and node.func.attr.endswith("_") and not node.func.attr.startswith("_") \
                            and isinstance(node.func.value, ast.Name) and node.func.value.id in params:
                        tgt = node.func.value.id
                    elif isinstance(node, (ast.Assign, ast.AugAssign)):
                        for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                            if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in params:
                                tgt = t.value.id
                    if tgt:
                        name = dec.args[0].value if dec.args and isinstance(dec.args[0], ast.Constant) else fn.name
                        return name, _loc(path, node.lineno, fn.name), tgt
    return None


def apply_verdict(rep, stderr, *, target_str=None, run_eager_fn=None, eager_res=None, eager_stderr=None):
    """Decide the verdict of a failed compiled run (an eager re-run through run_eager_fn, or a recorded
    eager_res/eager_stderr), refine the first error with it and redo the next steps."""
    if not rep.errors or rep.timed_out or rep.exit_code in (0, None):
        return rep
    exc = parse_exception(stderr)
    err = rep.errors[0]
    base = os.getcwd()

    def where(loc):
        p = loc.file
        p = os.path.relpath(p, base) if p.startswith(base + os.sep) else os.path.basename(p)
        return f"{p}:{loc.line}" if loc.line else p

    rep.verdict = verdict.decide(err, exc if err.source != "signal" or rep.signal == "SIGABRT" else None,
                                 used_compile=rep.used_compile, run_eager_fn=run_eager_fn, eager_res=eager_res,
                                 eager_stderr=eager_stderr, parse_exception=parse_exception,
                                 innermost_user=innermost_user, where=where)
    ev = rep.verdict.get("eager") or {}
    if rep.verdict["kind"] == "different_failure_eager" and ev.get("type") and err.side == "user" \
            and ev.get("location") and ev["location"] == rep.verdict.get("location") \
            and knowledge.classify_error(f"{ev['type']}: {ev.get('message') or ''}")["id"] == err.category:
        # worded differently (fake tensors got further than the real op) but the same class at the same line
        rep.verdict.update(kind="fails_eager_too", summary="fails without torch.compile too, with the same kind of "
                           f"error at the same line: a bug in your program at {ev['location']}")
    if rep.verdict["kind"] == "fails_eager_too" and ev.get("type") and not re.match(r"SIG|exit ", ev["type"]) and (
            err.side not in ("user", "custom_op") or err.category == "user_error"):
        # not the compiler's: classify by the eager failure, which names the problem plainly
        row = knowledge.classify_error(f"{ev['type']}: {ev.get('message') or ''}")
        if row.get("side", "compiler") != "compiler" and not (row["id"] == "user_error" and err.side in ("user", "custom_op")):
            err.category, err.title, err.skill = row["id"], row["title"], row.get("skill")
            err.side = row.get("side", "user")
            err.advice, err.next_command = " ".join(row["advice"].split()), None
    if rep.verdict["kind"] == "fails_eager_too" and ev.get("frame"):  # the line that really fails
        err.location = _loc(ev["frame"]["file"], ev["frame"]["line"], ev["frame"].get("function"))
    if rep.verdict["kind"] in ("compile_only", "not_checked") and err.category in (
            "accuracy_mismatch", "compiled_runtime_error", "user_error"):
        files = list(dict.fromkeys(f.file for f in (exc or {}).get("frames", []) if is_user_file(f.file)))
        if not files and rep.command:
            files = [a for a in rep.command if a.endswith(".py") and os.path.isfile(a)][:1]
        hit = _custom_op_mutation(files)
        if hit:
            row = knowledge.triage_row("custom_op_mutates_args")
            err.category, err.title, err.skill, err.side = row["id"], row["title"], row.get("skill"), "custom_op"
            err.advice = " ".join(row["advice"].split()) + (f" Here: {hit[0]} changes `{hit[2]}` in place at "
                                                            f"{where(hit[1])} but declares mutates_args=().")
            err.next_command = None
            err.inner = {"type": err.type, "message": err.message.splitlines()[0] if err.message else "",
                         "op": hit[0]}
    rep.next_steps = _next_steps(rep, target_str, cli_command())
    return rep


# ---- graphs and stats ---------------------------------------------------------------------

def _graphs(tr):
    graphs = []
    for e in tr.of("compilation_metrics"):
        d = e.data
        if d.get("graph_op_count") is None and not d.get("fail_type"):
            continue
        if "RecompileLimit" in (d.get("fail_type") or "") or re.search(r"recompile.?limit", d.get("fail_reason") or "", re.I):
            continue
        name = d.get("co_name") or "?"
        loc = _loc(d["co_filename"], d.get("co_firstlineno"), name) if d.get("co_filename") else None
        if (loc and not is_user_file(loc.file)) or RESUME_RE.match(name):
            name, loc, _ = _function_info(tr, e.meta.get("frame_id"))
        graphs.append(GraphInfo(compile_id=e.compile_id or d.get("compile_id") or "?", function=name, location=loc,
                                ops=d.get("graph_op_count"), nodes=d.get("graph_node_count"),
                                compile_time_s=_r(d.get("entire_frame_compile_time_s")),
                                backend_time_s=_r(d.get("backend_compile_time_s")),
                                inductor_time_s=_r(d.get("inductor_compile_time_s")), failed=d.get("fail_type")))
    return graphs


def _r(x):
    return round(x, 3) if isinstance(x, (int, float)) else None


def _stats(tr, graphs, breaks, recompiles, res):
    names = [e.artifact_name for e in tr.events if e.key == "artifact"]
    compile_s = round(sum(g.compile_time_s or 0 for g in graphs), 3)
    st = {
        "graphs": sum(1 for g in graphs if not g.failed),
        "ops": sum(g.ops or 0 for g in graphs),
        "graph_break_sites": len(breaks),
        "graph_breaks": sum(b.count for b in breaks),
        "functions_recompiling": sum(1 for f in recompiles if f.recompiles),
        "recompiles": sum(len(f.recompiles) for f in recompiles),
        "recompile_limit_hit": sum(1 for f in recompiles if f.limit_hit),
        "compile_time_s": compile_s,
        "fx_graph_cache_hits": names.count("fx_graph_cache_hit"),
        "fx_graph_cache_misses": names.count("fx_graph_cache_miss"),
        "aotautograd_cache_hits": names.count("aotautograd_cache_hit"),
        "aotautograd_cache_misses": names.count("aotautograd_cache_miss"),
    }
    if res is not None and res.duration_s:
        st["wall_time_s"] = res.duration_s
        st["compile_share"] = round(compile_s / res.duration_s, 3) if res.duration_s else None
    return st


# ---- next steps ---------------------------------------------------------------------------

def _next_steps(rep, target_str, cli):
    steps = _error_steps(rep, target_str, cli)
    if rep.graph_breaks:
        b = rep.graph_breaks[0]
        steps.append({"why": f"fix graph break at {os.path.basename(b.location.file)}:{b.location.line} "
                             f"({b.gb_id or b.category}); recipe above",
                      "skill": "trace-dynamo", "command": None})
    if any(f.recompiles or f.limit_hit for f in rep.recompiles):
        steps.append({"why": "stop the recompiles (fix per guard kind above)", "skill": "trace-dynamo", "command": None})
    if rep.used_compile and not steps:
        steps.append({"why": "compiles cleanly; check the speedup and kernels", "skill": "trace-inductor",
                      "command": f"{cli} perf -- {target_str}" if target_str else None})
    if not rep.used_compile and not rep.errors:
        steps.append({"why": "the program never reached torch.compile (not called, or TORCH_COMPILE_DISABLE set)",
                      "skill": "overview", "command": None})
    # dedupe
    seen, out = set(), []
    for s in steps:
        k = (s["skill"], s["command"], s["why"])
        if k not in seen:
            seen.add(k)
            out.append(s)
    return out


# ---- entry points -------------------------------------------------------------------------

def analyze(trace_dir, *, command=None, run_dir=None, res=None, stdout="", stderr="", target_str=None):
    tr = tracemod.parse(trace_dir) if trace_dir else tracemod.Trace([], {}, [])
    cli = cli_command()
    rep = Report(command=list(command or []), run_dir=run_dir or "")
    if res is not None:
        rep.exit_code, rep.signal, rep.timed_out, rep.duration_s = res.returncode, res.signal, res.timed_out, res.duration_s
    rep.torch_version = tr.torch_version()
    rep.used_compile = bool(tr.of("dynamo_start"))
    rep.graph_breaks = _graph_breaks(tr)
    rep.recompiles = _recompiles(tr, stderr)
    rep.graphs = _graphs(tr)
    rep.errors = _errors(tr, res, stdout, stderr, target_str, cli)
    _breaks_from_errors(rep)
    rep.stats = _stats(tr, rep.graphs, rep.graph_breaks, rep.recompiles, res)
    rep.next_steps = _next_steps(rep, target_str, cli)
    if tr.ranks and len(tr.ranks) > 1:
        rep.notes.append(f"trace has {len(tr.ranks)} ranks; this report merges them")
    return rep


def target_string(argv):
    import shlex
    a = list(argv)
    if a and a[0] == sys.executable:
        a[0] = "python"
    return " ".join(shlex.quote(x) for x in a)


def run_and_analyze(argv, run_dir, *, timeout, env_add=None, tag="target", tlparse=True, eager_check=False):
    """Run the target once with TORCH_TRACE into <run_dir>/trace; return the Report. When it fails
    (not on timeout), eager_check re-runs it once with compilation off for the verdict."""
    trace_dir = os.path.join(run_dir, "trace")
    os.makedirs(trace_dir, exist_ok=True)
    env = {"TORCH_TRACE": trace_dir, "PYTHONUNBUFFERED": "1"}
    env.update(env_add or {})
    res = proc.run(argv, env_add=env, timeout=timeout, stdout_path=os.path.join(run_dir, f"{tag}.stdout"),
                   stderr_path=os.path.join(run_dir, f"{tag}.stderr"))
    stdout, stderr = res.read_stdout(limit=2_000_000), res.read_stderr(limit=2_000_000)
    rep = analyze(trace_dir, command=argv, run_dir=run_dir, res=res, stdout=stdout, stderr=stderr,
                  target_str=target_string(argv))
    rep.artifacts.update({"stdout": res.stdout_path, "stderr": res.stderr_path, "trace_dir": trace_dir})
    if rep.errors and not res.timed_out and res.returncode not in (0, None):
        def run_eager():
            proc.progress("the compiled run failed; running it once more without torch.compile (eager check)")
            r = verdict.run_eager(argv, run_dir, timeout=timeout, env_add=env_add)
            rep.artifacts.update({"eager_check_stdout": r.stdout_path, "eager_check_stderr": r.stderr_path})
            return r, r.read_stderr(limit=2_000_000)
        apply_verdict(rep, stderr, target_str=target_string(argv), run_eager_fn=run_eager if eager_check else None)
    if os.environ.get("TORCH_TRACE"):
        rep.notes.append("your TORCH_TRACE was overridden for this run (the trace is in the run dir)")
    if tlparse:
        html = run_tlparse(trace_dir, os.path.join(run_dir, "tlparse"))
        if html:
            rep.artifacts["tlparse"] = html
    return rep


def run_tlparse(trace_dir, out_dir, extra=(), timeout=180):
    """tlparse's HTML report for the biggest trace file; None when tlparse is missing or fails."""
    exe = shutil.which("tlparse")
    files = tracemod.trace_files(trace_dir)
    if not exe or not files:
        return None
    biggest = max(files, key=os.path.getsize)
    res = proc.run([exe, biggest, "-o", out_dir, "--overwrite", "--no-browser", *extra], timeout=timeout,
                   stdout_path=out_dir + ".log", stderr_path=out_dir + ".log.err")
    index = os.path.join(out_dir, "index.html")
    return index if res.ok and os.path.exists(index) else None
