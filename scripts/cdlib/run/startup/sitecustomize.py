"""compile-debug startup hook: applies settings to the user's unmodified program.

The tool puts this directory first on PYTHONPATH and names a JSON file in COMPILE_DEBUG_STARTUP.
Python imports this module at start-up (site.py); it first runs the user's own sitecustomize, if
one exists further down sys.path, then waits for `import torch` to finish and applies, in order:
  {"stance": "force_eager"}                      torch.compiler.set_stance(...)
  {"config": {"torch._dynamo.config.NAME": V}}   setattr on the config module (dotted, any module)
  {"code": "python statements"}                  exec'd with torch imported (e.g. mark_dynamic wrappers)
Nothing is imported before the program imports torch, so programs that never import torch (and
torch's own compile-worker subprocesses) pay nothing. A step that names something the program
only creates later (transformers adds logging.Logger.warning_once when imported; a module not
imported yet) is retried once when Dynamo starts its first compile (marker file + ".deferred").
Failures are printed as one line "[compile-debug startup] ..." on stderr and do not stop the program."""
import atexit
import importlib
import importlib.abc
import json
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _chain_user_sitecustomize():
    """Import the next sitecustomize on sys.path (the user's), as if ours were not there."""
    saved_path, saved_mod = list(sys.path), sys.modules.pop("sitecustomize", None)
    try:
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
        import importlib.util
        spec = importlib.util.find_spec("sitecustomize")
        if spec is not None and spec.origin and os.path.dirname(os.path.abspath(spec.origin)) != _HERE:
            importlib.import_module("sitecustomize")
    except Exception as e:  # the user's own hook failing is theirs to see, as without us
        print(f"[compile-debug startup] your sitecustomize raised {type(e).__name__}: {e}", file=sys.stderr)
    finally:
        sys.path[:] = saved_path
        if saved_mod is not None:
            sys.modules["sitecustomize"] = saved_mod


def _load_settings():
    path = os.environ.get("COMPILE_DEBUG_STARTUP")
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"[compile-debug startup] cannot read {path}: {e}", file=sys.stderr)
        return None


def _set_dotted(name, value):
    """Set a dotted setting: the longest importable module, then attributes down to the last one (a config
    module's nested group: torch._inductor.config.cpp.simdlen is `simdlen` of the module's `cpp`)."""
    parts = name.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
            break
        except ImportError:
            if i == 1:
                raise
    owner = ".".join(parts[:i])
    for p in parts[i:-1]:
        obj = getattr(obj, p)     # AttributeError: retried at the first compile, as a module not imported yet
        owner += "." + p
    attr = parts[-1]
    if not hasattr(obj, attr):
        raise LookupError(f"{owner} has no setting {attr!r}")   # a wrong name: not retried later
    cur = getattr(obj, attr)
    if isinstance(cur, set) and isinstance(value, list):  # e.g. reorderable_logging_functions
        value = cur | set(_resolve(v) for v in value)
    setattr(obj, attr, value)


def _resolve(v):
    """'logging.Logger.debug' -> the object, for set-valued configs that hold functions."""
    if isinstance(v, str) and "." in v:
        parts = v.split(".")
        for i in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:i]))
            except ImportError:
                continue
            for p in parts[i:]:
                obj = getattr(obj, p)
            return obj
    return v


def _apply_step(torch, step):
    if "stance" in step:
        torch.compiler.set_stance(step["stance"])
    if "config" in step:
        for k, v in step["config"].items():
            _set_dotted(k, v)
    if "code" in step:
        exec(compile(step["code"], "<compile-debug startup>", "exec"), {"torch": torch})


def _failed(step, e):
    print(f"[compile-debug startup] {json.dumps(step)[:200]} failed: {type(e).__name__}: {e}", file=sys.stderr)


def _retry_at_first_compile(torch, steps, marker=None):
    """Steps that name what a library adds only when the program imports it (transformers puts
    logging.Logger.warning_once there; a function of a module not imported yet) are retried once
    when Dynamo starts its first compile, before it traces anything. steps: [(step, first error)]."""
    try:
        handler = importlib.import_module("torch._dynamo.callback").callback_handler
    except Exception as e:  # noqa: BLE001  (no callback API: report the first error now)
        for step, first in steps:
            _failed(step, first if first else e)
        return
    state = {"done": False}

    def retry(*_):
        # runs inside torch's loop over the start callbacks: never remove ourselves from that list
        if state["done"]:
            return
        state["done"] = True
        for step, _first in steps:
            try:
                _apply_step(torch, step)
            except Exception as e:  # noqa: BLE001
                _failed(step, e)
                continue
            if marker:
                try:
                    with open(marker + ".deferred", "a", encoding="utf-8") as f:
                        f.write(json.dumps(step) + "\n")
                except OSError:
                    pass

    def never():
        # quiet when another process of the run applied it (e.g. a data-loader worker that never compiles)
        if state["done"] or (marker and os.path.exists(marker + ".deferred")):
            return
        for step, first in steps:
            _failed(step, RuntimeError(f"not applied ({type(first).__name__}: {first}); still missing when "
                                       "the program ended without a compile after start-up"))
    handler.register_start_callback(retry)
    atexit.register(never)


def apply(settings):
    """Apply the settings (torch is imported). Each step reports its own failure and goes on."""
    import torch  # noqa: F401  (already imported by the program)
    later = []
    for step in settings.get("steps", []):
        try:
            _apply_step(torch, step)
        except (AttributeError, ImportError) as e:
            if "stance" in step:
                _failed(step, e)
            else:
                later.append((step, e))
        except Exception as e:
            _failed(step, e)
    if later:
        _retry_at_first_compile(torch, later, settings.get("applied_marker"))
    marker = settings.get("applied_marker")
    if marker:
        try:
            with open(marker, "a", encoding="utf-8") as f:
                f.write(f"{os.getpid()}\n")
        except OSError:
            pass


class _AfterTorchImport(importlib.abc.MetaPathFinder):
    """Wraps torch's loader so that `apply` runs right after torch/__init__.py finishes."""

    def __init__(self, settings):
        self.settings, self.done = settings, False

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" or self.done:
            return None
        self.done = True
        sys.meta_path.remove(self)
        import importlib.util
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None:
            return spec
        loader, settings = spec.loader, self.settings

        class _Loader(importlib.abc.Loader):
            def create_module(self, spec):
                return loader.create_module(spec)

            def exec_module(self, module):
                loader.exec_module(module)
                apply(settings)

        spec.loader = _Loader()
        return spec


_chain_user_sitecustomize()
_settings = _load_settings()
if _settings and _settings.get("steps"):
    if "torch" in sys.modules:
        apply(_settings)
    else:
        sys.meta_path.insert(0, _AfterTorchImport(_settings))
