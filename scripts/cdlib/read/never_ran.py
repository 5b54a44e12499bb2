"""Why a program that calls torch.compile never ran a compiled frame, read from its source (no torch
import): the wrapper torch.compile returns was thrown away, rebound to a local name, or bypassed by
calling a method of the model through it (`compiled.generate(...)` runs the original module: only
calling the wrapper itself is compiled), or by calling `.forward(...)` directly (blind A/B batch 7: a
sentence encoder's `encode()` called `self.forward` after `encoder.compile()`). Blind A/B batch 5: a Llama benchmark and a forecaster's
`self = torch.compile(self)`. Consulted when the trace shows no compiled frame, and (compiled_ran) when
other compiled frames ran: then a finding names the part of the program that still runs uncompiled."""
import ast
import re
import os

# nn.Module methods that do not run the model (calling them on the wrapper bypasses nothing)
_MODULE_ONLY = {"forward", "train", "eval", "to", "cuda", "cpu", "half", "float", "double", "bfloat16", "type",
                "parameters", "named_parameters", "buffers", "named_buffers", "modules", "named_modules",
                "children", "named_children", "state_dict", "load_state_dict", "zero_grad", "requires_grad_",
                "apply", "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
                "register_full_backward_pre_hook", "register_buffer", "register_parameter", "add_module",
                "get_submodule", "get_parameter", "get_buffer", "extra_repr", "share_memory", "compile",
                "set_submodule", "to_empty", "ipu", "xpu", "mtia"}


def _is_compile(node):
    f = node.func if isinstance(node, ast.Call) else None
    return isinstance(f, ast.Attribute) and f.attr == "compile" and isinstance(f.value, ast.Name) \
        and f.value.id == "torch"


def _trees(files):
    """(path, AST) of each file that reads and parses."""
    for path in files:
        try:
            with open(path, encoding="utf-8") as fh:
                yield path, ast.parse(fh.read())
        except (OSError, SyntaxError, ValueError):
            continue


# methods that do not run the model (config, I/O, setup): calling them on the wrapper bypasses nothing.
# Prefixes, and exact names for prefixes that also name model-running methods (get_image_features runs it)
_SETUP = ("set_", "save", "load", "push_", "resize_", "tie_", "num_", "print", "gradient_checkpointing",
          "enable_", "disable_", "register_", "from_", "init_", "post_init", "prepare_", "add_", "named_", "fuse_",
          "unfuse_")
_SETUP_NAMES = {"get_input_embeddings", "get_output_embeddings", "get_encoder", "get_decoder", "get_extended_attention_mask",
                "get_head_mask", "get_position_embeddings", "get_memory_footprint", "get_parameter", "get_buffer",
                "get_submodule", "get_extra_state", "reset_parameters", "setup_caches", "merge_and_unload",
                "to_bettertransformer", "reverse_bettertransformer", "config", "generation_config"}


def _scopes(tree):
    """{id(node): the FunctionDef/Lambda/Module enclosing it}."""
    out = {}

    def visit(node, scope):
        for child in ast.iter_child_nodes(node):
            out[id(child)] = scope
            visit(child, child if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else scope)
    visit(tree, tree)
    return out


def findings(files, compiled_ran=False):
    """[(path, line, what and fix)] for each way a file's torch.compile result goes unused. compiled_ran:
    other compiled frames did run, so only what is certain from the source counts (a direct `.forward` call
    only on a name the file compiles in place: the wrapper's own .forward is compiled)."""
    out = []
    for path, tree in _trees(files):
        short = os.path.basename(path)
        scope = _scopes(tree)
        wrappers = {}   # (scope, name) -> [Assign nodes binding name to torch.compile(...)]; scope None: an attribute
        functions = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for node in ast.walk(tree):
            if isinstance(node, ast.Expr) and _is_compile(node.value):
                a0 = node.value.args[0] if node.value.args else None
                arg = ast.unparse(a0) if a0 is not None else "the model"
                if arg in functions:
                    fix = f"decorate `def {arg}` with `@torch.compile` or rebind `{arg} = torch.compile({arg})`"
                elif isinstance(a0, ast.Name):
                    fix = f"use `{arg}.compile()` (in place, for a module) or `{arg} = torch.compile({arg})`"
                else:   # a bound method or a library function has no .compile()
                    fix = f"rebind it: `{arg} = torch.compile({arg})`"
                out.append((path, node.lineno, f"`{ast.unparse(node.value)}` at {short}:{node.lineno} throws away the "
                            f"compiled wrapper it returns ({arg} itself is not changed): {fix}"))
            elif isinstance(node, ast.Assign) and _is_compile(node.value) and len(node.targets) == 1:
                tgt = node.targets[0]
                if isinstance(tgt, ast.Name) and tgt.id == "self":
                    out.append((path, node.lineno, f"`self = torch.compile(...)` at {short}:{node.lineno} only rebinds "
                                "the method's local name `self`: the caller's module stays uncompiled; use "
                                "`self.compile()` (compiles the module in place)"))
                elif isinstance(tgt, ast.Name):
                    wrappers.setdefault((id(scope.get(id(node))), ast.unparse(tgt)), []).append(node)
                elif isinstance(tgt, ast.Attribute):   # self.model = torch.compile(...): any method may call it
                    wrappers.setdefault((None, ast.unparse(tgt)), []).append(node)
        calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)),
                       key=lambda n: (n.lineno, n.col_offset))
        reported = set()
        for node in calls:   # in line order: a call through the wrapper after it was bound, in the same function
            f = node.func
            key = (id(scope.get(id(node))), ast.unparse(f.value))
            if key not in wrappers:
                key = (None, key[1])
            if key in reported or key not in wrappers or f.attr.startswith(("_",) + _SETUP) or f.attr in _MODULE_ONLY \
                    or f.attr in _SETUP_NAMES:
                continue
            src = max((a for a in wrappers[key] if key[0] is None or a.lineno < node.lineno), key=lambda a: a.lineno,
                      default=None)
            if src is None:
                continue
            reported.add(key)
            w = key[1]
            model = ast.unparse(src.value.args[0]) if src.value.args else "model"
            out.append((path, node.lineno, f"`{w}.{f.attr}(...)` at {short}:{node.lineno} calls the original "
                        f"module's `{f.attr}` through the wrapper `{w}` = torch.compile(...) "
                        f"({short}:{src.lineno}): only calling the wrapper itself is compiled, so `{f.attr}`'s "
                        f"own calls run uncompiled; compile in place with `{model}.compile(...)` (or "
                        f"`{model}.forward = torch.compile({model}.forward)`) and call `{model}.{f.attr}`"))
        # Module.compile() / torch.compile(m) compile the module's call; a direct .forward(...) skips it
        compiles = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "compile"
                       and not (isinstance(n.func.value, ast.Name) and n.func.value.id in ("torch", "re"))
                       for n in ast.walk(tree)) or any(_is_compile(n) for n in ast.walk(tree))
        in_place = {ast.unparse(n.func.value) for n in ast.walk(tree) if isinstance(n, ast.Call)
                    and isinstance(n.func, ast.Attribute) and n.func.attr == "compile" and not _is_compile(n)}
        direct = [n for n in ast.walk(tree) if compiles and isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                  and n.func.attr == "forward" and not (isinstance(n.func.value, ast.Call)
                                                        and ast.unparse(n.func.value.func) == "super")
                  and ast.unparse(n.func.value) not in {k[1] for k in wrappers}   # the wrapper's .forward is compiled
                  and (not compiled_ran or ast.unparse(n.func.value) in in_place)]
        if direct:
            n = min(direct, key=lambda c: c.lineno)
            obj = ast.unparse(n.func.value)
            out.append((path, n.lineno, f"`{obj}.forward(...)` at {short}:{n.lineno} calls forward directly: "
                        f"`.compile()` (and the torch.compile wrapper) compile the module's call, so a direct "
                        f"`.forward(...)` runs uncompiled; call the module itself: `{obj}(...)`"))
    return out


def exports(files):
    """[(path, line, call)] of the torch.export calls in the program's files (torch.export.export(...),
    export(...) imported from torch.export, torch.export.load): a program that exports, not compiles."""
    out = []
    for path, tree in _trees(files):
        names = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                 and n.module == "torch.export" for a in n.names if a.name in ("export", "load")}
        for n in ast.walk(tree):
            if isinstance(n, ast.Call):
                f = ast.unparse(n.func)
                if f in ("torch.export.export", "torch.export.load") or f in names:
                    out.append((path, n.lineno, f))
    return sorted(out, key=lambda x: (x[0], x[1]))


PACKAGE_LOADERS = ("aoti_load_package", "aot_load", "AOTIModelPackageLoader", "load_package")


def aoti_loads(files):
    """[(path, line, call)] of the calls that load an AOTInductor package in the program's files
    (torch._inductor.aoti_load_package, torch._export.aot_load, AOTIModelPackageLoader, load_package)."""
    out = []
    for path, tree in _trees(files):
        for n in ast.walk(tree):
            if isinstance(n, ast.Call):
                f = ast.unparse(n.func)
                last = f.rsplit(".", 1)[-1]
                if last in PACKAGE_LOADERS and (last != "load_package" or f.startswith("torch.")):
                    out.append((path, n.lineno, f))
    return sorted(out, key=lambda x: (x[0], x[1]))


def functional_dropouts(files):
    """[(path, line)] of the calls to the functional dropout (F.dropout, torch.nn.functional.dropout, dropout1d-3d)
    that pass no `training`: it defaults to training=True, and module.eval() does not reach it (alpha_dropout and
    feature_alpha_dropout default to training=False: not listed; nor a call with *args or **kwargs)."""
    out = []
    for path, tree in _trees(files):
        for n in ast.walk(tree):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                    re.fullmatch(r"dropout(?:[123]d)?", n.func.attr) and \
                    not any(isinstance(a, ast.Starred) for a in n.args) and \
                    re.search(r"(?:^|\.)(?:F|functional)$", ast.unparse(n.func.value)) and \
                    len(n.args) < 3 and not any(k.arg in ("training", None) for k in n.keywords):
                out.append((path, n.lineno))
    return sorted(out)


def eval_calls(files):
    """[(path, line)] of the `<module>.eval()` / `.train(False)` calls in the program's files."""
    out = []
    for path, tree in _trees(files):
        for n in ast.walk(tree):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and (
                    (n.func.attr == "eval" and not n.args and not n.keywords) or
                    (n.func.attr == "train" and len(n.args) == 1 and isinstance(n.args[0], ast.Constant)
                     and n.args[0].value is False)):
                out.append((path, n.lineno))
    return sorted(out)


def mutated_buffers(files):
    """[(path, line, name)] where a buffer the program registers (`self.register_buffer("name", ...)`) is
    changed in place (`self.name.copy_(...)`, `.add_`, `self.name[...] = ...`): state a module carries from
    one call to the next, which an AOTInductor package keeps a copy of. One line per buffer, one in a
    `forward` first."""
    trees = list(_trees(files))
    names = {n.args[0].value for _, tree in trees for n in ast.walk(tree)
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "register_buffer"
             and n.args and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str)}
    found = []

    def buf(node):   # self.<registered buffer>
        return node.attr if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
            and node.value.id == "self" and node.attr in names else None
    for path, tree in trees:
        scope = _scopes(tree)
        for n in ast.walk(tree):
            name = None
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr.endswith("_") \
                    and not n.func.attr.startswith("_"):
                name = buf(n.func.value)
            elif isinstance(n, (ast.Assign, ast.AugAssign)):
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                    name = name or (buf(t.value) if isinstance(t, ast.Subscript) else
                                    buf(t) if isinstance(n, ast.AugAssign) else None)
            if name:
                fn = getattr(scope.get(id(n)), "name", None)
                found.append((fn != "forward", path, n.lineno, name))
    out = {}
    for _, path, line, name in sorted(found):
        out.setdefault(name, (path, line, name))
    return list(out.values())


def compile_calls(files):
    """[(path, line, code)] of each torch.compile(...) call and `<module>.compile(...)` call in the files (a
    .compile call with a positional argument is some other library's: re.compile(pattern), env.compile(src))."""
    out = []
    for path, tree in _trees(files):
        for n in ast.walk(tree):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "compile" and (
                    _is_compile(n) or not n.args):
                out.append((path, n.lineno, ast.unparse(n)))
    return sorted(set(out), key=lambda x: (x[0], x[1]))


def static_compiles(files):
    """[(path, line, what)] of what turns automatic dynamic shapes off in the source: a compile call with
    dynamic=False (what: the decorated function's name, or the last name of the compiled argument:
    `torch.compile(model.forward, dynamic=False)` -> "forward"), or an assignment
    `torch._dynamo.config.automatic_dynamic_shapes = False` (what: None)."""
    out = []
    for path, tree in _trees(files):
        for n in ast.walk(tree):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for d in n.decorator_list:
                    if isinstance(d, ast.Call) and _static_kw(d):
                        out.append((path, d.lineno, n.name))
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "compile" \
                    and _static_kw(n) and n.args:
                out.append((path, n.lineno, ast.unparse(n.args[0]).split(".")[-1]))
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "compile" \
                    and _static_kw(n):   # model.compile(dynamic=False): the module's forward
                out.append((path, n.lineno, "forward"))
            elif isinstance(n, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "automatic_dynamic_shapes"
                                                   for t in n.targets) \
                    and isinstance(n.value, ast.Constant) and n.value.value is False:
                out.append((path, n.lineno, None))
    return sorted(set(out), key=lambda x: (x[0], x[1]))


def mark_dynamic_calls(files):
    """[(path, line, code, dims)] of each torch._dynamo.mark_dynamic / maybe_mark_dynamic call in the files; dims:
    the constant dim indices it marks (an int, or a list/tuple of ints), None when not constant."""
    out = []
    for path, tree in _trees(files):
        for n in ast.walk(tree):
            if isinstance(n, ast.Call) and ast.unparse(n.func).split(".")[-1] in ("mark_dynamic", "maybe_mark_dynamic") \
                    and len(n.args) >= 2:
                d = n.args[1]
                vals = [d] if isinstance(d, ast.Constant) else list(d.elts) if isinstance(d, (ast.List, ast.Tuple)) else None
                dims = [v.value for v in vals if isinstance(v, ast.Constant) and isinstance(v.value, int)] \
                    if vals is not None else None
                out.append((path, n.lineno, ast.unparse(n), dims if dims is None or len(dims) == len(vals) else None))
    return sorted(out, key=lambda x: (x[0], x[1]))


def _static_kw(call):
    return any(k.arg == "dynamic" and isinstance(k.value, ast.Constant) and k.value.value is False
               for k in call.keywords)


def _fake_defs(files):
    """(path, def node, name) of each fake kernel the files register (see fake_kernels)."""
    for path, tree in _trees(files):
        for n in ast.walk(tree):
            if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for d in n.decorator_list:
                f = d.func if isinstance(d, ast.Call) else d
                if isinstance(f, ast.Attribute) and f.attr in ("register_fake", "impl_abstract", "register_meta"):
                    arg = d.args[0] if isinstance(d, ast.Call) and d.args else None
                    name = arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else \
                        ast.unparse(f.value) if not isinstance(d, ast.Call) else n.name
                    yield path, n, name


def fake_kernels(files):
    """[(path, line, name)] of the fake kernels the program's files register (`@torch.library.register_fake(
    "ns::op")`, `@op.register_fake`, `torch.library.impl_abstract`): name is the op string or the function
    registered. A compiled run that crashes where eager passes may be one of them returning another shape than
    the real kernel (blind A/B batch 20: a data-dependent length declared as one per anchor, a segfault)."""
    return sorted(((path, n.lineno, name) for path, n, name in _fake_defs(files)), key=lambda x: (x[0], x[1]))


def fake_kernel_at(path, line):
    """(def line, name) of the fake kernel (fake_kernels) whose body holds path:line, else None."""
    for _, n, name in sorted(_fake_defs([path]), key=lambda x: x[1].lineno):
        if n.lineno <= line <= (n.end_lineno or n.lineno):
            return n.lineno, name
    return None


# torch._dynamo.reset(), _dynamo.reset(), dynamo.reset() (an alias) and torch.compiler.reset()
_RESET_CALLS = ("dynamo.reset", "torch.compiler.reset")


def reset_calls(files):
    """[(path, line, code)] of each torch._dynamo.reset() / torch.compiler.reset() call in the files."""
    out = []
    for path, tree in _trees(files):
        for n in ast.walk(tree):
            if isinstance(n, ast.Call) and ast.unparse(n.func).endswith(_RESET_CALLS):
                out.append((path, n.lineno, ast.unparse(n)))
    return sorted(out)

