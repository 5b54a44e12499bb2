"""minify's graph stage, reproducing the failure: one run of the target judged by failure_of, the triage
run (TORCH_TRACE and the minifier's dump on, analysed like `triage` does), and the LEVEL=4 dump run
started next to it in case the failure turns out to be wrong results. No torch import."""
import os

from ..run import proc
from .minify_graph import exc_names, failure_of
from .runs import run_and_analyze


def run_target(argv, run_dir, tag, env, timeout, cwd=None, started=None):
    res = proc.run(argv, env_add=env, cwd=cwd, timeout=timeout, stdout_path=os.path.join(run_dir, f"{tag}.stdout"),
                   stderr_path=os.path.join(run_dir, f"{tag}.stderr"), started=started)
    return res, failure_of(res)


def triage(argv, run_dir, env, timeout):
    """One run with TORCH_TRACE (+ the dump env), analysed. Returns (failure dict with its category, stderr path)."""
    tdir = os.path.join(run_dir, "triage")
    os.makedirs(tdir, exist_ok=True)
    rep = run_and_analyze(argv, tdir, timeout=timeout, env_add=env, tlparse=False)
    err = rep.errors[0] if rep.errors else None
    fail = {"rc": rep.exit_code, "signal": rep.signal, "timed_out": rep.timed_out,
            "type": err.type if err else None, "message": err.message if err else None,
            "names": exc_names(err.type, err.message) if err else [], "duration_s": rep.duration_s,
            "category": err.category if err else None, "title": err.title if err else None,
            "location": err.location.short() if err and err.location else None}
    stderr_path = rep.artifacts.get("stderr") or os.path.join(tdir, "target.stderr")
    return fail, stderr_path


class Speculative:
    """The LEVEL=4 dump run (needed when the failure turns out to be wrong results), started next
    to the triage run; cancelled as soon as the triage run shows another kind."""

    def __init__(self, argv, run_dir, base_env, after, timeout):
        import threading
        self.debug = os.path.join(run_dir, "debug_accuracy")
        self.cwd = os.path.join(run_dir, "accuracy_cwd")   # level 4 copies repro.py into the cwd
        for d in (self.debug, self.cwd):
            os.makedirs(d, exist_ok=True)
        env = dict(base_env, TORCH_COMPILE_DEBUG_DIR=self.debug, TORCHDYNAMO_REPRO_AFTER=after,
                   TORCHDYNAMO_REPRO_LEVEL="4")
        self.popen, self.out, self.cancelled = None, None, False

        def work():
            try:
                self.out = run_target(argv, run_dir, "dump", env, timeout, cwd=self.cwd, started=self._started)
            except Exception as e:  # noqa: BLE001
                self.out = e
        self.thread = threading.Thread(target=work, daemon=True)
        self.thread.start()

    def _started(self, p):
        self.popen = p
        if self.cancelled:
            proc.kill_group(p, grace=1.0)

    def cancel(self):
        self.cancelled = True
        if self.popen is not None:
            proc.kill_group(self.popen, grace=1.0)
        self.thread.join(timeout=15)

    def wait(self):
        self.thread.join()
        if isinstance(self.out, Exception):
            raise self.out
        return self.out
