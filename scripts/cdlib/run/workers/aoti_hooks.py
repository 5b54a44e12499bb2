"""Code triage's AOTI input check runs INSIDE the user's unmodified program through the startup hook
(cdlib.run.proc.startup_env [{"code": ...}]): when a loaded AOTInductor package's call raises, the shapes and
strides of the tensors it was given (input_handles[i] in torch's check message is the i-th) are written as
JSON to `report`, and the error propagates unchanged. torch's AOTI_RUNTIME_CHECK_INPUTS message names a
stride's dim and values but not the sizes; a stride on a size-1 dim reads the same memory.
And on every call, the first call whose inputs are structured unlike the export (the package binds its inputs by
position: a dict's keys in another order, a missing or extra leaf, a non-tensor leaf it drops; torch checks none of
it) is written to `structure` as {"path", "exported", "called", "at", "code"} (blind A/B batch 39: a serving worker's
feature dict built in another key order swapped two same-shaped embeddings, silently). torch's own input check
(torch.export._unlift.eq_spec, for ep.module()) allows any dict key order, as that path matches keys by name; its
type normalization (torch.Size is a tuple) is kept here."""
import json


def code(report, structure=None, packages=None):
    from . import startup_code   # (not at the top: the user's program loads this file by path)
    return startup_code(__file__, "record_inputs", report, structure, packages)


def _type_name(t):
    return "a leaf (tensor or scalar)" if t is None else getattr(t, "__name__", str(t))


def _children(s):
    return list(s.children()) if hasattr(s, "children") else list(s.children_specs)   # 2.15 / older


def _same_type(a, b):
    try:   # the pytree types that flatten alike (torch.Size and tuple), as torch's own spec check normalizes them
        from torch.fx.experimental.proxy_tensor import _pytree_subclasses_that_lose_info as lossy
    except ImportError:
        lossy = {}
    return lossy.get(a, a) is lossy.get(b, b)


def _first_difference(a, b, path=None):
    """(path, exported, called): where two pytree specs of a call's (args, kwargs) first differ (path like
    `args[0]['user_emb']`); None when they agree."""
    if path is None:   # the root: (args, kwargs)
        for name, x, y in zip(("args", "kwargs"), _children(a), _children(b)):
            d = _first_difference(x, y, name)
            if d:
                return d
        return None
    if not _same_type(a.type, b.type):
        return path, _type_name(a.type), _type_name(b.type)
    if a.context != b.context:
        return path, repr(a.context), repr(b.context)
    if a.num_children != b.num_children:
        return path, f"{a.num_children} items", f"{b.num_children} items"
    keys = a.context if isinstance(a.context, (list, tuple)) and len(a.context) == a.num_children else \
        range(a.num_children)
    for k, x, y in zip(keys, _children(a), _children(b)):
        d = _first_difference(x, y, f"{path}[{k!r}]")
        if d:
            return d
    return None


def _compiled_model_class():
    """torch's AOTICompiledModel (a loaded package), or None."""
    for mod in ("torch.export.pt2_archive._package", "torch._inductor.package.package"):   # 2.9-2.15 / older
        try:
            return getattr(__import__(mod, fromlist=["AOTICompiledModel"]), "AOTICompiledModel")
        except (ImportError, AttributeError):
            continue
    return None


def _record_packages(packages):
    """Append to the JSON list at `packages` each package the program builds (aoti_compile_and_package: its path and
    whether its weights went into the .so) and each one it loads with aoti_load_package / load_package (neither reads
    weights kept outside the .so: blind A/B batch 42, a package built with package_constants_in_so=False and
    pickle_weights segfaulted on its first call). The program's calls and results are unchanged."""
    import os
    import torch

    def note(entry):
        try:
            old = []
            if os.path.exists(packages):
                with open(packages, encoding="utf-8") as f:
                    old = json.load(f)
            with open(packages, "w", encoding="utf-8") as f:
                json.dump(old + [entry], f)
        except Exception:
            pass

    def where(path):
        return os.path.abspath(os.fspath(path)) if isinstance(path, (str, os.PathLike)) else None

    inductor = torch._inductor
    build = getattr(inductor, "aoti_compile_and_package", None)
    if build:
        def aoti_compile_and_package(*args, **kwargs):
            out = build(*args, **kwargs)
            try:
                cfg = dict(kwargs.get("inductor_configs") or {})
                from torch._inductor import config
                in_so = cfg.get("aot_inductor.package_constants_in_so", config.aot_inductor.package_constants_in_so)
                note({"built": where(out), "in_so": bool(in_so)})
            except Exception:
                pass
            return out
        inductor.aoti_compile_and_package = aoti_compile_and_package
    cls = _compiled_model_class()
    if cls is not None and hasattr(cls, "load_constants"):
        def load_constants(self, *args, _orig=cls.load_constants, **kwargs):
            note({"load_constants": True})   # (load_pt2 with load_weights_from_disk=True calls it too)
            return _orig(self, *args, **kwargs)
        cls.load_constants = load_constants
    for owner_name in ("torch._inductor", "torch._inductor.package", "torch._inductor.package.package"):
        try:
            owner = __import__(owner_name, fromlist=["x"])
        except ImportError:
            continue
        for fn in ("aoti_load_package", "load_package"):
            orig = getattr(owner, fn, None)
            if orig is None or getattr(orig, "_cd_wrapped", False):
                continue

            def load(path, *args, _orig=orig, **kwargs):
                note({"loaded": where(path)})
                return _orig(path, *args, **kwargs)
            load._cd_wrapped = True
            setattr(owner, fn, load)


def record_inputs(report, structure=None, packages=None):
    import torch
    from torch.utils import _pytree as pytree
    if packages:
        try:
            _record_packages(packages)
        except Exception:   # never change what the program does
            pass
    cls = _compiled_model_class()
    if cls is None:
        return
    try:
        from torch.export._tree_utils import reorder_kwargs
    except ImportError:
        return
    call = cls.__call__
    reported = []   # one structure report: the first call that differs

    def __call__(self, *args, **kwargs):
        if structure and not reported:
            try:
                spec = pytree.treespec_loads(self.loader.get_call_spec()[0])
                got = pytree.tree_flatten((args, reorder_kwargs(kwargs, spec) if kwargs else kwargs))[1]
                d = None if got == spec else _first_difference(spec, got)
                if d:
                    import os
                    import traceback
                    reported.append(d)
                    fr = traceback.extract_stack()[-2]   # the program's line that called the package
                    with open(structure, "w", encoding="utf-8") as f:
                        json.dump({"path": d[0], "exported": d[1], "called": d[2],
                                   "at": f"{os.path.basename(fr.filename)}:{fr.lineno}", "code": fr.line}, f)
            except Exception:   # never change what the program does
                pass
        try:
            return call(self, *args, **kwargs)
        except Exception:
            try:   # the order torch's call numbers the inputs in: keyword arguments in the exported order
                if kwargs:
                    kwargs = reorder_kwargs(kwargs, pytree.treespec_loads(self.loader.get_call_spec()[0]))
                flat = [x for x in pytree.tree_leaves((args, kwargs)) if isinstance(x, torch.Tensor)]
                with open(report, "w", encoding="utf-8") as f:
                    json.dump([{"shape": list(x.shape), "stride": list(x.stride())} for x in flat], f)
            except Exception:   # never change the program's own error
                pass
            raise
    cls.__call__ = __call__
