"""Code the compile-time command runs INSIDE the user's unmodified program through the startup hook
(cdlib.run.proc.startup_env [{"code": ...}], applied right after the program imports torch).

regional(report): torch.compile(module) on a module that holds a ModuleList/Sequential of >= 2 layers
    of one class compiles each of those layers instead (layer.compile(), PyTorch's regional
    compilation recipe) and leaves the outer model eager. Functions and other modules: unchanged.
save_artifacts(path): at exit, torch.compiler.save_cache_artifacts() -> bytes written to path.
load_artifacts(path, report): before anything compiles, torch.compiler.load_cache_artifacts(bytes).
Each writes what it did as JSON to `report` (or path + ".json"). Every process that imports torch runs the hook,
torch's own compile workers included (they do on torch 2.9-2.11): a report is written where something was done,
and a process with nothing to report never overwrites one that another process wrote."""
import atexit
import json
import os


def _write(path, obj, only_if_new=False):
    if only_if_new and os.path.exists(path):
        return
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1, default=str)


def code(func, *args):
    """The python statement the startup hook runs: load this file by path and call func(*args)."""
    from . import startup_code   # (not at the top: the user's program loads this file by path)
    return startup_code(__file__, func, *args)


def _repeated(model):
    """(dotted name, container) of the largest ModuleList/Sequential of >= 2 children of one class, a block: not
    one of torch.nn's own single layers (a list of Embeddings or Linears compiled one by one saves nothing and
    leaves the rest of the model eager; blind A/B batch 33)."""
    import torch.nn as nn
    best = None
    for name, m in model.named_modules():
        if isinstance(m, (nn.ModuleList, nn.Sequential)) and len(m) >= 2:
            kinds = {type(c) for c in m}
            layer = next(iter(kinds))
            single = layer.__module__.startswith("torch.nn.") and not any(True for _ in m[0].children())
            if len(kinds) == 1 and not single and (best is None or len(m) > len(best[1])):
                best = (name or "(the model itself)", m)
    return best


def regional(report):
    import torch
    import torch.nn as nn
    orig = torch.compile
    done = []

    def patched(model=None, *args, **kwargs):
        if model is None:   # @torch.compile(...) decorator form
            return lambda m: patched(m, *args, **kwargs)
        if isinstance(model, nn.Module) and not args:
            found = _repeated(model)
            if found is not None:
                name, container = found
                for layer in container:
                    layer.compile(**kwargs)
                done.append({"model": type(model).__name__, "container": name, "layers": len(container),
                             "layer_class": type(container[0]).__name__, "kwargs": sorted(kwargs)})
                _write(report, done)
                return model
        return orig(model, *args, **kwargs)

    torch.compile = patched


def save_artifacts(path):
    def _save():
        import torch
        res = torch.compiler.save_cache_artifacts()
        info = {"saved": False}
        if res is not None:
            blob, cache_info = res
            with open(path, "wb") as f:
                f.write(blob)
            info = {"saved": True, "bytes": len(blob), "artifacts": _info(cache_info)}
        _write(path + ".json", info, only_if_new=not info["saved"])
    atexit.register(_save)


def load_artifacts(path, report):
    import torch
    with open(path, "rb") as f:
        blob = f.read()
    info = torch.compiler.load_cache_artifacts(blob)
    _write(report, {"loaded": info is not None, "bytes": len(blob), "artifacts": _info(info)}, only_if_new=True)


def _info(cache_info):
    """CacheInfo -> {kind: count} (its fields are lists of keys per artifact kind)."""
    if cache_info is None:
        return {}
    out = {}
    for k, v in (getattr(cache_info, "artifacts", None) or {}).items():
        out[str(getattr(k, "value", k))] = len(v) if hasattr(v, "__len__") else v
    if not out:
        for k in dir(cache_info):
            if k.endswith("_artifacts"):
                v = getattr(cache_info, k)
                if isinstance(v, list):
                    out[k[:-len("_artifacts")]] = len(v)
    return out
