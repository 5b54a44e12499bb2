"""One step of a bisection: run the target once, decide good/bad, log it. Exit 0 = good, 1 = bad.

Invoked by PyTorch's compiler bisector (`python -m torch._inductor.compiler_bisector run ...`)
with TORCH_BISECT_BACKEND / TORCH_BISECT_SUBSYSTEM / TORCH_BISECT_MAX in the environment, or
called in-process by the bisect_api worker. Never imports torch (the target does)."""
import argparse
import json
import os
import re
import sys
import time

from cdlib.read.frames import drop_multiline_warnings
from cdlib.run import proc

# The last line of a Python traceback: "pkg.mod.SomeError: message" (or just "SomeError").
_EXC_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Failed|Failure|Interrupt|Exit|Warning)|"
                       r"[A-Za-z_][\w.]*\.[A-Z]\w*)(?::\s?(.*))?$")


def signature(stderr_text):
    """(exception type, first line of its message) of the last traceback in stderr, or (None, None)."""
    lines = stderr_text.splitlines()
    last_tb = None
    for i, line in enumerate(lines):
        if line.startswith("Traceback (most recent call last)"):
            last_tb = i
    if last_tb is None:
        return None, None
    for line in lines[last_tb + 1:]:
        if line.startswith((" ", "\t")) or not line.strip():
            continue
        m = _EXC_LINE.match(line.rstrip())
        if m:
            msg = (m.group(2) or "").strip()
            if msg.endswith(":"):   # "BackendCompilerFailed: backend='inductor' raised:" + the cause below
                k = lines.index(line, last_tb)
                nxt = next((ln.strip() for ln in lines[k + 1:k + 4] if ln.strip()), "")
                msg = f"{msg} {nxt}".strip()
            return m.group(1), msg
    return None, None


# "file.py:12: UserWarning: ..." (+ its indented source line), glog lines, "warnings.warn(" lines
_NOISE = re.compile(r"^\s|^[VIWEC]\d{4} |^\S*:\d+: \w*Warning: |^\w*Warning: |^\[compile-debug")


def last_words(out, err):
    """What a program that exits non-zero without a traceback said last: its last stderr line that
    is not a warning / log / indented continuation line, else its last stdout line."""
    for text in (err, out):
        lines = [ln.rstrip() for ln in drop_multiline_warnings(text.splitlines()) if ln.strip() and not _NOISE.match(ln)]
        if lines:
            return lines[-1].strip()
    return None


def short_type(name):
    return name.rsplit(".", 1)[-1] if name else name


def judge(res, out, err, bad_if=None, bad_if_exception=None):
    """Decide whether one run of the target is bad. Returns (bad: bool, reason: str)."""
    if res.timed_out:
        return True, "timeout"
    if res.signal:
        return True, f"killed by {res.signal}"
    text = out + "\n" + err
    if bad_if:
        m = re.search(bad_if, text, re.MULTILINE)
        if m:
            return True, f"output matches --bad-if: {m.group(0)[:120]!r}"
    etype, emsg = signature(err)
    if bad_if_exception:
        names = {bad_if_exception, short_type(bad_if_exception)}
        if etype and (etype in names or short_type(etype) in names):
            return True, f"raised {short_type(etype)}"
        if re.search(r"\b%s\b" % re.escape(short_type(bad_if_exception)), err) and res.returncode != 0:
            return True, f"raised {short_type(bad_if_exception)}"
    if res.returncode != 0:
        why = f"exit status {res.returncode}"
        if etype:
            why += f" ({short_type(etype)}: {emsg[:150]})" if emsg else f" ({short_type(etype)})"
        else:   # no traceback: the program's own last words (never a warning or a log line)
            last = last_words(out, err)
            if last:
                why += f" ({last[:150]})"
        return True, why
    return False, "exit status 0"


def load_triage_run(run_dir):
    """A previous triage run (its report.json) -> {"argv", "rc", "signal", "timed_out", "error"
    (first error: type, message, category, source), "stdout", "stderr"}. Raises ValueError."""
    path = os.path.join(run_dir, "report.json")
    try:
        with open(path) as f:
            rep = json.load(f)
    except OSError:
        raise ValueError(f"{run_dir}: no report.json (not a run dir?)")
    except ValueError:
        raise ValueError(f"{path}: not valid JSON")
    if not str(rep.get("schema", "")).startswith("compile-debug/triage/") or not isinstance(rep.get("command"), list):
        raise ValueError(f"{run_dir}: not a triage run dir (report.json of `{rep.get('command')}`)")
    errs = rep.get("errors") or []
    arts = rep.get("artifacts") or {}
    return {"argv": rep["command"], "rc": rep.get("exit_code"), "signal": rep.get("signal"),
            "timed_out": bool(rep.get("timed_out")), "error": errs[0] if errs else None,
            "duration_s": rep.get("duration_s"), "stdout": arts.get("stdout"), "stderr": arts.get("stderr")}


def _state(cache_dir, backend, subsystem):
    """The bisector's run state / range for this step, read from its state files."""
    d = os.path.join(cache_dir, "bisect", backend or "")
    st = {}
    try:
        with open(os.path.join(d, f"{subsystem}_run_state.txt")) as f:
            st["run_state"] = f.read().strip() or None
    except OSError:
        pass
    try:
        lo = hi = None
        with open(os.path.join(d, f"{subsystem}_bisect_range.txt")) as f:
            for line in f:
                if line.startswith("low="):
                    lo = int(line.split("=", 1)[1])
                elif line.startswith("high="):
                    hi = int(line.split("=", 1)[1])
        if lo is not None and hi is not None:
            st["range"] = [lo, hi]
    except (OSError, ValueError):
        pass
    return st


def step(argv, *, log_dir, timeout, bad_if=None, bad_if_exception=None, env_add=None, cwd=None):
    """Run the target once with the bisector's environment; append one JSON line to
    <log_dir>/steps.jsonl; return True when good."""
    os.makedirs(log_dir, exist_ok=True)
    steps_path = os.path.join(log_dir, "steps.jsonl")
    n = 0
    if os.path.exists(steps_path):
        with open(steps_path) as f:
            n = sum(1 for _ in f)
    env = dict(env_add or {})
    backend = env.get("TORCH_BISECT_BACKEND", os.environ.get("TORCH_BISECT_BACKEND"))
    subsystem = env.get("TORCH_BISECT_SUBSYSTEM", os.environ.get("TORCH_BISECT_SUBSYSTEM"))
    # the target gets the user's PYTHONPATH back (ours was only for this module)
    if "CD_ORIG_PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["CD_ORIG_PYTHONPATH"] or None
        env["CD_ORIG_PYTHONPATH"] = None
    out_p = os.path.join(log_dir, f"step{n:02d}.stdout")
    err_p = os.path.join(log_dir, f"step{n:02d}.stderr")
    t0 = time.time()
    res = proc.run(argv, env_add=env, cwd=cwd, timeout=timeout, stdout_path=out_p, stderr_path=err_p)
    out, err = res.read_stdout(), res.read_stderr()
    bad, reason = judge(res, out, err, bad_if, bad_if_exception)
    etype, emsg = signature(err)
    cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR") or env.get("TORCHINDUCTOR_CACHE_DIR") or ""
    rec = {"step": n, "backend": backend, "subsystem": subsystem,
           "max": env.get("TORCH_BISECT_MAX", os.environ.get("TORCH_BISECT_MAX")),
           "bad": bad, "reason": reason, "returncode": res.returncode, "signal": res.signal,
           "timed_out": res.timed_out, "exc_type": short_type(etype), "exc_message": (emsg or "")[:300],
           "duration_s": round(time.time() - t0, 2), "stdout": out_p, "stderr": err_p}
    if subsystem and cache:
        rec.update(_state(cache, backend, subsystem))
    with open(steps_path, "a") as f:
        f.write(json.dumps(rec) + "\n")
    return not bad


def _kill_target_on_sigterm():
    """Our parent (the bisector) is killed with its process group on timeout / Ctrl-C, but the
    target runs in its own session: turn SIGTERM into KeyboardInterrupt so proc.run kills it."""
    import signal

    def handler(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, handler)


def main(argv=None):
    _kill_target_on_sigterm()
    p = argparse.ArgumentParser()
    p.add_argument("--log-dir", required=True)
    p.add_argument("--timeout", type=float, default=None)
    p.add_argument("--bad-if")
    p.add_argument("--bad-if-exception")
    p.add_argument("--cwd")
    p.add_argument("target", nargs=argparse.REMAINDER)
    a = p.parse_args(argv)
    target = a.target[1:] if a.target and a.target[0] == "--" else a.target
    good = step(target, log_dir=a.log_dir, timeout=a.timeout, bad_if=a.bad_if,
                bad_if_exception=a.bad_if_exception, cwd=a.cwd)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
