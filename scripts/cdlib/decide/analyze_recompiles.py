"""Recompilations of a trace -> report.FunctionRecompiles: guard failures (parsed in guard_failures.py) into causes
(with the chain of frames from the user's line to the guard), which causes are expected, and which sizes the program
made static (specializations.py). The compiled frames' names (function_info) are shared with the graph-break half (analyze_dynamo).
No torch import."""
import json
import os
import re

from . import knowledge
from .guard_failures import parse_guard_failure, split_reasons
from .specializations import (lowering_specializations, size_pinned_by_float, specializations, stopped_recompiles,
                              torch_op_specializations)
from ..read.frames import chain, is_user_file, library_of, library_path, loc as _loc
from ..report import FunctionRecompiles, Location, Recompile
from .analyze_dynamo import wrapper_break_sites
from .wrappers import split_by_wrapper
from ..cmdline import clip


RESUME_RE = re.compile(r"^torch_dynamo_resume_in_(.+)_at_(\d+)$")


def function_info(tr, frame_id):
    """(name, Location, wrapper) of a compiled frame, mapped to user code when it is a torch wrapper."""
    name, file, line = frame_code(tr, frame_id)
    starts = [e for e in tr.of("dynamo_start") if e.meta.get("frame_id") == frame_id]
    frames = tr.frames(starts[0].data.get("stack")) if starts else []
    if name is None and frames:
        file, line, name = frames[-1][0], frames[-1][1], frames[-1][2]
    m = RESUME_RE.match(name or "")
    if m:  # the rest of a function after a graph break
        name = f"{m.group(1)} (resumed after the graph break at line {m.group(2)})"
    if file and not is_user_file(file):
        callers = [f for f in frames[:-1] if is_user_file(f[0])]
        lib = library_of(file)
        where = _short_torch_path(file) if lib == "torch" else (chain([Location(file=file)])[0].display or file)
        wrapper = (f"{name} in {where} (torch wrapper, e.g. torch.compile(module))" if lib == "torch"
                   else f"{name} in {where} ({lib} code)")
        if callers:
            c = callers[-1]
            if is_torch_work(file):   # torch's own code (an optimizer's step), not the wrapper of a compiled module
                return (f"{name} ({where}, called at {os.path.basename(c[0])}:{c[1]})",
                        _loc(c[0], c[1], c[2], c[3]), f"{name} in {where} (torch code)")
            return (f"{name} (compiled module called at {os.path.basename(c[0])}:{c[1]})",
                    _loc(c[0], c[1], c[2], c[3]), wrapper)
        return name, _loc(file, line, name), wrapper
    return name or f"frame {frame_id}", _loc(file or "?", line, name), None


_TORCH_WORK = ("torch/optim/", "torch/nn/utils/clip_grad")


def is_torch_work(path):
    """A torch file that does the work itself when compiled (an optimizer's step, gradient clipping), not a
    wrapper around user code (nn.Module's call, torch.compile's frame)."""
    return library_of(path or "") == "torch" and _short_torch_path(path).startswith(_TORCH_WORK)


def frame_code(tr, frame_id):
    """(co_name, co_filename, co_firstlineno) of a compiled frame from its compilation_metrics, else Nones."""
    e = next((e for e in tr.of("compilation_metrics") if e.meta.get("frame_id") == frame_id and e.data.get("co_name")),
             None)
    return (e.data["co_name"], e.data.get("co_filename"), e.data.get("co_firstlineno")) if e else (None, None, None)


def _short_torch_path(path):
    """'torch/optim/adam.py': the path inside site-packages (a venv under /opt/torch/... has another /torch/)."""
    rel = library_path(path or "")
    if rel and rel.startswith("torch/"):
        return rel
    i = (path or "").replace("\\", "/").rfind("/torch/")
    return path[i + 1:] if i >= 0 else path


LIMIT_RE = re.compile(r"hit config\.(?:recompile_limit|cache_size_limit) \((\d+)\)\s*\n.*?function: '([^']+)' \(([^)]+):(\d+)\)", re.S)
_FLOAT_RE = re.compile(r"== -?(\d+\.\d*(e-?\d+)?|inf|nan)\s*$")


_RANGE_RE = re.compile(r"^2 <= (?P<src>\S+\.size\(\)\[\d+\])(?: <= (?P<hi>\d+))?")
_MISMATCH_RE = re.compile(r"^tensor '(?P<name>[^']+)' size mismatch at index (?P<dim>\d+)\. expected \d+, actual (?P<actual>\d+)")


def _expected(kind, guard, primary, limit_hit, static=False, actual=None):
    """Why a cause is a one-time recompile torch expects (verified on 2.14: automatic dynamic turns a
    size / int / float dynamic after its first change; one grad-mode, requires_grad or layout switch; one change in
    the number of keyword arguments, e.g. generate's prefill then decode calls), else None. static: the
    function was compiled with automatic dynamic off (dynamic=False), where a second size is a second graph.
    actual: the size that failed a range guard (from the size-mismatch failure beside it)."""
    if limit_hit:
        return None
    if primary == 0:
        return "failed only against an older cache entry; a newer entry already accepts the new value"
    if primary > 1:
        return None
    bound = _RANGE_RE.match((guard or "").strip())
    if kind == "shape" and bound and bound["hi"] and actual is not None and actual > int(bound["hi"]):
        # the upper bound of a dynamic dim, from the program (a slice `x[:, :256]`, a table of 256 rows): a larger
        # size gets one graph of its own (blind A/B batch 38: "stop the recompiles" for a slice bound and the
        # automatic-dynamic recompile before it; the program was fine)
        return (f"a size above {bound['hi']}, the upper bound the dynamic graph assumed from the line shown (a slice, "
                "a table size): one graph for sizes above it, then stable; if such sizes are not meant to come, that "
                "line is where the program limits them")
    if kind == "shape" and bound:
        # the lower bound of a dynamic dim (marked, or made dynamic by automatic dynamic): a size of 0 or 1
        # arrived (blind A/B batch 17: a server warmed up at batch 8, a single request; labelled automatic dynamic)
        return ("0/1 specialization: a size of 0 or 1 always gets a graph of its own, even on a dim marked dynamic "
                "(the dynamic graph assumes a size >= 2): warm up at size 1 too, or pad such inputs to 2")
    if kind == "shape":
        return ("dynamic=False: a graph per size, and two sizes so far" if static else
                "automatic dynamic: after a dim's first new size torch recompiles it as dynamic (once)")
    if kind == "container_length" and re.search(r"\blen\((?:L\[')?kwargs(?:'\])?\)", guard or ""):
        return ("one change in the number of keyword arguments (e.g. generate's prefill call, then its decode "
                "calls): one graph each")
    if kind in ("python_int", "python_float", "graph_break_value") or (kind == "module_attribute" and _FLOAT_RE.search(guard)):
        return "automatic dynamic: after its first change torch recompiles the number as a dynamic input (once)"
    if kind == "module_attribute" and re.search(r"\bis None\s*$", guard or ""):
        return ("set during the first call: the attribute was None when first compiled and got its value in that "
                "call (transformers sets config.problem_type on the first forward); one recompile, then stable")
    if kind == "python_bool":
        # (blind A/B batch 37: a log_stats flag first True at step 49; compare said "stop the recompiles")
        return ("one switch of a bool argument: one graph per value (two at most), then stable; flipping back and "
                "forth reuses both")
    if kind == "grad_mode":
        return "one switch between grad and no_grad / inference mode: one graph per mode"
    if kind == "stride":
        # (blind A/B batch 33: a recurrent state, fresh on the first call and a slice of the scan's output after;
        # compare called the fixed program "mixed" for it and offered `fix`)
        return ("one switch of an input's memory layout (e.g. a fresh tensor on the first call, a slice or view of an "
                "output after): one graph each, then stable; .contiguous() where it is made avoids even that")
    if kind == "requires_grad":
        # (blind A/B batch 33: a recurrent state fed back with its graph read as harmless; backward then failed
        # "a second time")
        return ("one switch between an input with and one without requires_grad: one graph each (e.g. a layer "
                "compiled on its own gets the raw input first, then activations that require grad). If that input "
                "is the previous call's output fed back (a recurrent state, a cache), it brings the previous "
                "step's graph along: detach it between steps")
    return None


_GRAPH_ASSIGN_RE = re.compile(r'(\w+)(?:: ("[^"]*"))? = (.*)')


def _tensor_in_graph(tr, frame_id, expr):
    """Whether `expr` (`self.bias_table`, `table`) is a tensor input of the function's Dynamo graphs (a buffer, a
    parameter or a tensor argument: its placeholder is in the graph), not a container of modules or tensors, whose
    items' placeholders carry an index (`..._modules_heads_modules_0_...`, `l_table_0_`). Indexing a tensor with an
    int is an op that a dynamic int keeps symbolic (review of 0.33.102: a buffer row picked by a slot number)."""
    last = re.sub(r"\W", "_", expr.split(".")[-1])
    # l_ (a local or an attribute of self) or g_ (a module global: review of 0.33.110)
    pat = re.compile(rf"\b[lg]_(?:\w*_(?:buffers|parameters)_|self_)?{re.escape(last)}_\b", re.I)
    return any(pat.search(e.payload or "") for e in tr.of("dynamo_output_graph")
               if e.meta.get("frame_id") == frame_id)


def float_pinned_at(tr, frame_id, name):
    """(Location, op) of the first call in the function's Dynamo graphs that takes a value computed from the
    dynamic float argument `name` where only a Python number will do (not arithmetic: torch.full_like(x, 1 - p)),
    which makes Dynamo put the exact value back (a `== value` guard; blind A/B batch 40: a masking ratio on a
    schedule recompiled on every step and the guard's line was the branch before it); None when there is none."""
    from ..read.inductor_info import FILE_COMMENT_RE
    ph = "l_" + re.sub(r"\W", "_", name) + "_"
    for e in tr.of("dynamo_output_graph"):
        if e.meta.get("frame_id") != frame_id or not e.payload or f"{ph}.item()" not in e.payload:
            continue
        syms, at = set(), None
        for line in e.payload.splitlines():
            m = FILE_COMMENT_RE.search(line)
            if m:
                at = m.groups()
                continue
            a = _GRAPH_ASSIGN_RE.match(line.strip())
            if not a:
                continue
            var, ann, expr = a.groups()
            if expr.startswith(f"{ph}.item()") or (ann or "").startswith('"Sym(') and any(
                    re.search(rf"\b{v}\b", expr) for v in syms):
                syms.add(var)          # the float itself, or a Python number computed from it
                continue
            call = re.match(r"([\w.]+)\(", expr)
            fn = call.group(1) if call else ""
            # operator.*, torch.sym_float / sym_int / ... and torch._check* take SymFloats: not a pin
            if call and not fn.startswith(("operator.", "torch._check")) and not fn.rsplit(".", 1)[-1].startswith(
                    "sym_") and any(re.search(rf"\b{v}\b", expr[call.end():]) for v in syms):
                return (_loc(at[0], at[1], at[2], at[3].strip()) if at else None), call.group(1)
    return None


def _in_fake_kernel(at):
    """The name of the fake kernel (torch.library register_fake / impl_abstract) whose body holds `at`, else None."""
    if at is None or not at.line:
        return None
    from ..read import never_ran
    hit = never_ran.fake_kernel_at(at.file, at.line)
    return hit[1] if hit else None


def _automatic_dynamic_off(config):
    """True when a compile's dynamo_config (compilation_metrics, a JSON string) has automatic dynamic
    shapes off: torch.compile(dynamic=False) sets it for that compile."""
    try:
        return (json.loads(config) if isinstance(config, str) else config or {}).get("automatic_dynamic_shapes") is False
    except (ValueError, AttributeError):
        return False


# ops that take a size as a plain Python int (linspace's steps, a window's length): a dynamic size passed there is
# made a constant (pytorch/pytorch#172930)
_INT_SIZE_OP = re.compile(r"\btorch\.(linspace|logspace|(?:hann|hamming|blackman|bartlett|kaiser)_window)\(")
# torch functions whose kernel reads a size as an int while Dynamo traces (checked on 2.15: F.max_pool1d's
# aten::max_pool1d; max_pool2d and max_pool1d(return_indices=True) keep it symbolic; blind A/B batch 50)
# the math module's float functions on a size (math.log(T)): Dynamo makes the size a constant at that line (batch 51)
_MATH_CALL = re.compile(r"\b(?:math|np|numpy)\.(?:log|log2|log10|log1p|exp|sqrt|pow|sin|cos|tanh|atan)\(")
_PIN_CALL = re.compile(r"\b((?:F|functional|torch)\.max_pool1d)\(")
# a size formatted into a string (a profiler label, a log line, a dict key): Dynamo makes it a constant to build the
# string (blind A/B batch 52: record_function(f"block{i}.attn[T={T}]") under dynamic=True; the duck-sizing advice
# named the other input that shares the symbol, and mark_dynamic, which raises there)
# (an f-string only: str() of a size is a graph break and .format() keeps it symbolic on 2.15; review of 0.33.124)
_STR_CALL = re.compile(r"""\bf["'][^"'\n]*\{[^}\n]*(?:\w|\.shape|\.size\()[^}\n]*\}""")


def _size_index(code):
    """The index expression of a tensor subscript on the line that computes a number from a name (`x[:, T - 1]`
    gives "T - 1"); None for a slice (x[:, :T - 1] keeps the size symbolic), a subscript without a `:` or `...`
    beside the index (`self.gains[T - 1]` may be a Python list), a loop's own variable (`x[:, t + 1] for t in
    range(T - 1)`: the loop pins the size) or a line with range() (review of 0.33.165)."""
    import ast
    try:
        tree = ast.parse(code.strip().rstrip(":"))
    except (SyntaxError, ValueError):
        return None
    if any(isinstance(n, ast.Call) and ast.unparse(n.func) == "range" for n in ast.walk(tree)):
        return None
    loop_vars = {x.id for n in ast.walk(tree) if isinstance(n, (ast.comprehension, ast.For))
                 for x in ast.walk(n.target) if isinstance(x, ast.Name)}
    for n in ast.walk(tree):
        if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Tuple) and any(
                isinstance(el, ast.Slice) or (isinstance(el, ast.Constant) and el.value is Ellipsis)
                for el in n.slice.elts):
            for el in n.slice.elts:
                names = {x.id for x in ast.walk(el) if isinstance(x, ast.Name)}
                if isinstance(el, ast.BinOp) and names and not names & loop_vars:
                    return ast.unparse(el)
    return None
    for n in ast.walk(tree):
        if isinstance(n, ast.Subscript):
            for el in (n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]):
                if isinstance(el, ast.BinOp) and any(isinstance(x, ast.Name) for x in ast.walk(el)):
                    return ast.unparse(el)
    return None


def _causes(recs, limit_hit, static=False):
    groups = {}
    for r in recs:
        for i, g in enumerate(r.failures):
            # a range guard (`2 <= x.size()[1] <= 255`) is its own cause beside the automatic-dynamic size
            # mismatch of the same dim: the new size, read from that mismatch, tells which bound failed
            rng = g.kind == "shape" and _RANGE_RE.match((g.guard or "").strip())
            actual = None
            if rng:
                for o in r.failures:
                    m = _MISMATCH_RE.match(o.guard or "")
                    if m and rng["src"] == f"{m['name']}.size()[{m['dim']}]":
                        actual = int(m["actual"])
            c = groups.setdefault((g.kind, g.cause, bool(rng)), {
                "actual": actual, "cause": g.cause, "kind": g.kind, "count": 0, "primary": 0, "guard": g.guard,
                "compile_ids": [], "location": g.location, "stack": g.stack, "library": g.library, "hint": g.hint,
                "added_at": g.added_at})
            if r.compile_id not in c["compile_ids"]:
                c["count"] += 1
                c["compile_ids"].append(r.compile_id)
            c["primary"] += i == 0
    out = []
    # "one switch" is one per function: requires_grad flipping on one parameter after another (gradual
    # unfreezing of a transformers model: a recompile per stage) is no longer one switch
    switches = {k: sum(c["primary"] for c in groups.values() if c["kind"] == k)
                for k in ("requires_grad", "stride", "python_bool")}
    for c in groups.values():
        kd = knowledge.guard_kind_by_id(c["kind"])
        c["title"] = kd["title"]
        c["fix"] = " ".join(kd["fix"].split())
        c["why"] = _expected(c["kind"], c["guard"], switches.get(c["kind"], c["primary"]), limit_hit, static,
                             c.pop("actual"))
        if static and c["kind"] == "shape" and not c["why"]:
            c["fix"], c["static_option"] = knowledge.advice("static_shapes_option"), True
        elif static and c["kind"] == "python_int" and not c["why"]:   # (review of 0.33.102: a slot number)
            c["fix"], c["static_option"] = knowledge.advice("static_int_option"), True
        c["expected"] = c["why"] is not None
        out.append(c)
    return sorted(out, key=lambda c: (c["expected"], -c["primary"], -c["count"]))


def _recompiles(tr, stderr):
    by_frame = {}
    known = list(tr.strings.values())
    stopped = stopped_recompiles(stderr, known)
    any_ = bool(tr.artifacts("recompile_reasons") or stopped)
    specialized = specializations(tr) if any_ else {}
    lowered = lowering_specializations(tr) if any_ else {}
    by_torch = torch_op_specializations(tr) if any_ else {}
    wrapper_sites = wrapper_break_sites(tr) if any_ else {}
    for e in tr.artifacts("recompile_reasons"):
        fid = e.meta.get("frame_id")
        failures = [parse_guard_failure(r, known) for r in split_reasons(e.payload)]
        by_frame.setdefault((fid, e.rank), []).append(Recompile(compile_id=e.compile_id or "?", failures=failures))
    for fid, failures in stopped.items():   # the recompile fail_on_recompile stopped (its id: the next compile's)
        rank = next((e.rank for e in tr.of("dynamo_start") if e.meta.get("frame_id") == fid), None)
        n = len({e.compile_id for e in tr.of("dynamo_start") if e.meta.get("frame_id") == fid})
        by_frame.setdefault((fid, rank), []).append(Recompile(compile_id=f"{fid}/{n}", failures=failures))
    limit_frames, static = {}, set()
    for e in tr.of("compilation_metrics"):
        if _automatic_dynamic_off(e.data.get("dynamo_config")):   # dynamic=False on this function's compile
            static.add((e.meta.get("frame_id"), e.rank))
        ft, fr = e.data.get("fail_type") or "", e.data.get("fail_reason") or ""
        if "RecompileLimit" in ft or re.search(r"recompile.?limit|cache_size_limit", fr, re.I):
            n = re.search(r"currently set to (\d+)", fr)
            limit_frames[(e.meta.get("frame_id"), e.rank)] = int(n.group(1)) if n else None
    out = []
    for key in sorted(set(by_frame) | set(limit_frames), key=lambda k: (k[1] or 0, k[0] or 0)):
        fid, rank = key
        recs = by_frame.get(key, [])
        name, loc, wrapper = function_info(tr, fid)
        kinds = {}
        for r in recs:  # each recompile counted under the guard that failed on the most recent entry
            if r.failures:
                k = r.failures[0].kind
                kinds[k] = kinds.get(k, 0) + 1
        compiles = len({e.compile_id for e in tr.of("dynamo_start") if e.meta.get("frame_id") == fid and e.rank == rank})
        fr = FunctionRecompiles(function=name, location=loc, frame_id=fid, compiles=compiles, recompiles=recs,
                                kinds=kinds, wrapper=wrapper)
        if key in limit_frames:
            fr.limit_hit, fr.limit = True, limit_frames[key]
        fr.causes = _causes(recs, fr.limit_hit, static=key in static)
        lib = "transformers" if "transformers" in (fr.wrapper or "") else None
        for c in fr.causes:
            for x in knowledge.library_settings(c.get("library") or lib, c["guard"], "recompiles", c["kind"]):
                c["fix"] = "A library setting avoids it: " + " ".join(x["setting"].split()) + " " + c["fix"]
                c["setting"] = x.get("short")
        for c in fr.causes:   # a shape the program itself made static: where, and the fix for that
            m = re.match(r"shape of `(.+)` dim (\d+)$", c["cause"])
            sp = specialized.get((fid, rank, m.group(1), int(m.group(2)))) if m and c["kind"] == "shape" else None
            low = lowered.get((fid, rank, m.group(1), int(m.group(2)))) if m and c["kind"] == "shape" and not sp else None
            if low:   # no line of the program: a lowering of Inductor's own made the size static
                c["lowering_at"] = low
                c["expected"], c["why"] = False, None
                c["fix"] = knowledge.advice("conv_backward_pins_size")
            top = by_torch.get((fid, rank, m.group(1), int(m.group(2)))) if m and c["kind"] == "shape" \
                and not sp and not low else None
            if top:   # a torch function the program calls read the size as an int (nn.MaxPool1d -> F.max_pool1d)
                c["specialized_at"], c["specialized_reason"] = top[0], f"torch's `{clip(top[1], 60)}` ({top[2]})"
                c["expected"], c["why"] = False, None
                c["fix"] = knowledge.advice("torch_op_pins_size", op=clip(top[1], 60), where=top[2],
                                            at=f"{os.path.basename(top[0].file)}:{top[0].line}")
            first = size_pinned_by_float(tr, fid, rank, m.group(1), int(m.group(2))) if sp else None
            if first and (first[0].file, first[0].line) != (sp[0].file, sp[0].line):
                # the size went through float math turned into a number before the line Dynamo names: that line first
                sp = (first[0], f"guard `{first[1]}` there: float math on the size made a number; then {sp[1]} at "
                                f"{os.path.basename(sp[0].file)}:{sp[0].line}")
            duck = sp[2] if sp and len(sp) > 4 and not sp[4] else []
            if duck and re.search(rf"(?:shape|size\(\))\[\s*{m.group(2)}\s*\]|size\(\s*{m.group(2)}\s*\)",
                                  getattr(sp[0], "code", None) or ""):
                duck = []   # the line uses this dim itself (`if x.shape[0] == 4:`): its own pin, not a shared one (review)
            if sp:
                c["specialized_at"], c["specialized_reason"] = sp[0], sp[1]
                code = (getattr(sp[0], "code", None) or "").strip()
                if c["expected"] and (c["why"] or "").startswith("automatic dynamic"):
                    # the program's line keeps the dim static, so automatic dynamic cannot make it dynamic: every new
                    # size compiles again, not once (blind A/B batch 45: torch.linspace(steps=h) under dynamic=True,
                    # two recompiles in a short run labelled "expected (once)")
                    c["expected"], c["why"] = False, None
                int_op = _INT_SIZE_OP.search(code)
                pin_call = _PIN_CALL.search(code) if "return_indices=True" not in code.replace(" ", "") else None
                math_call = _MATH_CALL.search(code)
                str_call = _STR_CALL.search(code)
                size_index = _size_index(code)
                # a cache keyed by the size (`if n not in self._table:`, blind A/B batch 37): the dict's keys are
                # guarded too, so neither the loop nor the view advice fits
                dict_key = any(f.get("kind") == "container_length" and "___dict_contains" in (f.get("guard") or "")
                               for f in fr.causes) or re.search(r"\bnot in\s+[\w.]+\s*:?\s*$", code)
                c["fix"] = (knowledge.advice("size_in_string") if str_call and not first else
                            knowledge.advice("duck_sized", dim=f"{m.group(1)}.size()[{m.group(2)}]",
                                             others=", ".join(duck), value=sp[3] or "the same size",
                                             tensor=m.group(1), d=m.group(2)) if duck and not first else
                            knowledge.advice("size_float_math", guard=first[1]) if first else
                            knowledge.advice("specialized_dict_key") if dict_key else
                            knowledge.advice("specialized_int_op", op=int_op.group(1)) if int_op else
                            knowledge.advice("torch_op_pins_size", op=pin_call.group(1), where="its aten kernel",
                                             at=f"{os.path.basename(sp[0].file)}:{sp[0].line}") if pin_call else
                            knowledge.advice("size_math_call", fn=math_call.group(0)[:-1]) if math_call else
                            knowledge.advice("specialized_index", expr=size_index) if size_index else
                            knowledge.advice("specialized_loop") if sp[1] == "range_refined_to_singleton" else
                            knowledge.advice("specialized"))
            idx = re.match(r"(\w+) == -?\d+$", (c.get("guard") or "").strip()) if c["kind"] == "python_int" \
                and not c["expected"] else None
            code_at = (getattr(c.get("location"), "code", None) or "") if idx else ""
            held = re.search(rf"([\w.]*\w)\s*\[\s*{idx.group(1)}\s*\]", code_at) if idx else None
            if held and not _tensor_in_graph(tr, fid, held.group(1)):
                # an int that indexes a Python container (a ModuleList of heads, a list) picks one item while tracing:
                # each value is a graph of its own, whatever dynamic= says (blind A/B batch 49: self.heads[site_id])
                c["fix"] = knowledge.advice("int_indexes_container", name=idx.group(1))
            name = re.match(r"value of `(\w+)`$", c["cause"]) if c["kind"] == "python_float" else None
            pinned = float_pinned_at(tr, fid, name.group(1)) if name and not c["expected"] else None
            if pinned and pinned[0]:
                c["specialized_at"], c["specialized_reason"] = pinned[0], f"{pinned[1]} takes it as a Python number"
                c["fix"] = knowledge.advice("float_pinned_size", name=name.group(1), op=pinned[1]) \
                    if re.search(r"interpolate|upsample|Upsample", pinned[1]) else \
                    knowledge.advice("float_pinned_by_op", name=name.group(1), op=pinned[1])
            fake = _in_fake_kernel(c.get("added_at"))
            if fake and not c["expected"]:   # a custom op's fake kernel pinned the size (blind A/B batch 29)
                c["specialized_at"], c["specialized_reason"] = c["added_at"], f"in the fake kernel {fake}"
                c["fix"] = knowledge.advice("fake_kernel_pins_size", fake=fake)
        split = split_by_wrapper(tr, fid, wrapper_sites)
        if split and fr.wrapper is None:
            fr.wrapper = split
        fr.expected_only = bool(fr.causes) and all(c["expected"] for c in fr.causes) and not fr.limit_hit
        fixes = []
        for c in fr.causes:
            if c["expected"] or any(x["kind"] == c["kind"] for x in fixes):
                continue
            fixes.append({"kind": c["kind"], "title": c["title"], "fix": c["fix"]})
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


def recompile_kinds(recompiles):
    """{compile id: the kind of the guard that failed first} of each recompile (FunctionRecompiles list)."""
    return {r.compile_id: r.failures[0].kind for fr in recompiles for r in fr.recompiles if r.failures}


def recompile_static(recompiles):
    """{compile id: True} of each recompile whose failing guard is a size of a function compiled with automatic
    dynamic shapes off (dynamic=False: the cause's static_option), where each size is a graph of its own."""
    out = {}
    for fr in recompiles:
        if fr.limit_hit:      # past recompile_limit it runs eagerly: a recompile to stop, whatever the setting
            continue
        causes = {(c["kind"], c["cause"]): c for c in fr.causes}
        for r in fr.recompiles:
            c = causes.get((r.failures[0].kind, r.failures[0].cause)) if r.failures else None
            if c and c.get("static_option"):
                out[r.compile_id] = True
    return out


def recompile_whys(recompiles):
    """{compile id: why | None} of each recompile (FunctionRecompiles list): why torch expects it, by the
    rule triage and compare use (the cause of the guard that failed on the newest entry is expected),
    else None. compile-time counts a recompile as worth fixing only when this is None."""
    out = {}
    for fr in recompiles:
        causes = {(c["kind"], c["cause"]): c for c in fr.causes}
        for r in fr.recompiles:
            c = causes.get((r.failures[0].kind, r.failures[0].cause)) if r.failures else None
            out[r.compile_id] = c["why"] if c and c["expected"] else None
    return out