"""Warm interpreters for `minify --source`: a zygote (workers/zygote.py, run by the target's Python)
imports torch and the program's imports once; each query runs in a fork of it. `Zygote.run` returns
the proc.ProcResult a cold `proc.run` would: exit status, signal, timeout (the fork's session is
killed), output files. The CLI's end (Ctrl-C, a kill) ends the zygote and its running query: the
zygote kills the query when its stdin closes."""
import ast
import json
import os
import select
import signal
import subprocess
import time

from . import proc

ZYGOTE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "workers", "zygote.py")
BASE_IMPORTS = ["torch", "torch._dynamo", "torch._inductor.compile_fx"]


class WarmError(Exception):
    """The zygote could not start or answer: run the query cold."""


def imports_of(text, prog_dir):
    """The modules a program imports at its top level that do not live beside it (those are read from
    the scratch copy at each run): what the zygote imports first."""
    names = []
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return list(BASE_IMPORTS)
    for node in tree.body:
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    local = {os.path.splitext(n)[0] for n in os.listdir(prog_dir)} if os.path.isdir(prog_dir) else set()
    out = list(BASE_IMPORTS)
    for n in names:
        if n.split(".")[0] not in local and n not in out and n != "__main__":
            out.append(n)
    return out


class Zygote:
    def __init__(self, python, env_add, cwd, log_path, imports, timeout):
        self.python = python
        env = dict(os.environ)
        for k, v in (env_add or {}).items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = str(v)
        env.update(proc.thread_env(env))   # OpenMP reads it when torch loads: the forks keep the zygote's
        self.log = open(log_path, "ab")
        try:
            self.p = subprocess.Popen([python, ZYGOTE, json.dumps(imports)], env=env, cwd=cwd,
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                      start_new_session=True)
        except OSError as e:
            self.log.close()
            raise WarmError(f"cannot start {python}: {e.strerror}")
        self.buf = b""
        self.pid = None
        msg = self._read(timeout)
        if not msg.get("ready"):
            self.close()
            raise WarmError("the warm interpreter did not start")
        if msg.get("threads", 1) > 1:   # a fork keeps only the forking thread
            self.close()
            raise WarmError(f"importing the program's modules started {msg['threads'] - 1} thread(s)")

    def _read(self, timeout):
        """The zygote's next message; None when timeout passes first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        fd = self.p.stdout.fileno()
        while b"\n" not in self.buf:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return None
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                raise WarmError(f"the warm interpreter ended (exit {self.p.wait()})")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def _kill_query(self):
        if self.pid:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except OSError:
                pass

    def run(self, prog_argv, *, env_add, cwd, timeout, stdout_path, stderr_path):
        """Run `python prog_argv...` in a fork. -> proc.ProcResult (argv as the cold run's would be)."""
        req = {"argv": list(prog_argv), "env": {k: (None if v is None else str(v)) for k, v in env_add.items()},
               "cwd": cwd, "stdout": stdout_path, "stderr": stderr_path,
               "stdin": os.environ.get(proc.STDIN_VAR) or None}
        t0 = time.monotonic()
        timed_out = False
        try:
            try:
                self.p.stdin.write((json.dumps(req) + "\n").encode())
                self.p.stdin.flush()
            except OSError as e:
                raise WarmError(f"the warm interpreter is gone ({e})")
            self.pid = self._read(30)["pid"]
            msg = self._read(timeout)
            if msg is None:   # timed out: the fork's session goes, the zygote reaps it
                timed_out = True
                try:
                    os.killpg(self.pid, signal.SIGTERM)
                except OSError:
                    pass
                msg = self._read(3) or (self._kill_query() or self._read(30))
            self._kill_query()   # what the program left running (compile workers) ends with it
            self.pid = None
        except BaseException:
            self._kill_query()
            self.close()
            raise
        status = (msg or {}).get("status")
        if status is None:
            self.close()
            raise WarmError("the warm interpreter did not report the query's end")
        rc = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else \
            (-(status & 0x7F) if status & 0x7F else status >> 8)
        sig = None
        if rc < 0:
            try:
                sig = signal.Signals(-rc).name
            except ValueError:
                sig = f"signal {-rc}"
        for path in (stdout_path, stderr_path):
            proc.trim_output(path)
        return proc.ProcResult(argv=[self.python] + list(prog_argv), returncode=rc,
                               duration_s=round(time.monotonic() - t0, 3), timed_out=timed_out, signal=sig,
                               stdout_path=stdout_path, stderr_path=stderr_path)

    def close(self):
        if self.p.poll() is None:
            try:
                self.p.stdin.close()   # the zygote kills a running query and exits
            except OSError:
                pass
            try:
                self.p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.p.pid, signal.SIGKILL)
                except OSError:
                    pass
                self.p.wait()
        self.log.close()
