"""Worker programs that run in a subprocess and may import torch: the parent CLI process never
does. Start one with cdlib.run.proc.run_worker("name", [...]); it runs `python -m cdlib.run.workers.name`.
A worker writes its result as JSON to the path given by --result and exits 0, even when the
thing it tried failed (the failure is data); a non-zero exit means the worker itself broke."""


def startup_code(module_file, func, *args):
    """The python statement the startup hook (cdlib.run.proc.startup_env [{"code": ...}]) runs inside the user's
    program: load the hooks module at module_file by path and call func(*args). One loader for every *_hooks
    module (compile-time, the AOTI input check, the never-ran compile check)."""
    import os
    name = "_cd_" + os.path.splitext(os.path.basename(module_file))[0]
    return ("import importlib.util as _u\n"
            f"_s = _u.spec_from_file_location({name!r}, {os.path.abspath(module_file)!r})\n"
            "_m = _u.module_from_spec(_s); _s.loader.exec_module(_m)\n"
            f"_m.{func}(*{tuple(args)!r})\n")
