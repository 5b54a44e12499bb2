"""Model targets: `path/to/file.py:factory`, where factory() returns (model, args) or
(model, args, kwargs) or (model, args, kwargs, dynamic_shapes).

parse_spec() validates the spec without importing torch (the parent process); load() runs in the
worker subprocess (which may import torch) and imports the user's file as a module."""
import importlib.util
import os
import sys

from ..errors import CliError


def is_model_spec(text):
    if not text or ":" not in text:
        return False
    path, _, name = text.rpartition(":")
    return path.endswith(".py") and name.isidentifier()


def parse_spec(text):
    """'file.py:factory' -> (abs path, factory name); CliError if malformed or missing."""
    if not is_model_spec(text):
        raise CliError(f"{text!r}: expected a model target `path/to/file.py:factory`")
    path, _, name = text.rpartition(":")
    if not os.path.isfile(path):
        raise CliError(f"{path}: no such file")
    return os.path.abspath(path), name


def load(spec):
    """Import the file and call the factory. Returns dict(model, args, kwargs, dynamic_shapes).
    Runs in the worker process only."""
    path, name = parse_spec(spec)
    mod_name = "_cd_target_" + os.path.splitext(os.path.basename(path))[0]
    sys.path.insert(0, os.path.dirname(path))
    s = importlib.util.spec_from_file_location(mod_name, path)
    mod = importlib.util.module_from_spec(s)
    sys.modules[mod_name] = mod
    s.loader.exec_module(mod)
    factory = getattr(mod, name, None)
    if factory is None or not callable(factory):
        raise CliError(f"{path}: has no callable {name!r}")
    out = factory()
    if not isinstance(out, tuple) or not 2 <= len(out) <= 4:
        raise CliError(f"{name}() must return (model, args[, kwargs[, dynamic_shapes]]), got {type(out).__name__}")
    model, args = out[0], out[1]
    kwargs = out[2] if len(out) > 2 and out[2] is not None else {}
    dyn = out[3] if len(out) > 3 else None
    if len(out) == 3 and is_dynamic_shapes(kwargs):  # (model, args, dynamic_shapes): Dim specs are not kwargs
        kwargs, dyn = {}, out[2]
    if not isinstance(kwargs, dict):
        raise CliError(f"{name}() returned a {type(kwargs).__name__} as its third item: return (model, args, kwargs_dict) "
                       f"or (model, args, dynamic_shapes) with Dim/Dim.AUTO specs, or (model, args, kwargs, dynamic_shapes)")
    if not isinstance(args, tuple):
        args = (args,) if not isinstance(args, list) else tuple(args)
    return {"model": model, "args": args, "kwargs": kwargs, "dynamic_shapes": dyn, "module": mod}


def is_dynamic_shapes(value):
    """True when value is a dynamic_shapes spec: any Dim / Dim.AUTO / Dim.STATIC / derived dim at any
    depth of a dict/tuple/list (ints and None alone say nothing)."""
    def walk(v):
        if isinstance(v, dict):
            return any(walk(x) for x in v.values())
        if isinstance(v, (list, tuple)):
            return any(walk(x) for x in v)
        return type(v).__module__ == "torch.export.dynamic_shapes"
    return walk(value)
