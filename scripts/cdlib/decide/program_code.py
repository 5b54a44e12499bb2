"""What the program's own source says about an error: its files, its export calls and the line that added an
export guard, a mark_dynamic that never reached the compiled input, a compiled function that returns a generator,
precision settings, explain() calls, captured reads. Read by analyze_errors (the error rows' next steps), analyze
and runs; its custom ops are read in custom_op_code and custom_op_source. No torch import."""
import os
import re

from . import knowledge
from .export import dim_bounds, size_one_guard
from ..read.frames import _tree, is_user_file, library_of, library_path, loc as _loc, src_line as _src_line
from ..cmdline import launched_scripts, local_imports as _local_imports, scripts_of

_GUARD_CMP_RE = re.compile(r"^\s*(\w+)\s*(>=|>|<=|<)\s*(\d+)\s*$")
_SPECIALIZE_FIX_RE = re.compile(r"^\s*(\w+) = (\d+)\s*$")   # PyTorch's suggested fix `frames = 256`: a static dim


def export_guard_sites(rep, tr):
    """An export error whose suggested fix bounds a Dim (`Dim('seq', min=8, ...)`): the program's line that added
    that guard, from the trace's guard_added events (they keep the Python stack), and the fake kernel it sits in
    (blind A/B batch 25: `kk = k if hist.shape[1] >= k else ...` in a custom op's register_fake). Sets
    e.guard_site. The guard's symbol is the Dim's (torch's "Not all values of seq = L['x'].size()[1]" and the
    trace's create_symbol events); where that is unknown, only a bound no other Dim shares is matched. A guard
    whose innermost frame outside torch is a library's, or the export call itself, is not claimed."""
    from ..read import never_ran
    sym_of = {d.get("source"): d.get("symbol") for ev in tr.of("create_symbol")
              for d in [ev.data if isinstance(ev.data, dict) else {}] if d.get("source")}
    for e in rep.errors:
        src_of = dict(re.findall(r"Not all values of (\w+) = (\S+) in the specified range", e.message or ""))
        if _specialized_site(e, tr, sym_of, src_of) or _unproven_sites(e, tr, sym_of, src_of):
            continue
        dims = []   # (name, symbol or None, {(op, n): (op shown, bound)})
        for name, bounds in filter(None, map(dim_bounds, e.suggested_fixes)):
            keys = {}
            for k, v in bounds.items():
                for op, n in ((">=", v), (">", v - 1)) if k == "min" else (("<=", v), ("<", v + 1)):
                    keys[(op, n)] = (">=" if k == "min" else "<=", v)
            dims.append((name, sym_of.get(src_of.get(name)), keys))
        for ev in (tr.of("guard_added_fast") + tr.of("guard_added")) if dims else []:
            d = ev.data if isinstance(ev.data, dict) else {}
            g = _GUARD_CMP_RE.match(d.get("expr") or "")
            if not g:
                continue
            key = (g.group(2), int(g.group(3)))
            hit = [x for x in dims if key in x[2] and (x[1] == g.group(1) if x[1] else
                                                       sum(key in y[2] for y in dims) == 1)]
            # the innermost frame that is not torch's own (the custom-op machinery, symbolic_shapes): the user's?
            site = _user_site(tr, d, e) if hit else None
            if not site:
                continue
            file, line, func, code = site
            fake = never_ran.fake_kernel_at(file, line)
            name, _, keys = hit[0]
            e.guard_site = {"guard": f"{name} {keys[key][0]} {keys[key][1]}", "location": _loc(file, line, func, code),
                            "fake_kernel": {"line": fake[0], "name": fake[1]} if fake else None}
            break


def _user_site(tr, d, e):
    """(file, line, func, code) of the innermost frame of a guard event's stack that is neither torch's nor a
    library's, when it is the program's own and not the export call itself; else None."""
    outside = [f for f in tr.frames(d.get("user_stack") or d.get("stack"))
               if f[0] and f[1] and not f[0].startswith("<") and library_of(f[0]) != "torch"]
    if not outside or not is_user_file(outside[-1][0]):
        return None
    file, line, func, code = outside[-1]
    if e.location and (os.path.realpath(file), line) == (os.path.realpath(e.location.file), e.location.line):
        return None   # the export call: the guard came from inside torch
    return file, line, func, code


def _unproven_sites(e, tr, sym_of, src_of):
    """A constraint violation with no suggested fix whose guard is a % or // (or float math) of the size, or compares
    a size made from it with 1: the lines that added such guards on the Dim's symbol, the program's or a library's
    (blind A/B batch 62: transformers' XLNet reshapes a length made by a float-step torch.arange; the report said
    only "Dim.DYNAMIC"). Sets e.guard_site with kind "unproven"."""
    if e.suggested_fixes or "satisfy the generated guard" not in (e.message or ""):
        return False
    syms = {sym_of.get(src) for src in src_of.values()} - {None}
    guards = _guards_of_last_trace(tr, set(src_of.values()))
    for d in guards:   # a Dim shared by two inputs: Eq(s53, s70) makes them one symbol
        m = re.match(r"Eq\((s\d+), (s\d+)\)$", (d.get("expr") or "").strip())
        if m and syms & set(m.groups()):
            syms |= set(m.groups())
    sites, floats = [], False
    for d in guards:
        expr = d.get("expr") or ""
        # (or a 0/1 check on a size made from it, `Ne(s70 - 1, 1)`: the slice MobileBERT pads, blind A/B batch 66)
        if not any(re.search(rf"\b{x}\b", expr) for x in syms) or not (
                re.search(r"Mod\(|FloorDiv|CeilToInt|FloatTrueDiv", expr) or size_one_guard(expr)):
            continue
        floats = floats or "FloatTrueDiv" in expr or "ToFloat" in expr
        user = _user_site(tr, d, e)
        lib = None if user else _library_site(tr, d)
        at = user or (lib[1] if lib else None)
        if at and (at[0], at[1]) not in {(x.file, x.line) for x in sites}:
            sites.append(_loc(*at))
    if not sites:
        return False
    e.guard_site = {"kind": "unproven", "locations": sites[:3], "float": floats}
    return True


def _guards_of_last_trace(tr, sources):
    """The guard events (data dicts) logged after the last symbol made for one of those sources: the failing export
    is the last trace of its inputs, and an earlier export or compile of the same input names the same symbols
    (review of 0.33.172: an encoder exported first, its guards named for the decoder's failure)."""
    evs = [ev for ev in tr.events if ev.key in ("create_symbol", "guard_added_fast", "guard_added")]
    last = max((i for i, ev in enumerate(evs) if ev.key == "create_symbol" and isinstance(ev.data, dict)
                and ev.data.get("source") in sources), default=-1)
    return [ev.data for ev in evs[last + 1:] if ev.key != "create_symbol" and isinstance(ev.data, dict)]


def _library_site(tr, d):
    """(library, (file, line, func, code), the program's calling frame or None) where the innermost frame of a guard
    event's stack outside torch is an installed library's (transformers' modeling code); else None."""
    outside = [f for f in tr.frames(d.get("user_stack") or d.get("stack"))
               if f[0] and f[1] and not f[0].startswith("<") and library_of(f[0]) != "torch"]
    if not outside or is_user_file(outside[-1][0]) or not library_of(outside[-1][0]):
        return None
    caller = next((f for f in reversed(outside) if is_user_file(f[0])), None)
    return library_of(outside[-1][0]), outside[-1], caller


def _specialized_site(e, tr, sym_of, src_of):
    """PyTorch's suggested fix makes a Dim static (`frames = 256`): the program's line whose guard fixed it (an
    equality on the Dim's symbol, from the trace's guard_added events; blind A/B batch 35: `torch.linspace(1, 0,
    T)` takes its size as a plain int, so export specialized T and the frames Dim it comes from). Sets e.guard_site
    with kind "specialized" (and int_arg when torch converted the size to a Python int there). Only a Dim whose
    symbol the trace names is matched."""
    for name, value in (m.groups() for m in map(_SPECIALIZE_FIX_RE.match, e.suggested_fixes or []) if m):
        sym = sym_of.get(src_of.get(name))
        # torch's message names no source ("You marked chars as dynamic but ... constant (38)", blind A/B batch 61):
        # the sizes the trace says were made that constant
        syms = {sym} if sym else {sym_of.get(src.strip()) for ev in tr.of("symbolic_shape_specialization")
                                  for dd in [ev.data if isinstance(ev.data, dict) else {}]
                                  if str(dd.get("value")) == value for src in dd.get("sources") or []} - {None}
        guards = [ev.data for ev in tr.of("guard_added_fast") + tr.of("guard_added") if isinstance(ev.data, dict)]
        for d in guards:
            expr = d.get("expr") or ""
            if not any(re.search(rf"\b{x}\b", expr) for x in syms) or not (expr.startswith("Eq(") or "==" in expr):
                continue
            site = _user_site(tr, d, e)
            if not site:
                continue
            file, line, func, code = site
            names = {f[2] for f in tr.frames(d.get("stack") or [])}
            e.guard_site = {"kind": "specialized", "guard": expr, "dim": name, "value": int(value),
                            "location": _loc(file, line, func, code), "int_arg": "guard_int" in names,
                            "rnn": bool(names & {"one_layer_rnn", "_rnn_helper", "one_layer_lstm"})}
            return True
        # no line of the program's: the library code it calls (blind A/B batch 61: transformers' CANINE fixes the
        # length at nn.MaxPool1d and at a range() loop over it; the report said "apply chars = 38")
        sites = []
        for d in guards:
            g = re.match(r"Eq\((s\d+), (\d+)\)$", (d.get("expr") or "").strip())
            lib = _library_site(tr, d) if g and g.group(1) in syms and g.group(2) == value else None
            if lib and (lib[1][0], lib[1][1]) not in {(x[1][0], x[1][1]) for x in sites}:
                sites.append(lib)
        if sites:
            lib, (file, line, func, code), caller = sites[0]
            e.guard_site = {"kind": "specialized", "dim": name, "value": int(value), "library": lib,
                            "location": _loc(file, line, func, code),
                            "also": [_loc(f, ln, fn, c) for _, (f, ln, fn, c), _ in sites[1:3]],
                            "caller": _loc(*caller) if caller else None}
            return True
    return False


def guard_site_words(site):
    """"The guard `hist_len >= 8` comes from ops.py:24 `...`" (+ what a fake kernel there means)."""
    if site.get("kind") == "unproven":
        def where(x):
            c = (x.code or _src_line(x.file, x.line) or "").strip()
            return f"{library_path(x.file) or os.path.basename(x.file)}:{x.line}" + (f" `{c[:80]}`" if c else "")
        return "; ".join(where(x) for x in site["locations"]) + (
            knowledge.advice("export_guard_float_math") if site.get("float") else "")
    loc = site["location"]
    if site.get("kind") == "specialized" and site.get("library"):
        def at(x):
            c = (x.code or _src_line(x.file, x.line) or "").strip()
            return f"{library_path(x.file) or os.path.basename(x.file)}:{x.line}" + (f" `{c[:90]}`" if c else "")
        caller = site.get("caller")
        return knowledge.advice("export_specialized_in_library", dim=site["dim"], value=site["value"],
                                library=site["library"], where="; ".join(at(x) for x in [loc] + site.get("also", [])),
                                caller=f" (called from {os.path.basename(caller.file)}:{caller.line})" if caller else "")
    if site.get("kind") == "specialized":
        code = (loc.code or _src_line(loc.file, loc.line) or "").strip()
        return knowledge.advice("export_specialized_at", dim=site["dim"], value=site["value"],
                                where=f"{os.path.basename(loc.file)}:{loc.line}" + (f" `{code[:120]}`" if code else ""),
                                why=knowledge.advice("export_rnn_unrolled") if site.get("rnn") else
                                knowledge.advice("export_int_arg") if site.get("int_arg") else "")
    code = (loc.code or _src_line(loc.file, loc.line) or "").strip()
    s = (f"The guard `{site['guard']}` comes from {os.path.basename(loc.file)}:{loc.line}"
         + (f" `{code[:120]}`" if code else ""))
    fk = site.get("fake_kernel")
    if fk:
        s += (f", in the fake kernel of {fk['name']} ({os.path.basename(loc.file)}:{fk['line']}): export traces that "
              "function, not the real kernel, so a Python branch on the size there (`if`, `a if cond else b`) adds the "
              "guard. Replace the branch with torch.sym_min / torch.sym_max (no guard) and keep your Dim's range")
    else:
        s += (": make that code independent of the size before exporting (e.g. a table or cache of fixed length: "
              "build it at the largest size you serve) and keep your Dim's range")
    return s + "."


def import_closure(scripts, limit=60):
    """The scripts and every module of their own they import, transitively (cmdline.local_imports)."""
    seen, todo = [], list(scripts)
    while todo and len(seen) < limit:
        f = os.path.realpath(todo.pop(0))
        if f not in seen:
            seen.append(f)
            todo += _local_imports(f)
    return seen


def marks_not_on_input(rep, tr):
    """Shape recompiles on a dim the program marks dynamic (torch._dynamo.mark_dynamic(x, d) somewhere in its own
    files): a marked dim never gets a size guard, so the compiled input was not the marked tensor (blind A/B batch
    35: a collate_fn marked a float64 batch, then `.to(dtype=torch.float32)` made a new tensor without the mark,
    and dynamic=False made every length a graph). Sets c["mark_lost"] = (path, line, code) on such causes and
    leads their fix with it (the dynamic=False advice would trade the mark for automatic dynamic). Not where a
    mark did reach the function: its first compile made a symbol for an input's size (another tensor was marked,
    and this one perhaps never was)."""
    from ..read import never_ran
    marked = {ev.meta.get("frame_id") for ev in tr.of("create_symbol") if ev.meta.get("frame_compile_id") == 0}
    causes = [(fr, c, int(m.group(2))) for fr in rep.recompiles if fr.frame_id not in marked for c in fr.causes
              for m in [re.match(r"shape of `(.+)` dim (\d+)$", c.get("cause") or "")]
              if m and c.get("kind") == "shape" and not c.get("expected")]
    if not causes:
        return
    calls = never_ran.mark_dynamic_calls(import_closure(scripts_of(rep.command or [])))
    for fr, c, dim in causes:
        hit = [x for x in calls if x[3] is None or dim in x[3]]
        if hit:
            path, line, code, _ = hit[0]
            c["mark_lost"] = (path, line, code)
            c["fix"] = knowledge.advice("mark_dynamic_not_on_input", where=f"{os.path.basename(path)}:{line}",
                                        code=code[:100], cause=c["cause"]) + " " + c["fix"]

def read_text(path):
    """A run's output file as text ("" when there is none)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(2_000_000)
    except (OSError, TypeError):
        return ""

def program_files(rep):
    """The program's scripts (every .py its command runs) and the modules of its own that they import."""
    return command_files(rep.command)


def script_calls(files):
    """[(path, line)] of the program's torch.jit.script(...) calls (a TorchScript module inside an exported model:
    row export_script_module)."""
    import ast
    out = []
    for f in files:
        try:
            tree = ast.parse(read_text(f) or "")
        except (SyntaxError, ValueError):
            continue
        out += [(f, n.lineno) for n in ast.walk(tree) if isinstance(n, ast.Call)
                and ast.unparse(n.func) in ("torch.jit.script", "jit.script")]
    return sorted(out)


def command_files(command, launched=False):
    """The .py files a command runs and the modules of their own that they import; launched: also the scripts of
    their folder they start as processes (cmdline.launched_scripts)."""
    scripts = [x for s in scripts_of(command or []) for x in [s] + (launched_scripts(s) if launched else [])]
    return list(dict.fromkeys(f for s in scripts for f in [s] + _local_imports(s)))


def export_advice(files, export_at=None):
    """What may make an exported program's results differ from the eager model's, the parts that can hold for
    this program (knowledge/advice.yaml): the module mode (not when a .eval() comes before the export call in
    its file: blind A/B batch 28's model was in eval mode and the advice cost a step), tensors exported as
    constants, the example's shapes, and for a program that loads an AOTInductor package, buffers changed in place."""
    from ..read import never_ran
    parts = []
    state = never_ran.mutated_buffers(files) if never_ran.aoti_loads(files) else []
    if state:
        at = ", ".join(dict.fromkeys(f"`{n}` at {os.path.basename(p)}:{ln}" for p, ln, n in state[:3]))
        parts.append(knowledge.advice("export_package_state", at=at))
    path, line = export_at or (None, None)
    evaluated = path is not None and any(p == path and ln < line for p, ln in never_ran.eval_calls(files))
    if not evaluated:
        parts.append(knowledge.advice("export_mode"))
    if path is not None and _export_without_dynamic_shapes(path, line):
        # every dim fixed at the example's size: the likelier cause, so it comes first (blind A/B batch 38: an AOTI
        # package exported for 500-sample windows, served 400 and 640; the constants check came first)
        parts.insert(0, knowledge.advice("export_shapes_static", at=f"{os.path.basename(path)}:{line}"))
        parts.append(knowledge.advice("export_constants"))
    else:
        parts += [knowledge.advice("export_constants"), knowledge.advice("export_shapes")]
    # first: it changes every number (blind A/B batch 55: a "bf16" AOTInductor package exported under an outer
    # torch.autocast computed in float32; the gate compared it with bf16 eager). Any export call of the program
    under = next(((p_, ln, w) for p_, ln, _ in ([(path, line, None)] if path else []) + never_ran.exports(files)
                  for w in [_autocast_around(p_, ln)] if w), None)
    shared = shared_export_input_words(files)
    if shared:
        parts = [shared] + [x.replace("first the shapes: ", "the shapes: ", 1) for x in parts]
    if under:
        parts.insert(0, knowledge.advice("export_outer_autocast", at=f"{os.path.basename(under[0])}:{under[1]}",
                                         ctx=f"{os.path.basename(under[0])}:{under[2]}"))
    return knowledge.advice("export_semantics", parts="; ".join(parts))


def shared_export_inputs(files):
    """[(path, export line, name, name's line, [input names])] where a torch.export call is given one tensor
    variable as two of its example inputs ({"before": probe, "after": probe}, (x, x), through a variable or a
    function of the same file that returns them): export traces the two as one input, and the exported program
    reads one of them for both (pytorch#144683: by design; blind A/B batch 61's change detector). A name bound to
    a literal (an int, None) is left out."""
    import ast
    from ..read import never_ran
    out = []
    for path, line, call in never_ran.exports(files):
        if not call.endswith("export"):
            continue
        tree = _tree(path)
        node = next((n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.lineno == line
                     and ast.unparse(n.func) == call), None) if tree else None
        if node is None:
            continue
        funcs = {f.name: f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)}
        scope = next((f for f in funcs.values() if f.lineno <= line <= (f.end_lineno or 0)), tree)

        def assigned(name, where, before):
            vals = [a.value for a in ast.walk(where) if isinstance(a, ast.Assign) and a.lineno < before
                    and any(isinstance(t, ast.Name) and t.id == name for t in a.targets)]
            return max(vals, key=lambda v: v.lineno) if vals else None

        def pairs(expr, where, before, depth=0):
            """[(key, value node)] of a tuple/list/dict of example inputs, following a name or a local call."""
            if depth > 3 or expr is None:
                return [], where
            if isinstance(expr, (ast.Tuple, ast.List)):
                return [(str(i), e) for i, e in enumerate(expr.elts)], where
            if isinstance(expr, ast.Dict):
                return [(k.value if isinstance(k, ast.Constant) else ast.unparse(k), v)
                        for k, v in zip(expr.keys, expr.values) if k is not None], where
            if isinstance(expr, ast.Name):
                return pairs(assigned(expr.id, where, before), where, before, depth + 1)
            if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in funcs:
                fn = funcs[expr.func.id]
                rets = [r.value for r in ast.walk(fn) if isinstance(r, ast.Return) and r.value is not None]
                return pairs(rets[-1], fn, rets[-1].lineno + 1, depth + 1) if rets else ([], where)
            return [], where

        exprs = node.args[1:3] + [k.value for k in node.keywords if k.arg in ("args", "kwargs", None)]
        for expr in exprs:
            items, where = pairs(expr, scope, line)
            seen = {}
            for key, v in items:
                if isinstance(v, ast.Name):
                    seen.setdefault(v.id, []).append(key)
            for name, keys in seen.items():
                bound = assigned(name, where, 10 ** 9)
                # a tensor, by its making (torch.rand, .clone(), a batch's .to()); not a size, count or flag (`n =
                # x.shape[0]`, len(), args.k: review of 0.33.164), and not where the model ignores the input
                if len(keys) > 1 and bound is not None and _TENSOR_MADE.search(ast.unparse(bound)) \
                        and not _NOT_TENSOR.search(ast.unparse(bound)) and not _input_ignored(tree, keys):
                    out.append((path, line, name, bound.lineno, keys))
    return out


_TENSOR_MADE = re.compile(r"\btorch\.|\.(?:to|clone|float|half|bfloat16|double|cuda|cpu|detach|contiguous|view|"
                          r"reshape|unsqueeze|permute|expand|repeat|new_\w+)\(|\b(?:rand|randn|randint|zeros|ones|empty|"
                          r"full|tensor|stack|cat|arange)\w*\(")
_NOT_TENSOR = re.compile(r"\.(?:shape|size|item|numel|dim|ndim|tolist)\b|^(?:len|int|float|bool|str|round)\(")


def _input_ignored(tree, keys):
    """True when every forward() of the file that takes those inputs (by name, or by position after self) never
    reads one of them: the shared tensor then changes nothing (review of 0.33.164)."""
    import ast
    fwds = [f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == "forward"]
    takes = []
    for f in fwds:
        params = [a.arg for a in f.args.args[1:]]
        names = [k if not k.isdigit() else (params[int(k)] if int(k) < len(params) else None) for k in keys]
        if all(n in params for n in names):
            used = {x.id for x in ast.walk(f) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load)}
            takes.append(all(n in used for n in names))
    return bool(takes) and not any(takes)


def runs_exported(files):
    """True when the program runs what it exported: ep.module(), a loaded .pt2 (torch.export.load) or an
    AOTInductor package."""
    from ..read import never_ran
    return bool(never_ran.aoti_loads(files)) or any(re.search(r"\.module\(\)|torch\.export\.load\(", read_text(f))
                                                    for f in files)


def shared_export_input_words(files):
    """export_shared_input's text for the first export call given one tensor as two inputs; None."""
    found = shared_export_inputs(files)
    if not found:
        return None
    path, line, name, bound, keys = found[0]
    return knowledge.advice("export_shared_input", at=f"{os.path.basename(path)}:{line}", name=name,
                            bound=f"{os.path.basename(path)}:{bound}" if bound else "an argument",
                            inputs=", ".join(f"`{k}`" for k in keys))


def _autocast_around(path, line):
    """The line of a `with ...autocast(...)` block whose body holds the torch.export call at path:line; None."""
    import ast
    tree = _tree(path)
    for n in ast.walk(tree) if tree else ():
        if isinstance(n, (ast.With, ast.AsyncWith)) and n.body and n.body[0].lineno <= line <= (n.end_lineno or 0) \
                and any("autocast" in ast.unparse(it.context_expr) for it in n.items):
            return n.lineno
    return None


def _export_without_dynamic_shapes(path, line):
    """True when the torch.export call at path:line passes no dynamic_shapes (nor a **kwargs that may hold it)."""
    import ast
    try:
        tree = ast.parse(read_text(path))
    except (SyntaxError, ValueError):
        return False
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and n.lineno == line and ast.unparse(n.func).split(".")[-1] in ("export", "load"):
            return ast.unparse(n.func).split(".")[-1] == "export" and not any(
                k.arg in ("dynamic_shapes", None) for k in n.keywords)
    return False


def uses_ddp(rep):
    """Does the program (its script and local imports) wrap a model in DistributedDataParallel?"""
    return any(re.search(r"\bDistributedDataParallel\b|\bDDP\(", read_text(f)) for f in program_files(rep))


def export_calls(rep, err):
    """[(path, line, call)] of the torch.export calls in the program's scripts and their own imports, for a
    program that exports and never compiles, whose failure is not at a line above its export call in the same
    file (a data-loading bug before the export is not about export; review of batch 19)."""
    from ..read import never_ran
    files = program_files(rep)
    calls = never_ran.exports(files)
    if not calls or never_ran.compile_calls(files):
        return []
    loc = err.location
    same = [line for p, line, _ in calls if loc is not None and os.path.realpath(p) == os.path.realpath(loc.file)]
    if same and loc.line and loc.line < min(same):
        return []
    return calls


def returns_generator(graphs):
    """("`start` (sampler.py:71)", "`_denoise`, sampler.py:80") when a compiled function is a generator or returns
    a call to a generator function defined in the same file (Dynamo runs it to its end while tracing), else None."""
    import ast
    for g in graphs:
        loc = g.location
        if not (loc and loc.line and is_user_file(loc.file)):
            continue
        try:
            tree = ast.parse(read_text(loc.file) or "")
        except (SyntaxError, ValueError):
            continue
        defs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]

        def yields(fn):
            todo = list(fn.body)
            while todo:
                n = todo.pop()
                if isinstance(n, (ast.Yield, ast.YieldFrom)):
                    return True
                if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                    todo.extend(ast.iter_child_nodes(n))
            return False
        fn = next((d for d in defs if d.lineno == loc.line and d.name == g.function.split(" ")[0]), None)
        if fn is None:
            continue
        where = f"`{fn.name}` ({os.path.basename(loc.file)}:{fn.lineno})"
        if yields(fn):
            return where, f"`{fn.name}` itself"
        for r in (n for n in ast.walk(fn) if isinstance(n, ast.Return) and isinstance(n.value, ast.Call)):
            f = r.value.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            gen = next((d for d in defs if d.name == name and yields(d)), None)
            if gen is not None:
                return where, f"`{gen.name}`, {os.path.basename(loc.file)}:{gen.lineno}"
    return None


# a line of the program that lowers float32 matmul/conv precision (TF32 on CUDA, bf16 on a CPU with bf16 units)
_LOW_PRECISION = re.compile(r"""set_float32_matmul_precision\(\s*["'](?:high|medium)["']|\ballow_tf32\s*=\s*True|"""
                            r"""\bfp32_precision\s*=\s*["'](?:tf32|bf16)["']""")


def precision_settings(files):
    """[(path, line, code)] of the lines in the program's files that lower float32 matmul precision
    (torch.set_float32_matmul_precision("high"/"medium"), allow_tf32 = True, fp32_precision = "tf32"/"bf16")."""
    out = []
    for path in files:
        for i, ln in enumerate(read_text(path).splitlines(), 1):
            if _LOW_PRECISION.search(ln) and not ln.lstrip().startswith("#"):
                out.append((path, i, ln.strip()))
    return out


_EXPLAIN = re.compile(r"\b(?:torch\._dynamo\.|dynamo\.)explain\(")


def explain_calls(files):
    """[(path, line, code)] of the lines in the program's files that call torch._dynamo.explain (it traces with
    Dynamo under any compile stance, so a run with compilation off still runs Dynamo there)."""
    return [(path, i, ln.strip()) for path in files for i, ln in enumerate(read_text(path).splitlines(), 1)
            if _EXPLAIN.search(ln) and not ln.lstrip().startswith("#")]


def captured_reads(rep):
    """[(path, line, code)] of the program's lines whose tensor read (`.item()`, int()/float() of a tensor) Dynamo
    traced into a graph as a data-dependent number (capture_scalar_outputs), from the run's Dynamo graphs: the
    `# File:` comment above each `.item()` node, user files only."""
    from ..read import trace as tracemod
    from ..read.inductor_info import FILE_COMMENT_RE
    trace_dir = (rep.artifacts or {}).get("trace_dir") or os.path.join(rep.run_dir or "", "trace")
    if not os.path.isdir(trace_dir):
        return []
    try:
        tr = tracemod.parse(trace_dir)
    except Exception:   # a trace this reader cannot parse: nothing to name
        return []
    out = []
    for e in tr.events:
        if e.key != "dynamo_output_graph" or not e.payload:
            continue
        where = None
        for ln in e.payload.splitlines():
            m = FILE_COMMENT_RE.search(ln)
            if m:
                where = (m.group(1), int(m.group(2)), m.group(4).strip())
            elif where and (".item()" in ln or "_local_scalar_dense" in ln) and is_user_file(where[0]) \
                    and where not in out:
                out.append(where)
    return out


_LIMIT_SET = re.compile(r"\b(?:torch\._dynamo\.|dynamo\.|_dynamo\.)?config\.(recompile_limit|cache_size_limit)\s*=\s*(\d+|[A-Za-z_]\w*)\b")


def limit_not_applied(rep):
    """A recompile limit hit at a value other than the one the program sets (torch._dynamo.config.recompile_limit =
    N in its own files): the setting did not reach the thread that compiled. torch 2.15 keeps config overrides per
    thread (torch/utils/_config_module.py), so a value set on the main thread is the default in a worker thread
    (blind A/B batch 53: a reranker's ThreadPoolExecutor engine thread; the fix text said to drop dynamic=False).
    Replaces the limit fix of such functions."""
    hit = [fr for fr in rep.recompiles if fr.limit_hit and fr.limit]
    if not hit:
        return
    sets = []
    for path in program_files(rep):
        text = read_text(path)
        for i, ln in enumerate(text.splitlines(), 1):
            m = _LIMIT_SET.search(ln.split("#", 1)[0])
            v = m.group(2) if m else None
            if v and not v.isdigit():   # a module-level constant (LIMIT = 32)
                c = re.search(rf"^{re.escape(v)}\s*=\s*(\d+)\s*(?:#.*)?$", text, re.M)
                v = c.group(1) if c else None
            if v:
                sets.append((path, i, m.group(1), int(v)))
    for fr in hit:
        other = [x for x in sets if x[3] != fr.limit]
        if not other:
            continue
        path, line, name, value = other[0]
        fix = knowledge.advice("limit_not_applied", at=f"{os.path.basename(path)}:{line}", name=name, value=value,
                               limit=fr.limit)
        fr.fixes = [{"kind": "limit", "title": "your recompile_limit did not apply", "fix": fix}] + \
            [x for x in fr.fixes if x["kind"] != "limit"]



# a call on a result inside a Tensor subclass's handler that eagerly dispatches back to the handler
_HANDLER_SKIP = {"as_subclass", "__torch_function__", "__torch_dispatch__", "get", "items", "keys", "values",
                 "append", "extend", "update"}


def subclass_handler_ops(files):
    """[(path, line, class, method)]: a Tensor subclass's __torch_function__ that calls a tensor method on a value it
    computed in the handler (`out = super().__torch_function__(...)`, then `out.clamp(...)`). Eagerly that call goes
    through the handler again; while Dynamo traces the handler, subclass dispatch is off (blind A/B batch 55)."""
    import ast
    out = []
    for path in files:
        tree = _tree(path)
        for c in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)) if tree else ():
            for fn in (n for n in c.body if isinstance(n, ast.FunctionDef) and n.name == "__torch_function__"):
                names = [a.arg for a in fn.args.args]
                func = names[1] if len(names) > 1 else None   # (cls, func, types, args, kwargs)
                # only the dispatched result: `out = super().__torch_function__(...)` or `out = func(...)` (review:
                # `kwargs = dict(kwargs)`, then `kwargs.pop(...)`, was named as a tensor op)
                made = {t.id for n in ast.walk(fn) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
                        and (ast.unparse(n.value.func).endswith("__torch_function__") or
                             (isinstance(n.value.func, ast.Name) and n.value.func.id == func))
                        for t in n.targets if isinstance(t, ast.Name)}
                off = {id(x) for w in ast.walk(fn) if isinstance(w, ast.With) and any(
                    "DisableTorchFunction" in ast.unparse(it.context_expr) for it in w.items) for x in ast.walk(w)}
                for n in ast.walk(fn):
                    if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and id(n) not in off and \
                            isinstance(n.func.value, ast.Name) and n.func.value.id in made and \
                            n.func.attr not in _HANDLER_SKIP:
                        out.append((path, n.lineno, c.name, n.func.attr))
    return out


_INPLACE_SHAPE_OPS = {"squeeze_", "unsqueeze_", "resize_", "resize_as_", "t_", "transpose_", "swapdims_", "swapaxes_",
                      "as_strided_", "set_"}


def _calls(files, wanted):
    """[(path, line, code)]: the method calls `wanted(call)` accepts in the program's own files (`x.op(...)`)."""
    import ast
    out = []
    for path in files:
        tree = _tree(path)
        lines = read_text(path).splitlines() if tree else []
        for n in ast.walk(tree) if tree else ():
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and wanted(n) and n.lineno <= len(lines):
                out.append((path, n.lineno, lines[n.lineno - 1].strip()))
    return sorted(set(out), key=lambda t: (t[0], t[1]))


def inplace_shape_ops(files):
    """[(path, line, code)]: calls of in-place ops that change a tensor's shape (squeeze_, unsqueeze_, resize_, t_, ...)
    in the program's own files: on an output that another output of a compiled function aliases, they change both."""
    return _calls(files, lambda n: n.func.attr in _INPLACE_SHAPE_OPS)


def round_decimals_calls(files):
    """[(path, line, code)]: torch.round(x, decimals=N) / x.round(decimals=N) with N != 0 in the program's own files."""
    import ast
    return _calls(files, lambda n: n.func.attr in ("round", "round_") and any(
        k.arg == "decimals" and not (isinstance(k.value, ast.Constant) and k.value.value == 0) for k in n.keywords))


def state_branches(files):
    """[(path, line, code)] of `if self.<attr> is NAME:` where NAME is a module-level instance of one of the program's
    own classes, not an Enum (an Enum member, a str, an int or a bool is guarded by value; review of 0.33.135)."""
    import ast
    out = []
    for path in files:
        tree = _tree(path)
        if tree is None:
            continue
        plain = {c.name for c in tree.body if isinstance(c, ast.ClassDef)
                 and not any("Enum" in ast.unparse(b) or "Flag" in ast.unparse(b) for b in c.bases)}

        def made(v):   # `Cls(...)` or a tuple of them, Cls one of the plain classes
            vals = v.elts if isinstance(v, ast.Tuple) else [v]
            return all(isinstance(x, ast.Call) and isinstance(x.func, ast.Name) and x.func.id in plain for x in vals)

        objs = set()
        # module-level assignments, also inside a module-level if/else (the test programs' FIXED switch)
        for a in [n for n in tree.body] + [b for n in tree.body if isinstance(n, ast.If) for b in n.body + n.orelse]:
            if isinstance(a, ast.Assign) and made(a.value):
                objs |= {e.id for t in a.targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])
                         if isinstance(e, ast.Name)}
        for i, line in enumerate(read_text(path).splitlines(), 1):
            m = _STATE_BRANCH_RE.match(line)
            if m and m.group(2) in objs:
                out.append((path, i, line.strip()))
    return out


# `if self.<attr> is <NAME>`: a branch on which object an attribute holds
_STATE_BRANCH_RE = re.compile(r"^\s*(?:el)?if\s+(self\.\w+)\s+is\s+([A-Za-z_]\w*)\s*:")
