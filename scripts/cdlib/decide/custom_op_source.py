"""The program's own custom op definitions, read with ast (no torch import): an in-place write declared as
no mutation, an op returning a Python number, outputs sharing storage with an input, a clone passed beside
its source to a mutating op, aten overrides, triton ops, custom jvps under forward-mode AD. Read by analyze,
vs_eager and analyze_errors; custom_op_code.py holds what errors name (the op, its fake kernels)."""
import re

from .program_code import read_text
from ..read.frames import loc as _loc


def custom_op_mutation(files):
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


_FORWARD_AD = re.compile(r"\b(?:func\.jvp|jacfwd|forward_ad|functional\.jvp|linearize)\b")


def custom_jvps_under_forward_ad(files):
    """[(path, line, class)] of the torch.autograd.Function subclasses with their own `jvp` in a program that uses
    forward-mode AD (torch.func.jvp / jacfwd / linearize, torch.autograd.forward_ad): under torch.compile Dynamo
    traces such a Function's forward and differentiates that, without its jvp (pytorch#192985, open on 2.15.0)."""
    import ast
    texts = {f: read_text(f) for f in files}
    if not any(_FORWARD_AD.search(t) for t in texts.values()):
        return []
    out = []
    for f, text in texts.items():
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        for n in ast.walk(tree):
            if isinstance(n, ast.ClassDef) and any(ast.unparse(b).split(".")[-1] == "Function" for b in n.bases) \
                    and any(isinstance(m, ast.FunctionDef) and m.name == "jvp" for m in n.body):
                out.append((f, n.lineno, n.name))
    return out


def scalar_custom_ops(files):
    """[(path, line, name)] of the custom ops (@torch.library.custom_op) declared to return a Python number
    (`-> float`, `-> int`, `-> bool`): under torch.compile the call's result is its fake kernel's value at trace
    time, a constant in the graph, and the real op's result is dropped."""
    import ast
    out = []
    for f in files:
        try:
            tree = ast.parse(read_text(f))
        except (SyntaxError, ValueError):
            continue
        for n in ast.walk(tree):
            if isinstance(n, ast.FunctionDef) and n.returns is not None \
                    and ast.unparse(n.returns) in ("float", "int", "bool") \
                    and any(isinstance(d, ast.Call) and ast.unparse(d.func).split(".")[-1] == "custom_op"
                            for d in n.decorator_list):
                name = next((a.value for d in n.decorator_list if isinstance(d, ast.Call) for a in d.args[:1]
                             if isinstance(a, ast.Constant) and isinstance(a.value, str)), n.name)
                out.append((f, n.lineno, name))
    return out


_VIEWS = ("numpy", "detach", "view", "data", "reshape", "view_as", "__array__", "cpu", "t", "T", "mT", "transpose",
          "permute", "squeeze", "unsqueeze", "expand", "narrow", "select", "unflatten")


def _own_nodes(fn):
    """The nodes of a function's body, nested functions and lambdas left out."""
    import ast
    todo, out = list(fn.body), []
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        out.append(n)
        todo.extend(ast.iter_child_nodes(n))
    return out


def _custom_op_decorator(fn):
    """(the @torch.library.custom_op(...) decorator call of a def, its mutates_args node), or (None, None)."""
    import ast
    deco = next((d for d in fn.decorator_list if isinstance(d, ast.Call)
                 and ast.unparse(d.func).split(".")[-1] == "custom_op"), None)
    return deco, next((k.value for k in (deco.keywords if deco else []) if k.arg == "mutates_args"), None)


def _op_qualname(deco, fn):
    """The name a @custom_op decorator registers ("ns::op"), else the function's name."""
    import ast
    return next((a.value for a in deco.args[:1] if isinstance(a, ast.Constant) and isinstance(a.value, str)), fn.name)


def _local_assigns(body):
    """{name: [values]} of the plain `name = value` assignments among a function's own nodes (_own_nodes)."""
    import ast
    out = {}
    for st in body:
        if isinstance(st, ast.Assign):
            for t in st.targets:
                if isinstance(t, ast.Name):
                    out.setdefault(t.id, []).append(st.value)
    return out


def undeclared_mutations(files):
    """[(path, line, name, arg)] of the custom ops (@torch.library.custom_op) declared with an empty mutates_args that
    appear to write one of their Tensor arguments in place: `x.add_(...)`, `x[...] = ...`, or through a view or NumPy
    array of it (`arr = x.detach().cpu().numpy()` then `np.divide(..., out=arr)`, `row = x[0]; row.zero_()`). A name
    ever rebound to something else (`x = x.clone()`) is not followed, nor are nested functions (review of batch 47): a
    reading of the code, to confirm with torch.library.opcheck (blind A/B batch 47: a row normalization in NumPy)."""
    import ast
    out = []
    for f in files:
        try:
            tree = ast.parse(read_text(f))
        except (SyntaxError, ValueError):
            continue
        for n in ast.walk(tree):
            if not isinstance(n, ast.FunctionDef):
                continue
            deco, mut = _custom_op_decorator(n)
            if deco is None or not (isinstance(mut, (ast.Tuple, ast.List)) and not mut.elts):
                continue
            body = _own_nodes(n)

            def base_of(e):   # the name an expression is a view of (through view methods and indexing), or None
                while True:
                    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in _VIEWS:
                        e = e.func.value
                    elif isinstance(e, ast.Attribute) and e.attr in _VIEWS:
                        e = e.value
                    elif isinstance(e, ast.Subscript):
                        e = e.value
                    else:
                        return e.id if isinstance(e, ast.Name) else None
            tensors = [a.arg for a in n.args.args if a.annotation is not None
                       and re.fullmatch(r"(?:torch\.)?Tensor|Optional\[(?:torch\.)?Tensor\]", ast.unparse(a.annotation))]
            assigns = _local_assigns(body)
            alias = {a: a for a in tensors if a not in assigns}   # an argument rebound (x = x.clone()) is not followed
            for _ in range(3):   # views of views
                for name, values in assigns.items():
                    bases = {base_of(v) for v in values}
                    if name not in alias and len(values) == 1 and bases <= set(alias) and bases:
                        alias[name] = alias[bases.pop()]
            hit = None
            for st in body:
                if isinstance(st, ast.Call) and isinstance(st.func, ast.Attribute) and st.func.attr.endswith("_") \
                        and not st.func.attr.endswith("__") and st.func.attr != "requires_grad_" \
                        and base_of(st.func.value) in alias:
                    hit = alias[base_of(st.func.value)]
                elif isinstance(st, ast.Call) and any(k.arg == "out" and base_of(k.value) in alias for k in st.keywords):
                    hit = next(alias[base_of(k.value)] for k in st.keywords if k.arg == "out" and base_of(k.value) in alias)
                elif isinstance(st, (ast.Assign, ast.AugAssign)):
                    for t in (st.targets if isinstance(st, ast.Assign) else [st.target]):
                        if isinstance(t, ast.Subscript) and base_of(t) in alias:
                            hit = alias[base_of(t)]
                if hit:
                    break
            if hit:
                name = _op_qualname(deco, n)
                out.append((f, n.lineno, name, hit))
    return out


def shared_outputs(files):
    """[(path, line, name, how)] of the custom ops (@torch.library.custom_op) that return a tensor kept outside the
    call: a module-level name, an item of one (`_CACHE[key]`), or what a module-level helper returns that keeps
    tensors in a module-level dict or list (a preallocated workspace). Two calls then return the same storage, which
    compiled code, treating every custom-op output as new, may read after the second call overwrote it (blind A/B
    batch 52: a normalizer's workspace keyed by shape; query and document vectors became the same). A reading of the
    code: opcheck passes on such ops."""
    import ast
    out = []
    for f in files:
        try:
            tree = ast.parse(read_text(f))
        except (SyntaxError, ValueError):
            continue
        containers = {t.id for st in tree.body if isinstance(st, (ast.Assign, ast.AnnAssign))
                      for t in (st.targets if isinstance(st, ast.Assign) else [st.target]) if isinstance(t, ast.Name)
                      and isinstance(st.value, (ast.Dict, ast.List, ast.Call)) and (
                          not isinstance(st.value, ast.Call) or ast.unparse(st.value.func).split(".")[-1] in (
                              "dict", "list", "OrderedDict", "defaultdict", "WeakValueDictionary"))}
        module_names = {t.id for st in tree.body if isinstance(st, (ast.Assign, ast.AnnAssign))
                        for t in (st.targets if isinstance(st, ast.Assign) else [st.target]) if isinstance(t, ast.Name)}

        def keeps(fn):   # a helper that returns what a module-level container holds, or whose results are cached
            if any(ast.unparse(d).split("(")[0].split(".")[-1] in ("lru_cache", "cache") for d in fn.decorator_list):
                return True
            local = {t.id for x in ast.walk(fn) if isinstance(x, ast.Assign) for t in x.targets
                     if isinstance(t, ast.Name) and _from_container(x.value)}
            return any(isinstance(r.value, ast.Name) and r.value.id in local or _from_container(r.value)
                       for r in ast.walk(fn) if isinstance(r, ast.Return) and r.value is not None)

        def _from_container(v):   # CACHE[key], CACHE.get(key), CACHE.setdefault(key, ...)
            return (isinstance(v, ast.Subscript) and isinstance(v.value, ast.Name) and v.value.id in containers) or (
                isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr in ("get", "setdefault")
                and isinstance(v.func.value, ast.Name) and v.func.value.id in containers)
        helpers = {st.name for st in tree.body if isinstance(st, ast.FunctionDef) and keeps(st)}
        for n in ast.walk(tree):
            if not isinstance(n, ast.FunctionDef):
                continue
            deco, _ = _custom_op_decorator(n)
            if deco is None:
                continue
            body = _own_nodes(n)
            assigns = _local_assigns(body)   # (bound: every local name, however it is bound)
            bound = {a.arg for a in n.args.args} | {x.id for x in body
                                                     if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store)}
            how = None
            for r in (x.value for x in body if isinstance(x, ast.Return) and x.value is not None):
                vals = assigns.get(r.id, []) if isinstance(r, ast.Name) and r.id in assigns else [r]
                vals = [b for v in vals for b in ((v.body, v.orelse) if isinstance(v, ast.IfExp) else (v,))]
                if isinstance(r, ast.Name) and r.id in bound and r.id not in assigns:
                    continue   # bound locally some other way (vals, _ = torch.sort(x)): not the module's name
                for v in vals:
                    if _from_container(v):
                        how = f"an item of the module-level `{ast.unparse(v.func.value if isinstance(v, ast.Call) else v.value)}`"
                    elif isinstance(v, ast.Name) and v.id in module_names and v.id not in bound:
                        how = f"the module-level `{v.id}`"
                    elif isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in helpers:
                        how = f"`{v.func.id}(...)`, which keeps tensors in a module-level container"
                if how:
                    break
            if how:
                name = _op_qualname(deco, n)
                out.append((f, n.lineno, name, how))
    return out


def triton_op_defs(files):
    """[(path, line)] of the program's torch.library.triton_op definitions."""
    return [(f, i) for f in files for i, ln in enumerate(read_text(f).splitlines(), 1)
            if re.search(r"\btriton_op\(", ln) and not ln.lstrip().startswith("#")]


def aten_overrides(files):
    """[(path, line, op, kernel)] of the program's Python kernels for PyTorch's own ops: `lib.impl("tanh", fn,
    "AutogradCPU")` on a name bound to torch.library.Library("aten", ...), or @torch.library.impl("aten::tanh", ...)
    on a def (blind A/B batch 48: a NumPy tanh for aten::tanh on AutogradCPU; torch.compile runs such a kernel on fake
    tensors, pytorch#139707)."""
    import ast
    out = []
    for path in files:
        text = read_text(path)
        if "aten" not in text:
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        libs = set()
        for n in ast.walk(tree):   # lib = torch.library.Library("aten", "IMPL") (also self._lib = ..., global _lib)
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) \
                    and ast.unparse(n.value.func).split(".")[-1] == "Library" and n.value.args \
                    and isinstance(n.value.args[0], ast.Constant) and n.value.args[0].value == "aten":
                libs.update(ast.unparse(t) for t in n.targets)
        for n in ast.walk(tree):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "impl" and n.args \
                    and ast.unparse(n.func.value) in libs and isinstance(n.args[0], ast.Constant) \
                    and isinstance(n.args[0].value, str):
                kernel = ast.unparse(n.args[1]) if len(n.args) > 1 else "?"
                out.append((path, n.lineno, _aten_op(n.args[0].value), kernel))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for d in n.decorator_list:
                    if isinstance(d, ast.Call) and ast.unparse(d.func).endswith("library.impl") and d.args \
                            and isinstance(d.args[0], ast.Constant) and str(d.args[0].value).startswith("aten::"):
                        out.append((path, d.lineno, _aten_op(d.args[0].value), n.name))
    return out


def _aten_op(name):
    """The bare op of an aten op name: "aten::tanh", "tanh.out" -> "tanh"."""
    return name.split("::")[-1].split(".")[0]


def _clone_source(e):
    """The expression a clone was taken from (`x.clone()`, `x.detach().clone()`, `torch.clone(x)`, `self.state.clone()`),
    unparsed, or None."""
    import ast
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "clone" and not e.args:
        base = e.func.value
    elif isinstance(e, ast.Call) and ast.unparse(e.func) == "torch.clone" and len(e.args) == 1:
        base = e.args[0]
    else:
        return None
    while isinstance(base, ast.Call) and isinstance(base.func, ast.Attribute) and base.func.attr == "detach" \
            and not base.args:
        base = base.func.value
    return ast.unparse(base) if isinstance(base, (ast.Name, ast.Attribute)) else None


def clone_into_mutating_op(files):
    """[(path, line, op, clone, source)] of calls to the program's own mutating custom ops (@torch.library.custom_op with
    a non-empty mutates_args, called by its function name or torch.ops.ns.name) that pass a clone to an argument the op
    only reads and the tensor it was cloned from to one it writes (`raw = x.clone()` then `op_(raw, x)` with
    mutates_args=("dst",)): under grad mode Inductor can drop the clone and reinplace, so the op reads the buffer it
    writes (pytorch#198031, open; blind A/B batch 49). A clone passed as the written output (`out = x.clone();
    op_(out, x)` writing out) is the safe pattern: not listed (review of 0.33.105)."""
    import ast
    trees = []
    for f in files:
        try:
            trees.append((f, ast.parse(read_text(f))))
        except (SyntaxError, ValueError):
            continue
    ops = {}   # call name -> (parameter names, the mutated ones; None: not read from the code)
    for _, tree in trees:
        for n in ast.walk(tree):
            if not isinstance(n, ast.FunctionDef):
                continue
            deco, mut = _custom_op_decorator(n)
            if deco is None or mut is None or (isinstance(mut, (ast.Tuple, ast.List)) and not mut.elts):
                continue
            params = [a.arg for a in n.args.posonlyargs + n.args.args + n.args.kwonlyargs]
            if isinstance(mut, (ast.Tuple, ast.List)) and all(isinstance(x, ast.Constant) for x in mut.elts):
                mutated = {str(x.value) for x in mut.elts}
            elif isinstance(mut, ast.Constant) and isinstance(mut.value, str) and mut.value != "unknown":
                mutated = {mut.value}
            else:
                mutated = None   # "unknown" or computed: every tensor argument may be written
            names = [n.name]
            if deco.args and isinstance(deco.args[0], ast.Constant) and "::" in str(deco.args[0].value):
                ns, name = str(deco.args[0].value).split("::", 1)
                names += [f"torch.ops.{ns}.{name}", f"torch.ops.{ns}.{name}.default"]
            for nm in names:
                ops[nm] = (params, mutated)
    out = []
    for f, tree in trees if ops else []:
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            clones = {}   # (an inline clone needs none: ops is enough to look at the calls)
            for st in ast.walk(fn):
                if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                    src = _clone_source(st.value)
                    if src:
                        clones[st.targets[0].id] = src
            for c in ast.walk(fn):
                if not (isinstance(c, ast.Call) and ast.unparse(c.func) in ops):
                    continue
                params, mutated = ops[ast.unparse(c.func)]
                bound = {}   # parameter -> the argument's node
                for i, a in enumerate(c.args):
                    bound[params[i] if i < len(params) else f"#{i}"] = a
                for k in c.keywords:
                    if k.arg:
                        bound[k.arg] = k.value
                written = {ast.unparse(v) for p, v in bound.items() if mutated is None or p in mutated}
                read = [v for p, v in bound.items() if mutated is not None and p not in mutated]
                texts = {ast.unparse(v) for v in read}
                for clone, src in clones.items():
                    if src in written and (clone in texts or (mutated is None and clone in written)):
                        out.append((f, c.lineno, ast.unparse(c.func), clone, src))
                for v in read:   # a clone made in the call itself: op_(x.clone(), x) (review of 0.33.110)
                    src = _clone_source(v)
                    if src and src in written:
                        out.append((f, c.lineno, ast.unparse(c.func), ast.unparse(v), src))
    return out
