"""Worker: probe the Python/torch/compiler environment; write JSON to --result.
Runs in a subprocess so the CLI itself never imports torch."""
import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
import traceback

CONFIG_MODULES = ("torch._dynamo.config", "torch._inductor.config", "torch._functorch.config")


def _config_values():
    import importlib
    out = {}
    for name in CONFIG_MODULES:
        try:
            mod = importlib.import_module(name)
            for k, v in mod.get_config_copy().items():
                if isinstance(v, (set, frozenset)):
                    v = sorted(map(repr, v))
                try:
                    json.dumps(v)
                except (TypeError, ValueError):
                    v = repr(v)
                out[f"{name}.{k}"] = v
        except Exception:  # config module missing on this version
            pass
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--result", required=True)
    ap.add_argument("--config-only", action="store_true")
    ap.add_argument("--smoke", action="store_true")
    a = ap.parse_args()
    info = {"python": sys.version.split()[0], "executable": sys.executable, "platform": platform.platform()}
    try:
        import torch
    except Exception as e:
        info["torch_error"] = f"{type(e).__name__}: {e}"
        json.dump(info, open(a.result, "w"))
        return
    if a.config_only:
        json.dump({"config": _config_values()}, open(a.result, "w"))
        return
    info["torch"] = torch.__version__
    info["torch_git"] = getattr(torch.version, "git_version", None)
    info["torch_cuda_build"] = torch.version.cuda
    info["cuda_available"] = torch.cuda.is_available()
    if info["cuda_available"]:
        info["gpus"] = [{"name": torch.cuda.get_device_name(i),
                         "capability": ".".join(map(str, torch.cuda.get_device_capability(i)))}
                        for i in range(torch.cuda.device_count())]
    try:
        import triton
        info["triton"] = triton.__version__
    except Exception:
        info["triton"] = None
    try:
        from torch._inductor import cpp_builder
        cxx = cpp_builder.get_cpp_compiler()
        info["cxx"] = cxx
        info["cxx_path"] = shutil.which(cxx) if not os.path.isabs(cxx) else cxx
        if info["cxx_path"]:
            v = subprocess.run([info["cxx_path"], "--version"], capture_output=True, text=True, timeout=20)
            info["cxx_version"] = (v.stdout or v.stderr).splitlines()[0] if (v.stdout or v.stderr) else None
    except Exception as e:
        info["cxx"] = None
        info["cxx_error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    inc = sysconfig.get_paths().get("include")
    info["python_h"] = os.path.join(inc, "Python.h") if inc and os.path.exists(os.path.join(inc, "Python.h")) else None
    try:
        from torch._inductor.runtime.cache_dir_utils import cache_dir
        info["inductor_cache_dir"] = cache_dir()
    except Exception:
        info["inductor_cache_dir"] = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    info["config"] = _config_values()
    if a.smoke:
        try:
            import time
            t0 = time.monotonic()
            f = torch.compile(lambda x: (x.sin() + 1).relu())
            x = torch.randn(16)
            ok = torch.allclose(f(x), (x.sin() + 1).relu())
            info["smoke"] = {"ok": bool(ok), "seconds": round(time.monotonic() - t0, 2), "device": "cpu"}
        except Exception as e:
            msg = str(e).strip().splitlines()
            info["smoke"] = {"ok": False, "error": f"{type(e).__name__}: {msg[0] if msg else ''}",
                             "trace": traceback.format_exc()[-4000:]}
    with open(a.result, "w") as fh:
        json.dump(info, fh, default=str)


if __name__ == "__main__":
    main()
