"""Errors of a target run -> report.ErrorInfo rows: the exception's row in the triage table, the user's
line, what PyTorch's own text and hints say (suggested fixes, C++ diagnostics, graph-break URLs), a trace's
failed compiles. The next steps built on these rows are analyze_errors'. No torch import here."""
import os
import re

from . import knowledge, verdict
from .analyze_dynamo import GB_URL_RE
from ..run import proc
from ..read.frames import (innermost_user, library_path, loc as _loc, parse_exception, parse_py_frames,
                           src_line as _src_line)
from ..cmdline import clip, cli_command
from ..report import ErrorInfo

# a row whose next step is triage of the same program: in a report of that program it would only repeat the
# run (blind A/B: "Next 1" of a fullgraph error was the command just run); its sections below are that triage
SAME_TRIAGE = "{cli} triage -- {target}"


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
    if row["id"] == "mark_dynamic_specialized" and message:   # torch's sentence and the line where the sizes met
        m = re.search(r"You marked \S+ as dynamic but your code specialized it to be a constant \(\d+\)", message)
        frames = parse_py_frames(message[m.end():]) if m else []
        if m:
            message = m.group(0) + ("\n" + message if message else "")
        if frames:   # torch's "User stack" after its sentence, outermost first: its last frame is where the sizes
            loc = frames[-1]    # met (transformers' loss line in a BERT model, not its generic.py wrapper)
    elif message and "from user code:" in message:  # Dynamo names the user line it was tracing
        loc = innermost_user(parse_py_frames(message.split("from user code:", 1)[1])) or loc
    elif loc is None and message:
        loc = innermost_user(parse_py_frames(message))
    gb_ids = [f"GB{int(x):04d}" for x in GB_URL_RE.findall(message or "")]
    if loc is not None and loc.code is None and loc.line:
        loc.code = _src_line(loc.file, loc.line)
    if exc and row.get("side") == "user" and _read_empty_stdin(exc, loc):
        row = knowledge.triage_row("stdin_eof")
    inner = verdict.inner_error(etype, message)
    under = functorch_transforms(message)
    if under:
        inner = dict(inner or {}, under=under)
    if exc and escaped_trace_value(row["id"], message, exc["frames"]):
        inner = dict(inner or {}, escaped=True)
    raised = raised_call(message)
    if raised:
        inner = dict(inner or {}, raised_at=raised)
    lowered = lowering_origin(message, output)
    if lowered:
        inner = dict(inner or {}, lowered=lowered)
    if "CppCompileError" in f"{etype} {message}":   # the C++ compiler's own errors, with the generated lines
        diags = cpp_diagnostics(output)
        if diags:
            inner = dict(inner or {}, compiler_errors=diags)
    if exc and etype in ("SyntaxError", "IndentationError", "TabError") and loc is not None:
        message = f"{message} ({os.path.basename(loc.file)}:{loc.line})"
    nxt = knowledge.render_command(row, cli, target_str)
    if target_str and row.get("command") == SAME_TRIAGE:   # the report being built is that triage
        nxt = None
    advice = knowledge.advice("cpp_compile_error") if (inner or {}).get("compiler_errors") else row.get("advice")
    return ErrorInfo(type=etype, message=_first_lines(message, 6, 600), category=row["id"], title=row["title"],
                     skill=row.get("skill"), next_command=nxt,
                     advice=" ".join((advice or "").split()), location=loc, source=source,
                     gb_id=gb_ids[0] if gb_ids else None, inner=inner, side=row.get("side", "compiler"),
                     suggested_fixes=suggested_fixes(message))


_RAISED_CALL = re.compile(r'The following call raised this error:\n\s*File "([^"]+)", line (\d+), in (\S+)\n\s*(.+)')
_CHECKS = re.compile(r"^\s*\d+\. (torch\._check\(.+\))\s*$", re.M)


def raised_call(message):
    """{file, line, function, code, checks} of the call torch names for a data-dependent guard ("The following call
    raised this error: File ..."), with its suggested torch._check lines; None without one (blind A/B batch 63: the
    call was transformers' torch.split(tensor, lengths.tolist()) under torch.export, and the report named only the
    program's line that called the model)."""
    m = _RAISED_CALL.search(message or "")
    if not m:
        return None
    return {"file": m.group(1), "line": int(m.group(2)), "function": m.group(3), "code": m.group(4).strip(),
            "checks": _CHECKS.findall(message[m.end():])[:2]}


_LOWERING_TARGET = re.compile(r"^\s*target: ([\w.]+)\s*$", re.M)


def lowering_origin(message, output=""):
    """Where the op an Inductor lowering failed on was traced from: a LoweringException's "target: aten.select.int"
    and the innermost frame of its "Found from :" stack (a library's line, e.g. transformers' modeling_bart.py, which
    the traceback's user frame, the compiled model's call, does not show). The message parsed from a traceback is cut
    before that stack: it is read from the run's output after the message's last LoweringException. None when
    neither says."""
    if "LoweringException" not in (message or ""):
        return None
    text = message if "Found from" in message else (output or "").rsplit("LoweringException", 1)[-1]
    if "Found from" not in text:
        return None
    frames = parse_py_frames(text.rsplit("Found from", 1)[1])
    if not frames:
        return None
    fr, target = frames[-1], _LOWERING_TARGET.search(message)
    return {"target": target.group(1) if target else None, "file": library_path(fr.file) or os.path.basename(fr.file), "line": fr.line,
            "function": fr.function, "code": fr.code}


# the machinery that traces (Dynamo, export, make_fx, fake tensors, AOTAutograd, higher-order ops): an unbacked
# symbol's guard raised with none of it on the stack was read by eager code
_TRACING_FRAME = re.compile(r"/torch/(?:_dynamo|export|_export|_subclasses|_functorch|_higher_order_ops|_inductor)/|"
                            r"/proxy_tensor\.py$")


def escaped_trace_value(row_id, message, frames):
    """Whether a guard on a data-dependent (unbacked) symbol, or a Python error naming a traced type (a SymFloat that
    json cannot write), was raised by eager code: nothing was tracing, so the tensor is one made while torch.export /
    torch.compile traced (a FakeTensor) that the program kept (blind A/B batch 52: forward hooks stored each layer's
    amax during non-strict export; float() on it failed afterwards)."""
    if not frames or not (row_id == "data_dependent_guard" or _SYMBOLIC_TYPE.search(message or "")):
        return False
    return not any(_TRACING_FRAME.search(f.file or "") for f in frames)


# a Python error naming a traced type: json.dumps or a formatter met a SymFloat kept from a trace (blind A/B batch 59:
# "TypeError: Object of type SymFloat is not JSON serializable" after hooks ran during torch.export)
_SYMBOLIC_TYPE = re.compile(r"\b(?:type|of) '?(?:torch\.)?(?:SymFloat|SymInt|SymBool|FakeTensor)\b")


# torch.func's transforms as their implementation frames name them in Dynamo's "from user code:" stack
_TRANSFORM_FRAME = re.compile(r'torch/_functorch/(?:vmap|eager_transforms)\.py", line \d+, in (\w+)')
# (jacrev, jacfwd and hessian show as wrapper_fn around vjp / vmap+jvp on 2.15: their own names never appear)
_TRANSFORMS = {"vmap_impl": "vmap", "grad_impl": "grad", "grad_and_value_impl": "grad", "jvp": "jvp",
               "_jvp_with_argnums": "jvp", "vjp": "vjp", "_vjp_with_argnums": "vjp", "linearize": "linearize"}


def functorch_transforms(message):
    """The torch.func transforms (outermost first: ["vmap", "grad"]) that Dynamo was tracing through when it
    raised, from the user stack after "from user code:". Blind A/B batch 51: an autograd.Function under
    vmap(grad) inside torch.compile; "that line alone" does not reproduce it and torch.compiler.disable
    inside the transform fails too."""
    if not message or "from user code:" not in message:
        return []
    out = []
    for fn in _TRANSFORM_FRAME.findall(message.split("from user code:", 1)[1]):
        t = _TRANSFORMS.get(fn)
        if t and (not out or out[-1] != t):
            out.append(t)
    return out


_CPP_DIAG_RE = re.compile(r"^(\S+\.(?:cpp|cxx|cc|h)):(\d+):(?:\d+:)? (error|note): (.+)$", re.M)


def cpp_diagnostics(output, limit=2):
    """The C++ compiler's first errors in a CppCompileError (g++/clang lines "<kernel>.cpp:189:26: error: ..."),
    each with its line of the generated kernel and the note after it: [{file, line, message, code, note,
    note_code}]. Blind A/B batch 14: the report said only "C++ compile error"; both arms grepped the output
    and read the generated file to see the duplicate declaration."""
    out, seen = [], set()
    diags = list(_CPP_DIAG_RE.finditer(output or ""))
    for i, m in enumerate(diags):
        if m.group(3) != "error" or m.group(4) in seen:
            continue
        seen.add(m.group(4))
        d = {"file": m.group(1), "line": int(m.group(2)), "message": m.group(4).strip(),
             "code": _src_line(m.group(1), int(m.group(2)))}
        nxt = diags[i + 1] if i + 1 < len(diags) else None
        if nxt and nxt.group(3) == "note" and nxt.group(1) == m.group(1):
            d.update(note=nxt.group(4).strip(), note_line=int(nxt.group(2)),
                     note_code=_src_line(nxt.group(1), int(nxt.group(2))))
        out.append(d)
        if len(out) >= limit:
            break
    return out


_STDIN_READ_RE = re.compile(r"\bsys\.stdin\b|(?<![\w.])input\s*\(|\bfileinput\.")


def _read_empty_stdin(exc, loc):
    """The program failed on a line that reads standard input, in a run that gave it none (no --stdin):
    it got '' or end of file there (int(input()), json.loads(sys.stdin.read()), ...)."""
    return bool(loc is not None and loc.code and _STDIN_READ_RE.search(loc.code)
                and not os.environ.get(proc.STDIN_VAR) and exc["type"] in (
                    "EOFError", "ValueError", "IndexError", "KeyError", "JSONDecodeError", "StopIteration"))


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


# a line where the program printed a torch.compile exception it caught: "ERROR FailOnRecompileLimitHit: ..."
# (torch.compile's own exceptions only: a caught IndexError of a skipped sample says nothing about compile)
_CAUGHT_RE = re.compile(r"\b(?:torch\._dynamo\.exc\.\w+|torch\._inductor\.exc\.\w+|FailOnRecompileLimitHit|"
                        r"RecompileLimitExceeded|RecompileError|Unsupported|BackendCompilerFailed|InductorError|"
                        r"CppCompileError|TorchRuntimeError|InternalTorchDynamoError|UserError|"
                        r"ConstraintViolationError)\b: ")


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
            from ..run.workers.bisect_step import last_words   # the program's own last line, not a torch warning
            tail = [last_words(stdout or "", stderr or "") or ""]
            # no traceback: exceptions the program caught and printed itself (a gate logging
            # "ERROR FailOnRecompileLimitHit: ..." per config; blind A/B batch 14) classify the failure
            exc_of = lambda block: {"full_type": f"exit {res.returncode}", "type": f"exit {res.returncode}",  # noqa: E731
                                    "message": "\n".join(tail), "frames": [], "block": block}
            err = make_error(exc_of("\n".join(tail)), output=out_all, target_str=target_str, cli=cli)
            caught = [ln.strip() for ln in out_all.splitlines() if _CAUGHT_RE.search(ln)][-20:]
            if err.category == "user_error" and caught:   # the last line says nothing: what it caught may
                hit = next((ln for ln in caught if knowledge.classify_error(ln)["id"] != "user_error"), None)
                if hit:
                    err = make_error(exc_of(hit), output=out_all, target_str=target_str, cli=cli)
                    err.message = f"{err.message}\n(the program caught and printed: {clip(hit, 200)})"
            row = knowledge.triage_row(err.category)
            if row.get("scan_output") and not any(re.search(p, err.message or "") for p in row.get("patterns") or []):
                # the row matched a line the program printed (a serving check that catches each failure and
                # prints it): show that line, the last one printed
                said = [ln.strip() for ln in out_all.splitlines() if any(re.search(p, ln) for p in row["patterns"])]
                if said:
                    err.message = f"{err.message}\n(the program printed: {clip(said[-1], 200)})"
            errors.append(err)
    # compile failures the program caught (or suppress_errors hid) still show in the trace
    for e in tr.of("compilation_metrics"):
        ft, fr = e.data.get("fail_type"), e.data.get("fail_reason")
        if not ft or "RecompileLimit" in ft or re.search(r"recompile.?limit", fr or "", re.I):
            continue
        if ft.rsplit(".", 1)[-1] == "Unsupported" and any(
                b.compile_id == e.compile_id for b in tr.artifacts("dynamo_graph_break_reason")):
            continue  # a graph break that made Dynamo skip the frame: reported under graph breaks
        # the same exception as one already reported: by type, or wrapped (InternalTorchDynamoError carries
        # the inner ValueError, whose message the trace records; blind A/B batch 9 saw it listed again as the
        # user's own error beside the "only fails compiled" verdict)
        inner = (fr or "").strip().splitlines()[0] if (fr or "").strip() else ""
        same = [x for x in errors if x.type == ft.rsplit(".", 1)[-1] or (len(inner) > 8 and inner in (x.message or ""))]
        if same:
            for x in same:
                if not x.compile_id:
                    x.compile_id = e.compile_id
            continue
        err = make_error({"full_type": ft, "type": ft.rsplit(".", 1)[-1], "message": fr or "", "frames": [],
                          "block": ""}, target_str=target_str, cli=cli, source="trace")
        if e.data.get("fail_user_frame_filename"):
            err.location = _loc(e.data["fail_user_frame_filename"], e.data.get("fail_user_frame_lineno"))
        err.compile_id = e.compile_id
        errors.append(err)
    return errors
