"""What `bisect` runs, decided before its first run (no torch): the command and the bad-run rule taken
from a triage run (--from RUN_DIR), and the engine that drives PyTorch's compiler bisector for the
torch found in the target's Python."""
import re

from ..errors import CliError
from ..run import rundir


def apply_from(args):
    """--from RUN_DIR: the target and the bad-run rule from a triage run. Returns a note."""
    t = rundir.from_triage_run(args)
    err = t["error"] or {}
    failed = t["rc"] not in (0, None) or t["signal"] or t["timed_out"]
    what = (f"killed by {t['signal']}" if t["signal"] else "timed out" if t["timed_out"] else
            f"exit status {t['rc']}") + (f", {err.get('type')} [{err.get('category')}]" if err else "")
    if failed or args.bad_if or args.bad_if_exception:
        return f"from {args.from_dir}: the triage run failed ({what}); a run is bad the same way"
    etype = err.get("type") or ""
    if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Failed|Failure)$", etype):
        args.bad_if_exception = etype
        return f"from {args.from_dir}: exit 0 but it raised {etype}: a run is bad when it raises {etype}"
    lines = [ln.strip() for ln in (err.get("message") or "").splitlines()
             if ln.strip() and not re.match(r"^[VIWEC]\d{4} ", ln)]
    if lines:
        args.bad_if = re.escape(lines[-1][:100])
        return f"from {args.from_dir}: exit 0 but it printed {lines[-1][:100]!r}: a run is bad when its output matches that"
    raise CliError(f"--from {args.from_dir}: the triage run passed (exit 0, no error): nothing to bisect; "
                   "say what a failure looks like with --bad-if REGEX")


def engine_for(requested, info):
    """The engine to drive the bisector with (--engine; auto: ours when this torch's bisector can be read)."""
    engine = requested
    if engine == "auto":
        engine = "own" if info.get("has_env_protocol") and info.get("backends") else \
            "cli" if info.get("has_run_cli") else "api"
    if engine == "cli" and not info.get("has_run_cli"):
        raise CliError(f"--engine cli: torch {info.get('version')} has no `compiler_bisector run` (use --engine api)")
    if engine == "own" and not (info.get("has_env_protocol") and info.get("backends")):
        raise CliError(f"--engine own: cannot read the bisector of torch {info.get('version')} (use --engine api)")
    return engine
