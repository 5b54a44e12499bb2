"""A warm interpreter for `minify --source` (run by the target's own Python, cdlib/warm.py starts it).

It imports torch, Dynamo, Inductor and the program's third-party imports once, then runs each query
in a fork of itself: the fork starts its own session, takes the query's environment, working
directory, argv and output files, and runs the program as `python prog.py ...` would
(runpy, `__main__`). A query costs the program's own work, not the imports (60-80% of a small
program's run on a CPU).

Protocol (raw fds, one JSON object per line): argv[1] is a JSON list of modules to import first.
-> {"ready": true, "threads": N}   (N > 1: an import started threads; forking would lose them)
<- {"argv": [prog, args...], "env": {k: v|null}, "cwd": dir, "stdout": path, "stderr": path,
    "stdin": path|null}
-> {"pid": pid}, then {"status": waitstatus} when the fork exits.
EOF on stdin (the CLI ended, however it ended): the running fork's group is killed, and the zygote exits.
"""
import json
import os
import select
import signal
import sys
import threading


def _send(obj):
    os.write(1, (json.dumps(obj) + "\n").encode())


_buf = bytearray()


def _read_line():
    """The next request, or None at EOF."""
    while b"\n" not in _buf:
        chunk = os.read(0, 65536)
        if not chunk:
            return None
        _buf.extend(chunk)
    i = _buf.index(b"\n")
    line = bytes(_buf[:i])
    del _buf[:i + 1]
    return json.loads(line)


def _die_with_parent():
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
    except Exception:   # noqa: BLE001  (not Linux: the zygote still kills the group on EOF)
        pass


def _exit_code(e):
    code = e.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    sys.stderr.write(f"{code}\n")   # sys.exit("message"): Python prints it and exits 1
    return 1


def _reseed():
    """Every fork of every zygote starts from one random state. A fresh interpreter seeds torch's default
    generator (and Python's, numpy's) differently in each process; forks of one zygote would all share
    that zygote's draws, and the compiled and the eager zygote would differ: a program that draws without
    seeding would see other inputs compiled than eager, and its difference would pass for the bug."""
    import random
    random.seed(0)
    for name, call in (("torch", lambda m: m.manual_seed(0)), ("numpy", lambda m: m.random.seed(0))):
        m = sys.modules.get(name)
        if m is not None:
            try:
                call(m)
            except Exception:   # noqa: BLE001  (a partly imported module: the program imports it again)
                pass


def _child(req):
    os.setsid()
    _die_with_parent()
    for k, v in req["env"].items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    for fd, path, flags in ((0, req.get("stdin") or os.devnull, os.O_RDONLY),
                            (1, req["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                            (2, req["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
        new = os.open(path, flags, 0o644)
        os.dup2(new, fd)
        os.close(new)
    os.chdir(req["cwd"])
    script = os.path.abspath(req["argv"][0])
    sys.argv = [script] + list(req["argv"][1:])
    sys.path[0] = os.path.dirname(script)
    if os.environ.get("TORCH_TRACE"):   # this query's trace dir: torch read the variable at import
        try:
            import torch._logging._internal as L
            L.LOG_TRACE_HANDLER = None
            L._init_logs()
        except Exception:   # noqa: BLE001  (then no trace: the CLI's check of the original catches it)
            pass
    _reseed()
    import runpy
    import traceback
    code = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        code = _exit_code(e)
    except BaseException as e:   # noqa: BLE001  (what the interpreter prints: from the program's frames)
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != script:
            tb = tb.tb_next
        traceback.print_exception(type(e), e, tb or e.__traceback__)
        code = 1
    for s in (sys.stdout, sys.stderr):
        try:
            s.flush()
        except Exception:   # noqa: BLE001
            pass
    sys.exit(code)   # a normal interpreter exit: atexit handlers, non-daemon threads joined


def main():
    # as `python prog.py` from the scratch copy would see it: this file's directory (the CLI's workers,
    # export.py, perf.py ...) is not on the path of what gets imported
    if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
        sys.path[0] = os.getcwd()
    for name in json.loads(sys.argv[1]) if len(sys.argv) > 1 else []:
        try:
            __import__(name)
        except BaseException:   # noqa: BLE001  (the program imports it again, and fails there if it must)
            pass
    sys.stdout.flush()
    sys.stderr.flush()
    _send({"ready": True, "threads": threading.active_count()})
    while True:
        req = _read_line()
        if req is None:
            return
        pid = os.fork()
        if pid == 0:
            _child(req)   # never returns
        _send({"pid": pid})
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                _send({"status": status})
                break
            r, _, _ = select.select([0], [], [], 0.02)
            if r:
                chunk = os.read(0, 65536)
                if not chunk:   # the CLI is gone: end the query with it
                    try:
                        os.killpg(pid, signal.SIGKILL)
                    except OSError:
                        pass
                    os.waitpid(pid, 0)
                    return
                _buf.extend(chunk)


if __name__ == "__main__":
    main()
