"""Shared by the export and aoti workers (runs in the worker process; imports torch lazily).

Loads a model target, classifies torch.export failures and finds the user's file:line."""
import json
import linecache
import os
import re
import traceback

from cdlib.decide import knowledge
from cdlib.decide.error_rows import suggested_fixes
from cdlib.errors import CliError

SCRIPTS_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def write_result(path, result):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=2, default=str)
    os.replace(tmp, path)


def first_line(text, n=400):
    text = str(text or "").strip()
    line = text.splitlines()[0] if text else ""
    return line if len(line) <= n else line[: n - 1] + "…"


def _torch_dir():
    import torch
    return os.path.dirname(os.path.abspath(torch.__file__)) + os.sep


_STD_DIRS = None


def is_user_file(filename):
    """A frame in the user's code: not torch, not our scripts, not the stdlib/site-packages."""
    global _STD_DIRS
    if not filename or filename.startswith("<"):
        return False
    filename = os.path.abspath(filename)
    if _STD_DIRS is None:
        import sysconfig
        dirs = {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
        _STD_DIRS = [d.rstrip(os.sep) + os.sep for d in dirs if d]
    if filename.startswith(_torch_dir()) or filename.startswith(os.path.join(SCRIPTS_DIR, "cdlib") + os.sep):
        return False
    if any(filename.startswith(d) for d in _STD_DIRS) or "site-packages" in filename or "dist-packages" in filename:
        return False
    return True


def location(filename, line, function=None):
    filename = os.path.abspath(filename)
    code = linecache.getline(filename, int(line)).strip() if line else ""
    return {"file": filename, "line": int(line) if line else None, "function": function, "code": code or None}


_FRAME_RE = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')


def location_from_text(text):
    """Innermost user frame named in an error message ('from user code:', 'User stack:' blocks)."""
    best = None
    for m in _FRAME_RE.finditer(str(text or "")):
        if is_user_file(m.group(1)):
            best = location(m.group(1), m.group(2), m.group(3))
    return best


def location_from_exc(exc):
    """Innermost user frame of the traceback, else of the message text, else of the chained cause."""
    seen = set()
    e = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        frames = traceback.extract_tb(e.__traceback__) if e.__traceback__ else []
        user = [f for f in frames if is_user_file(f.filename)]
        # Dynamo's real_stack / the message text name the traced user line (strict mode)
        rs = getattr(e, "real_stack", None)
        if rs:
            ru = [f for f in rs if is_user_file(f.filename)]
            if ru:
                return location(ru[-1].filename, ru[-1].lineno, ru[-1].name)
        loc = location_from_text(str(e))
        if loc:
            return loc
        if user:
            f = user[-1]
            return location(f.filename, f.lineno, f.name)
        e = e.__cause__ or e.__context__
    return None


def load_target(spec):
    """target.load with errors turned into a dict: {'error': {...}} or {'target': loaded}."""
    from cdlib.run import target
    try:
        return {"target": target.load(spec)}
    except CliError as e:
        return {"error": {"kind": "spec", "type": "CliError", "message": str(e)}}
    except SystemExit as e:
        return {"error": {"kind": "factory", "type": "SystemExit", "message": f"the target exited ({e.code})"}}
    except BaseException as e:  # noqa: BLE001 - user code may raise anything
        loc = None
        frames = traceback.extract_tb(e.__traceback__)
        user = [f for f in frames if is_user_file(f.filename)]
        if user:
            loc = location(user[-1].filename, user[-1].lineno, user[-1].name)
        return {"error": {"kind": "factory", "type": type(e).__name__, "message": first_line(e) or type(e).__name__,
                          "location": loc}}


# --------------------------------------------------------------------------------------------
# Classification of torch.export failures.
# Classes (stable ids used in JSON, the skill and the docs):
#   data_dependent_guard, constraint_violation, specialized_dim, missing_fake_kernel,
#   mismatched_fake_kernel, unsupported_python, graph_break, invalid_input, invalid_output, other

_UNSUPPORTED_PY = re.compile(r"skipped|unsupported|builtin|not supported|Attempted to call|"
                             r"Failed to trace|Uninitialized|generator|super\(\)|context manager", re.I)


def _gb_info(text):
    m = re.search(r"/gb/(gb\d{4})\.html", text)
    gb = m.group(1).upper() if m else None
    title = first_line(text)
    return gb, title


def classify_exception(exc, strict):
    """-> dict(cls, type, message, details...)."""
    from torch._dynamo import exc as dexc
    text = str(exc)
    name = type(exc).__name__
    out = {"type": name, "message": first_line(text), "details": {}}

    def is_cls(n):
        return any(type(x).__name__ == n for x in _chain(exc))

    if "GuardOnDataDependentSymNode" in name or is_cls("GuardOnDataDependentSymNode") \
            or "Could not guard on data-dependent expression" in text \
            or "Could not extract specialized integer from data-dependent expression" in text:
        m = re.search(r"data-dependent expression (.+?) \(unhinted", text) or \
            re.search(r"data-dependent expression (\S+)", text)
        out["cls"] = "data_dependent_guard"
        out["details"]["expr"] = m.group(1) if m else None
        return out
    if isinstance(exc, dexc.UserError):
        et = getattr(exc, "error_type", None)
        etn = getattr(et, "name", str(et))
        out["details"]["user_error_type"] = etn
        if etn == "CONSTRAINT_VIOLATION":
            fixes = suggested_fixes(str(text))
            out["details"]["suggested_fixes"] = fixes
            out["details"]["violations"] = [l.strip()[2:].strip() for l in text.splitlines()
                                            if l.strip().startswith("- ")]
            if "specialized it to be a constant" in text:
                out["cls"] = "specialized_dim"
                m = re.search(r"You marked (\w+) as dynamic but your code specialized it to be a constant \((\d+)\)", text)
                if m:
                    out["details"]["dim"] = m.group(1)
                    out["details"]["value"] = int(m.group(2))
            else:
                out["cls"] = "constraint_violation"
            return out
        if etn == "DYNAMIC_CONTROL_FLOW":
            out["cls"] = "data_dependent_guard"
            return out
        if etn == "INVALID_INPUT":
            out["cls"] = "invalid_input"
            return out
        if etn == "INVALID_OUTPUT":
            out["cls"] = "invalid_output"
            return out
        if etn == "DYNAMIC_DIM":
            out["cls"] = "specialized_dim" if "specializ" in text else "constraint_violation"
            return out
        out["cls"] = "unsupported_python"
        return out
    if is_cls("ConstraintViolationError"):
        out["cls"] = "specialized_dim" if "specialized it to be a constant" in text else "constraint_violation"
        out["details"]["suggested_fixes"] = suggested_fixes(str(text))
        out["details"]["violations"] = [l.strip()[2:].strip() for l in text.splitlines() if l.strip().startswith("- ")]
        return out
    tc = custom_op_class(f"{name}: {text}")
    if tc:  # the same custom-op classes as triage (knowledge/triage.yaml), with its fix
        out["details"]["triage_class"] = tc
        out["details"]["fix"] = " ".join(knowledge.triage_row(tc)["advice"].split())
    if tc == "custom_op_no_fake" or is_cls("UnsupportedOperatorException") \
            or "Operator does not support running with fake tensors" in text:
        out["cls"] = "missing_fake_kernel"
        m = re.search(r"CustomOpDef\(([\w:.]+)\)", text) or re.search(r"operator: ([\w:.]+)", text) \
            or re.search(r"(\w+::\w+)", text)
        out["details"]["op"] = m.group(1) if m else None
        return out
    if tc == "custom_op_bad_fake" or "fake kernel" in text.lower() and (
            "mismatch" in text.lower() or "incorrect" in text.lower()):
        out["cls"] = "mismatched_fake_kernel"
        return out
    if tc:  # no autograd formula / undeclared mutation
        out["cls"] = tc
        return out
    if isinstance(exc, dexc.Unsupported) or is_cls("Unsupported"):
        gb, title = _gb_info(text)
        out["details"]["gb_id"] = gb
        out["details"]["gb_type"] = getattr(exc, "gb_type", None) or title
        if gb == "GB0170" or "Data-dependent branching" in text or "generic_jump" in text:
            out["cls"] = "data_dependent_guard"
        elif _UNSUPPORTED_PY.search(title or ""):
            out["cls"] = "unsupported_python"
        else:
            out["cls"] = "graph_break"
        return out
    if isinstance(exc, dexc.TorchRuntimeError) or is_cls("TorchRuntimeError"):
        # Dynamo wraps fake-tensor failures; the inner text tells which
        inner = classify_text(text)
        if inner:
            out["cls"] = inner
            return out
    if re.search(r"Found <class [^>]*> in output|unrecognized type .* at output|output .* not a known type", text):
        out["cls"] = "invalid_output"
        return out
    if re.search(r"Found <class [^>]*> in input|unrecognized type .* at input|"
                 r"Expected `mod` to be an instance of `torch.nn.Module`", text):
        out["cls"] = "invalid_input"
        return out
    if "Expected input" in text or "pytree" in text.lower() and "input" in text.lower():
        out["cls"] = "invalid_input"
        return out
    if "output" in text.lower() and ("not supported" in text.lower() or "expected" in text.lower()) and \
            "return" in text.lower():
        out["cls"] = "invalid_output"
        return out
    inner = classify_text(text)
    row = knowledge.classify_error(f"{name}: {text}") if not inner else {}
    # an export row of the triage table (knowledge/triage.yaml) names what "other" would leave at "read the message"
    out["cls"] = inner or (row["id"] if row.get("skill") == "export" and row.get("id") != "export_error" else "other")
    return out


def custom_op_class(text):
    """The triage row id of a custom-op problem (custom_op_no_fake, custom_op_no_autograd,
    custom_op_bad_fake, custom_op_mutates_args) or None: one classifier for triage, export, aoti."""
    row = knowledge.classify_error(text)
    return row["id"] if row.get("side") == "custom_op" else None


def classify_text(text):
    if "no fake impl registered" in text or "missing a fake kernel" in text:
        return "missing_fake_kernel"
    if "Could not guard on data-dependent expression" in text:
        return "data_dependent_guard"
    if "specialized it to be a constant" in text:
        return "specialized_dim"
    if "Constraints violated" in text:
        return "constraint_violation"
    return None


def _chain(exc):
    seen = []
    e = exc
    while e is not None and e not in seen:
        seen.append(e)
        e = e.__cause__ or e.__context__
    return seen


# --------------------------------------------------------------------------------------------
# draft_export

_DRAFT_CLS = {
    "MISSING_FAKE_KERNEL": "missing_fake_kernel",
    "DATA_DEPENDENT_ERROR": "data_dependent_guard",
    "GUARD_ADDED": "constraint_violation",
    "MISMATCHED_FAKE_KERNEL": "mismatched_fake_kernel",
}


def draft_failures(ep):
    """ep._report -> [dict(cls, failure_type, expr, location, ...)]."""
    report = getattr(ep, "_report", None)
    if report is None:
        return []
    names = {}
    try:
        from torch._logging import structured
        names = {v: k for k, v in structured.INTERN_TABLE.items()}
    except Exception:
        pass
    names.update(getattr(report, "str_to_filename", {}) or {})
    out = []
    for f in report.failures:
        ft = getattr(f.failure_type, "name", str(f.failure_type))
        data = f.data if isinstance(f.data, dict) else {}
        item = {"cls": _DRAFT_CLS.get(ft, "other"), "failure_type": ft, "xfail": bool(getattr(f, "xfail", False))}
        if "expr" in data:
            item["expr"] = str(data["expr"])
        if "op" in data:
            item["op"] = str(data["op"])
        if "reason" in data:
            item["reason"] = first_line(data["reason"])
        if "occurrences" in data:
            item["occurrences"] = data["occurrences"]
        if "symbol_to_sources" in data:
            item["symbols"] = {str(k): str(v) for k, v in (data["symbol_to_sources"] or {}).items()}
        if ft == "GUARD_ADDED" and re.match(r"^Eq\(\w+, \d+\)$", item.get("expr", "")):
            item["cls"] = "specialized_dim"
        loc = None
        for fr in data.get("user_stack") or []:
            fn = names.get(fr.get("filename"), fr.get("filename"))
            if isinstance(fn, str) and is_user_file(fn):
                loc = location(fn, fr.get("line"), fr.get("name"))
        if loc is None and item.get("op"):
            loc = custom_op_location(item["op"], fake=(ft == "MISMATCHED_FAKE_KERNEL"))
            if loc:
                item["location_kind"] = "register_fake" if ft == "MISMATCHED_FAKE_KERNEL" else "custom_op definition"
        item["location"] = loc
        out.append(item)
    return out


def custom_op_location(op, fake=False):
    """'ns.name.default' or 'ns::name' -> where the custom op (or its fake kernel) is defined."""
    import inspect
    m = re.match(r"^(\w+)(?:::|\.)(\w+)", op or "")
    if not m:
        return None
    try:
        from torch._library.custom_ops import OPDEFS
        opdef = OPDEFS.get(f"{m.group(1)}::{m.group(2)}")
    except Exception:  # noqa: BLE001
        return None
    fn = getattr(opdef, "_abstract_fn" if fake else "_init_fn", None) if opdef is not None else None
    if fn is None and opdef is not None:
        fn = getattr(opdef, "_init_fn", None)
    try:
        fn = inspect.unwrap(fn)
        path = inspect.getsourcefile(fn)
        line = inspect.getsourcelines(fn)[1]
    except (TypeError, OSError):
        return None
    if not path or not is_user_file(path):
        return None
    # point at the `def` line, not a decorator
    lines = open(path).read().splitlines()
    while line - 1 < len(lines) and not lines[line - 1].lstrip().startswith("def "):
        line += 1
    return location(path, line, fn.__name__)
