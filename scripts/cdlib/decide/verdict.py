"""User bug or compiler bug, decided by one run, not a guess.

When the compiled run fails (exit != 0, exception, signal; not on timeout), triage re-runs the
program once with compilation off: the startup hook sets torch.compiler.set_stance("force_eager")
right after the program imports torch (TORCH_COMPILE_DISABLE=1 is not used: on torch 2.14 it makes
fullgraph=True functions raise "found no compiled frames", a different failure). Then the two
failures are compared (exception type, normalized message, innermost user frame) and the verdict
goes in Report.verdict (a JSON-safe dict):

  fails_eager_too          the same failure without torch.compile: a bug in the program at file:line
  compile_only             the program runs without torch.compile: compiler side, a torch.compile
                           limitation, or a custom-op registration only tracing needs
  different_failure_eager  both fail, differently: look at both
  not_sure                 the eager run timed out or gave nothing to compare
  before_compile           failed before torch.compile ever ran (syntax/import error, ...): no re-run
  export_failure           torch.export raised (the compile stance does not affect export): no re-run
  saved_program            a saved program raised when loaded or called: an AOTInductor package, or
                           torch.export.load (no tracing; the compile stance changes neither): no re-run
  not_checked              --no-eager-check
  needs_input              the program read standard input and got none (or too little): no re-run
  no_torch                 the interpreter that ran the program cannot import torch: no re-run
No torch import here."""
import os
import re

from . import printed
from ..run import proc

KINDS = ("fails_eager_too", "compile_only", "different_failure_eager", "not_sure", "before_compile",
         "export_failure", "saved_program", "not_checked", "needs_input", "no_torch")
USER_SIDE = ("fails_eager_too", "before_compile")   # the next step is to fix the program, not bisect

# ---- the innermost real message -----------------------------------------------------------

_FAKE_HEAD = "Dynamo failed to run FX node with fake tensors:"
_FAKE_GOT_RE = re.compile(r"\): got (\w+)\((['\"])(.*?)(?:\2\)\s*(?:\n|$)|\n\s*Hint:|\n\s*Developer debug|\n\s*\n|$)", re.S)
_BACKEND_RE = re.compile(r"backend='([^']*)' raised:\s*\n?([A-Za-z_][\w.]*)(?::\s?(.*))?", re.S)
_FAKE_TENSOR_RE = re.compile(r"FakeTensor\(\.\.\.,(?:[^()<>]|\([^()]*\)|<[^<>]*>)*\)")


def inner_error(etype, message):
    """The real failure inside torch.compile's wrappers -> dict(type, message, op?, inputs?) or None.
    TorchRuntimeError "Dynamo failed to run FX node with fake tensors: call_function <op>(*(FakeTensor(
    ..., size=(2, 5)), ...)): got RuntimeError('...')" -> the op, its input shapes/dtypes, the inner
    error; BackendCompilerFailed "backend='inductor' raised: X: msg" -> X: msg."""
    msg = message or ""
    head = msg.split("\n\nfrom user code:")[0]
    i = head.find(_FAKE_HEAD)
    if i >= 0:
        rest = head[i + len(_FAKE_HEAD):].strip()
        g = _FAKE_GOT_RE.search(rest)
        call = rest[:g.start()] if g else rest.split("\n")[0]
        op = re.sub(r"^call_\w+\s+", "", call).split("(*(")[0].strip()
        args = call[len(op):] if call.find(op) >= 0 else call
        imsg = g.group(3).replace("\\n", "\n").replace("\\'", "'").strip() if g else ""
        inputs = []
        for fm in _FAKE_TENSOR_RE.finditer(args):
            body = fm.group(0)
            size = re.search(r"size=\(([^)]*)\)", body)
            dtype = re.search(r"dtype=torch\.(\w+)", body)
            dev = re.search(r"device='([^']*)'", body)
            inputs.append(f"{dtype.group(1) if dtype else 'float32'}[{(size.group(1) if size else '?').rstrip(',').replace(' ', '')}]"
                          + (f"@{dev.group(1)}" if dev and dev.group(1) != "cpu" else ""))
        return {"type": g.group(1) if g else "RuntimeError", "message": imsg, "op": _short_op(op), "inputs": inputs}
    m = _BACKEND_RE.search(head)
    if m:
        itype = m.group(2).rsplit(".", 1)[-1]
        imsg = (m.group(3) or "").strip()
        nested = inner_error(itype, imsg)
        if nested:
            return nested
        return {"type": itype, "message": imsg, "backend": m.group(1)}
    m = re.match(r"^([A-Za-z_][\w.]*(?:Error|Exception)): (.*)", head.strip(), re.S)
    if m and etype in ("InductorError", "InternalTorchDynamoError", "TorchRuntimeError"):
        return {"type": m.group(1).rsplit(".", 1)[-1], "message": m.group(2).strip()}
    return None


def _short_op(op):
    m = re.search(r"<function (\w+) at 0x", op) or re.search(r"<(?:built-in (?:method|function) )?(\w+)(?: of [^>]*)?>", op)
    if m:
        return m.group(1)
    m = re.search(r"<OpOverload\(op='([^']+)'", op) or re.search(r"CustomOpDef\(([\w:.]+)\)", op)
    return m.group(1) if m else op.strip("<>")


# ---- comparing two failures ---------------------------------------------------------------

def _norm(message):
    first = next((ln for ln in (message or "").splitlines() if ln.strip()), "")
    s = re.sub(r"FakeTensor\([^)]*\)", "T", first)
    s = re.sub(r"0x[0-9a-f]+", "#", s)
    s = re.sub(r"\d+(\.\d+)?", "#", s)
    return " ".join(s.lower().split())[:200]


def signature(exc, location=None):
    """What to compare of one failure: the innermost real exception and the user frame."""
    if not exc:
        return None
    inner = inner_error(exc["type"], exc["message"]) or {}
    etype = inner.get("type") or exc["type"]
    msg = inner.get("message") or exc["message"]
    loc = f"{location.file}:{location.line}" if location is not None and location.line else None
    func = (location.file, location.function) if location is not None and location.function else None
    return {"type": etype, "message": msg, "norm": _norm(msg), "location": loc, "fake": bool(inner.get("op")),
            "function": func}


# an index outside a tensor, as each layer words it: eager's IndexError ("index out of range in self", "index 5 is
# out of bounds for dimension 0"), Inductor's generated bounds check ("index out of bounds: 0 <= tmp2 < 29L", C++
# and Triton); a bare CUDA "device-side assert triggered" says no more than that an assert fired, and stays apart
_OUT_OF_BOUNDS_RE = re.compile(r"index out of range in self|\bindex out of bounds\b|\bis out of bounds for dimension\b")


def same_failure(a, b):
    """True when two signatures describe the same failure. Types must agree; then the normalized
    first message line (numbers masked), or the user frame when torch words the two differently
    (the fake-tensor and the real kernel raise from different code). An index out of bounds is one
    failure however the layer that checks it words it, when both fail in the same function of the program
    (blind A/B batch 18: Inductor's C++ bounds check vs the embedding's IndexError, from -100 padding in the
    input ids, was "fails differently"; an out-of-bounds index elsewhere in the eager run is another failure)."""
    if not a or not b:
        return False
    if _OUT_OF_BOUNDS_RE.search(a["message"] or "") and _OUT_OF_BOUNDS_RE.search(b["message"] or "") \
            and a.get("function") and a.get("function") == b.get("function"):
        return True
    if a["norm"] and a["norm"] == b["norm"]:  # same words; the type may differ (fake tensors raise RuntimeError
        return True                           # where the eager kernel raises IndexError)
    if a["type"] != b["type"]:
        return bool(a.get("fake") and a["location"] and a["location"] == b["location"])
    if a["norm"] and b["norm"] and (a["norm"] in b["norm"] or b["norm"] in a["norm"]):
        return True
    return bool(a["location"] and a["location"] == b["location"])


# ---- the eager re-run ---------------------------------------------------------------------

# the program's own set_stance(...) (e.g. "fail_on_recompile") must not switch compilation back on
KEEP_EAGER = """
_cd_set_stance = torch._dynamo.set_stance   # torch.compiler.set_stance calls this one
def _cd_keep_eager(*args, **kwargs):
    return _cd_set_stance("force_eager")
torch.compiler.set_stance = _cd_keep_eager
torch._dynamo.set_stance = _cd_keep_eager
"""


def eager_env(run_dir):
    return proc.startup_env(run_dir, [{"stance": "force_eager"}, {"code": KEEP_EAGER}], name="eager_check")


def run_eager(argv, run_dir, *, timeout, env_add=None, name="eager_check"):
    """Run the program once more, unmodified, with compilation off (output in <run_dir>/<name>.std*). -> ProcResult."""
    env = {"PYTHONUNBUFFERED": "1", "TORCH_TRACE": None, "PYTHONFAULTHANDLER": "1"}  # a crash names its line
    env.update(env_add or {})
    env.update(eager_env(run_dir))
    pp = (env_add or {}).get("PYTHONPATH")
    if pp:  # keep the caller's PYTHONPATH after the startup hook's dir
        env["PYTHONPATH"] = env["PYTHONPATH"] + os.pathsep + pp
    return proc.run(argv, env_add=env, timeout=timeout, stdout_path=os.path.join(run_dir, f"{name}.stdout"),
                    stderr_path=os.path.join(run_dir, f"{name}.stderr"))


_FAULT_FRAME_RE = re.compile(r'^\s*File "([^"]+)", line (\d+) in (\S+)', re.M)


def _exc_of(res, stderr, parse_exception):
    exc = parse_exception(stderr) if stderr else None
    if exc is None and res.returncode not in (0, None):
        kind = res.signal or f"exit {res.returncode}"
        exc = {"full_type": kind, "type": kind, "message": "", "frames": [], "block": ""}
    return exc


_PACKAGE_FILE = "/torch/export/pt2_archive/_package.py"   # the .pt2 format: AOTICompiledModel, load_pt2, package_pt2


def _saved_program(exc):
    """"aoti" when the exception came out of calling an AOTInductor package (AOTICompiledModel.__call__ -> its loader's
    boxed_run), "aoti_load" out of loading one (torch._inductor.aoti_load_package / package.load_package), "module" out of
    ep.module()'s train/eval stubs, "load" when it came
    out of torch.export.load (its deserializer in torch/_export/serde), else None. Both run code in torch/export/, yet
    no export traced anything (blind A/B batch 46: "torch.export raised" for a package called with a mask it was not
    exported with, and for torch.export.load called from several threads)."""
    frames = [((f.file or "").replace("\\", "/"), f.function) for f in (exc or {}).get("frames", [])]
    if any(path.endswith(_PACKAGE_FILE) and fn == "__call__" for path, fn in frames):
        return "aoti"
    if any("/torch/_inductor/" in path and fn in ("aoti_load_package", "load_package") for path, fn in frames):
        return "aoti_load"
    if any(path.endswith("/torch/export/__init__.py") and fn == "load" for path, fn in frames):
        return "load"
    if any(path.endswith("/torch/export/exported_program.py") and fn in ("_train", "_eval") for path, fn in frames):
        return "module"   # ep.module()'s train/eval stubs (blind A/B batch 47: .eval() after load); not _unlift.py,
        # which torch.export's re-export and AOTInductor's compile also run (review)
    if re.match(r"Guard failed: ", (exc or {}).get("message") or "") \
            and any(path.endswith("/torch/fx/graph_module.py") for path, _ in frames):
        return "module"   # ep.module()'s input guards: a size the export made a constant (no export in this run)
    return None


_SAVED_WORDS = {   # _saved_program's kind -> (what raised, why no eager re-run)
    "aoti": ("an AOTInductor package raised when called", "code built ahead of time"),
    "aoti_load": ("loading an AOTInductor package raised", "code built ahead of time"),
    "load": ("torch.export.load raised", "loading a saved ExportedProgram: no tracing ran"),
    "module": ("the module of an ExportedProgram (ep.module()) raised", "its graph, input shapes and mode were fixed "
                                                                       "at export: no tracing ran")}


def _is_export(exc, err):
    if _saved_program(exc):
        return False
    text = (exc or {}).get("message", "") + "\n" + (exc or {}).get("block", "")
    return bool(re.search(r"torch/export/|occurred when calling torch\.export\.export|torch\._export", text)) \
        or any("/torch/export/" in (f.file or "") for f in (exc or {}).get("frames", []))


def decide(err, exc, *, used_compile, run_eager_fn=None, eager_res=None, eager_stderr=None,
           parse_exception=None, innermost_user=None, where=None):
    """The verdict for the first error of a failed compiled run.
    err: its ErrorInfo; exc: parse_exception() of the compiled stderr (None for a signal/exit).
    run_eager_fn() -> (ProcResult, stderr) runs the eager check when needed; or pass eager_res and
    eager_stderr (recorded). Returns the verdict dict."""
    loc = err.location
    at = where(loc) if where and loc is not None else (f"{loc.file}:{loc.line}" if loc is not None else None)
    saved = _saved_program(exc) if exc is not None else None
    if saved:
        what, why = _SAVED_WORDS[saved]
        return {"kind": "saved_program", "location": at, "saved": saved, "eager": None,
                "summary": f"{what}" + (f" at your line {at}" if at else "")
                           + f" ({why}; the compile stance does not change it, so no eager re-run)"}
    if not used_compile and (exc is None or not _is_export(exc, err)):
        return {"kind": "before_compile", "location": at,
                "summary": "failed before any compiled code ran: a bug in your program" + (f" at {at}" if at else ""),
                "eager": None}
    if exc is not None and _is_export(exc, err):
        return {"kind": "export_failure", "location": at,
                "summary": "torch.export raised (export has stricter rules than eager and is not affected by "
                           "the compile stance; no eager re-run)" + (f"; your call at {at}" if at else ""),
                "eager": None}
    if eager_res is None:
        if run_eager_fn is None:
            return {"kind": "not_checked", "location": at, "eager": None,
                    "summary": "not checked (--no-eager-check): re-run without torch.compile to tell a bug in "
                               "your program from a compiler problem"}
        eager_res, eager_stderr = run_eager_fn()
    eager = {"exit_code": eager_res.returncode, "signal": eager_res.signal, "timed_out": eager_res.timed_out,
             "duration_s": eager_res.duration_s}
    if eager_res.timed_out:
        return {"kind": "not_sure", "location": at, "eager": eager,
                "summary": "not sure: the run without torch.compile timed out"}
    if eager_res.returncode == 0:
        return {"kind": "compile_only", "location": at, "eager": eager,
                "summary": f"only fails compiled: the same program runs without torch.compile "
                           f"(exit 0 in {eager_res.duration_s:.1f} s)"}
    eexc = _exc_of(eager_res, eager_stderr, parse_exception)
    eloc = innermost_user(eexc["frames"]) if eexc and innermost_user else None
    if eloc is None and eager_res.signal and innermost_user:  # faulthandler: most recent call first
        from ..report import Location
        frames = [Location(file=m.group(1), line=int(m.group(2)), function=m.group(3))
                  for m in _FAULT_FRAME_RE.finditer(eager_stderr or "")]
        eloc = innermost_user(frames[::-1])
    if eloc is None and eexc and eexc.get("message") and innermost_user:
        from ..read.frames import parse_py_frames
        eloc = innermost_user(parse_py_frames(eexc["message"]))
    esig, csig = signature(eexc, eloc), signature(exc, loc)
    if exc is None:  # compiled run died of a signal / bare exit: compare the way it ended
        csig = {"type": err.type, "message": "", "norm": "", "location": None}
    eager.update({"type": esig["type"] if esig else None, "message": (esig or {}).get("message", "")[:600],
                  "frame": {"file": eloc.file, "line": eloc.line, "function": eloc.function} if eloc else None,
                  "location": (where(eloc) if where and eloc is not None else (esig or {}).get("location"))})
    same_end = exc is None and (eager_res.signal or f"exit {eager_res.returncode}") == err.type
    if same_failure(csig, esig) or same_end or (exc is None and eexc is not None and esig["type"] == err.type):
        at_e = eager["location"] or at
        return {"kind": "fails_eager_too", "location": at_e, "eager": eager,
                "summary": "fails the same way without torch.compile: a bug in your program"
                           + (f" at {at_e}" if at_e else "")}
    if re.search(r"torch/_higher_order_ops/|Please convert all Tensors to FakeTensors", eager_stderr or ""):
        # blind A/B batch 24: a model's scan (torch._higher_order_ops) fails with compiling switched off by torch
        # (force_eager / TORCH_COMPILE_DISABLE) when its step function uses an outside tensor, where the program
        # without any torch.compile runs: "fails differently" sent the agent to an eager bug that plain eager has not
        return {"kind": "not_sure", "location": at, "eager": eager,
                "summary": "not sure: the run with compiling switched off by torch failed inside torch's higher-order "
                           f"ops ({esig['type'] if esig else 'exit'}; torch/_higher_order_ops: scan, cond, while_loop "
                           "still trace their functions then), which says nothing of your code: compare with a run "
                           "whose torch.compile call is removed from the program"}
    return {"kind": "different_failure_eager", "location": at, "eager": eager,
            "summary": f"fails differently without torch.compile ({esig['type'] if esig else 'exit'}"
                       f"{': ' + _first(esig['message']) if esig and esig['message'] else ''}); "
                       "compare both before blaming either side"}


# a failure on a Python value, not on numbers: rounding cannot make a None or a wrong type
_PYTHON_VALUE_RE = re.compile(r"'NoneType' object|NoneType|non-iterable|object is not (?:subscriptable|iterable|"
                              r"callable)|has no len\(\)|unexpected type|must be \w+, not |"
                              r"but got (?:torch\.Size|tuple|list|int|float|bool|str|NoneType)\b")


def python_value_error(err):
    """True when the error is about a Python object (None, a wrong type), not a tensor's numbers: torch's
    accuracy check cannot explain it (it cost a generator case 61 s in the blind A/B)."""
    return err.type in ("AttributeError", "TypeError", "ValueError") and bool(_PYTHON_VALUE_RE.search(err.message or ""))


# a failing check that measures time, not numbers: a latency SLO, a step-time budget (blind A/B batch 59: "SLO GATE
# FAILED: 1 request(s) over 250 ms after warm-up" after a recompile; the report ran the accuracy check and Dynamo alone)
# a timing word, not a unit alone: "onset drifted by 2.7e-04 ms" is a value check (review)
_TIMING_FAILURE = re.compile(r"(?i)" + printed.TIMING_WORDS + r"|\bslo\b|too slow|step.?time|time budget|"
                             r"\bover \d[\d.]* ?(?:ms|s|sec|seconds)\b|\btook \d")


_COUNT_FAILURE = re.compile(r"(?i)\b\d+\s+(?:graphs?|recompil\w*|compil(?:es|ations)|graph[ _]breaks?)\b|"
                            r"\b(?:graphs?|graph_count|graph[ _]breaks?|recompil\w*|compiles?)\s*[=:]\s*\d+")
# words of a check of numbers: a message that counts graphs beside them is about the numbers (review of batch 66:
# "compiled logits drift after recompile ...: max abs diff 0.5")
_NUMERIC_CHECK = re.compile(r"(?i)\bdiff|mismatch|drift|\batol\b|\brtol\b|allclose|not close|\berror\b|\bnan\b|"
                            r"accuracy|differ")


def compile_count_failure(err, rep):
    """True when the failing check counts what torch.compile did (graphs, recompiles, graph breaks: a CI gate on
    a compile budget), and the run has recompiles or graph breaks for it to count: not the model's numbers."""
    text = err.message or ""
    return bool(_COUNT_FAILURE.search(text)) and not _NUMERIC_CHECK.search(text) \
        and bool(rep.recompiles or rep.graph_breaks)


def timing_failure(err):
    """True when the failing check measures time (a latency SLO, a step-time budget), not the model's numbers:
    torch's accuracy check cannot explain it; a compile inside the timed part can."""
    from . import accuracy_judge
    text = err.message or ""
    return bool(_TIMING_FAILURE.search(text)) and not accuracy_judge.is_output_check(err.type, text)


def needs_input(at):
    """The verdict when the program hit the end of its standard input (knowledge row stdin_eof)."""
    given = os.environ.get(proc.STDIN_VAR)
    where = f" at {at}" if at else ""
    summary = (f"the program read past the end of its input ({given}){where}: give it the whole input"
               if given else f"not a bug: the program reads standard input{where} and the run gave it none "
                             "(every run gets an empty one); give the input with --stdin FILE")
    return {"kind": "needs_input", "location": at, "summary": summary, "eager": None}


def no_torch(python, at):
    """The verdict when the program's interpreter cannot import torch (knowledge row torch_missing)."""
    return {"kind": "no_torch", "location": at, "eager": None,
            "summary": f"not a bug in your program: {python or 'its Python'} cannot import torch"
                       + (f" ({at})" if at else "") + "; run it with the Python that has torch"}


def _first(s, n=160):
    ln = next((x for x in (s or "").splitlines() if x.strip()), "")
    return ln if len(ln) <= n else ln[:n - 1] + "…"
